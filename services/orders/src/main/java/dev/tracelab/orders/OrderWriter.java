package dev.tracelab.orders;

import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;

import javax.sql.DataSource;

import dev.tracelab.orders.Model.Customer;
import dev.tracelab.orders.Model.Line;
import dev.tracelab.orders.Model.NewOrder;
import dev.tracelab.orders.Model.Order;
import dev.tracelab.settings.Settings;
import jakarta.enterprise.context.ApplicationScoped;
import org.jboss.logging.Logger;

/**
 * How an order reaches PostgreSQL: the chatty persistence of case study 000 and
 * its fix, side by side. ORDERS_PERSISTENCE picks one at startup. Both write the
 * same rows, answer the same order and refuse the same bad orders, with nothing
 * written. Runs on a worker thread: JDBC blocks.
 */
@ApplicationScoped
public class OrderWriter {

    public enum Mode {
        CHATTY, SINGLE_ROUND_TRIP;

        String label() {
            return Settings.label(this);
        }
    }

    private static final Logger log = Logger.getLogger(OrderWriter.class);
    private static final String NOT_ENOUGH_STOCK = "23514"; // check_violation: products.stock >= 0

    private final DataSource db;
    private final Mode mode;

    OrderWriter(DataSource db, OrdersSettings settings) {
        this.db = db;
        this.mode = settings.persistence();
        log.infof("Persisting orders with ORDERS_PERSISTENCE=%s", this.mode.label());
    }

    public Order create(Customer customer, NewOrder order) {
        try {
            return switch (mode) {
                case CHATTY -> statementByStatement(customer, order);
                case SINGLE_ROUND_TRIP -> oneStatement(customer, order);
            };
        } catch (SQLException e) {
            for (SQLException s = e; s != null; s = s.getNextException()) {
                if (NOT_ENOUGH_STOCK.equals(s.getSQLState())) {
                    throw new Rejected(409, "not enough stock for this order");
                }
            }
            throw new IllegalStateException("cannot store the order: " + e.getMessage(), e);
        }
    }

    // The pathology: one round trip per step, each waiting for the one before.
    // For the lab's 3-line orders that is 7 statements (3 product reads, the
    // order, its lines, the stock, the audit row), then the COMMIT. The case
    // paid about 14.5 ms per visit under load, 93% of a 109 ms POST.
    private Order statementByStatement(Customer customer, NewOrder order) throws SQLException {
        try (Connection c = db.getConnection()) {
            c.setAutoCommit(false);
            try {
                Order created = chattyInsert(c, customer, order);
                c.commit();
                return created;
            } catch (SQLException | RuntimeException e) {
                c.rollback();
                throw e;
            } finally {
                c.setAutoCommit(true);
            }
        }
    }

    private Order chattyInsert(Connection c, Customer customer, NewOrder order) throws SQLException {
        List<String> names = new ArrayList<>();
        List<Long> prices = new ArrayList<>();
        try (PreparedStatement read = c.prepareStatement("SELECT name, price_cents FROM products WHERE id = ?")) {
            for (long productId : order.productIds()) {
                read.setLong(1, productId);
                try (ResultSet rs = read.executeQuery()) {
                    if (!rs.next()) {
                        throw Rejected.unprocessable("unknown product " + productId);
                    }
                    names.add(rs.getString(1));
                    prices.add(rs.getLong(2));
                }
            }
        }
        List<Line> lines = Model.priced(order, names, prices);
        long total = lines.stream().mapToLong(Line::lineTotalCents).sum();

        long orderId;
        try (PreparedStatement insert = c.prepareStatement(
                "INSERT INTO orders (customer_id, customer_name, total_cents) VALUES (?, ?, ?) RETURNING id")) {
            insert.setLong(1, customer.id());
            insert.setString(2, customer.name());
            insert.setLong(3, total);
            try (ResultSet rs = insert.executeQuery()) {
                rs.next();
                orderId = rs.getLong(1);
            }
        }
        try (PreparedStatement insert = c.prepareStatement("INSERT INTO order_lines "
                + "(order_id, line_no, product_id, product_name, quantity, unit_price_cents) VALUES (?, ?, ?, ?, ?, ?)")) {
            for (Line l : lines) {
                insert.setLong(1, orderId);
                insert.setInt(2, l.lineNo());
                insert.setLong(3, l.productId());
                insert.setString(4, l.productName());
                insert.setInt(5, l.quantity());
                insert.setLong(6, l.unitPriceCents());
                insert.addBatch();
            }
            insert.executeBatch();
        }
        // In product id order, as every order locks them: two orders sharing
        // products then queue instead of deadlocking.
        try (PreparedStatement update = c.prepareStatement("UPDATE products SET stock = stock - ? WHERE id = ?")) {
            for (Line l : lines.stream().sorted(Comparator.comparingLong(Line::productId)).toList()) {
                update.setInt(1, l.quantity());
                update.setLong(2, l.productId());
                update.addBatch();
            }
            update.executeBatch();
        }
        try (PreparedStatement audit = c.prepareStatement("INSERT INTO order_audit (order_id, event, detail) VALUES (?, 'created', ?)")) {
            audit.setLong(1, orderId);
            audit.setString(2, "customer " + customer.id() + ", " + lines.size() + " lines, " + total + " cents");
            audit.executeUpdate();
        }
        return new Order(orderId, customer.id(), customer.name(), lines, total);
    }

    // The fix: the same effects as one statement, so one round trip whatever the
    // number of lines. Data-modifying CTEs share one snapshot and one implicit
    // transaction, so a single statement needs no BEGIN/COMMIT: it is atomic.
    // Nothing is inserted unless every product exists (the count check), and a
    // stock underflow fails the statement as a whole.
    private static final String CREATE_ORDER = """
            WITH input AS (
                SELECT product_id, quantity, line_no
                FROM unnest(?::bigint[], ?::int[]) WITH ORDINALITY AS l(product_id, quantity, line_no)
            ), priced AS (
                SELECT i.line_no, i.product_id, p.name, i.quantity, p.price_cents
                FROM input i JOIN products p ON p.id = i.product_id
            ), new_order AS (
                INSERT INTO orders (customer_id, customer_name, total_cents)
                SELECT ?::bigint, ?::text, sum(price_cents * quantity) FROM priced
                HAVING count(*) = (SELECT count(*) FROM input)
                RETURNING id, total_cents
            ), new_lines AS (
                INSERT INTO order_lines (order_id, line_no, product_id, product_name, quantity, unit_price_cents)
                SELECT o.id, p.line_no, p.product_id, p.name, p.quantity, p.price_cents
                FROM new_order o CROSS JOIN priced p
            ), locked AS (
                SELECT id FROM products
                WHERE id IN (SELECT product_id FROM input) AND EXISTS (SELECT 1 FROM new_order)
                ORDER BY id FOR UPDATE
            ), stock AS (
                UPDATE products p SET stock = p.stock - d.quantity
                FROM (SELECT product_id, sum(quantity) AS quantity FROM input GROUP BY product_id) d
                WHERE p.id = d.product_id AND p.id IN (SELECT id FROM locked)
            ), audit AS (
                INSERT INTO order_audit (order_id, event, detail)
                SELECT id, 'created', 'customer ' || ?::bigint || ', ' || (SELECT count(*) FROM input) || ' lines, ' || total_cents || ' cents'
                FROM new_order
            )
            SELECT (SELECT id FROM new_order), p.line_no, p.name, p.price_cents
            FROM priced p ORDER BY p.line_no
            """;

    private Order oneStatement(Customer customer, NewOrder order) throws SQLException {
        try (Connection c = db.getConnection(); PreparedStatement st = c.prepareStatement(CREATE_ORDER)) {
            Long[] productIds = order.lines().stream().map(Model.NewLine::productId).toArray(Long[]::new);
            Integer[] quantities = order.lines().stream().map(Model.NewLine::quantity).toArray(Integer[]::new);
            Array ids = c.createArrayOf("bigint", productIds);
            Array qty = c.createArrayOf("int", quantities);
            st.setArray(1, ids);
            st.setArray(2, qty);
            st.setLong(3, customer.id());
            st.setString(4, customer.name());
            st.setLong(5, customer.id());

            Long orderId = null;
            Map<Integer, String> names = new HashMap<>();
            Map<Integer, Long> prices = new HashMap<>();
            try (ResultSet rs = st.executeQuery()) {
                while (rs.next()) {
                    long id = rs.getLong(1);
                    orderId = rs.wasNull() ? null : id;
                    names.put(rs.getInt(2), rs.getString(3));
                    prices.put(rs.getInt(2), rs.getLong(4));
                }
            }
            if (orderId == null) {
                // Name the first unknown product in line order, as the chatty reads do.
                int missing = IntStream.rangeClosed(1, productIds.length).filter(n -> !names.containsKey(n)).findFirst().orElseThrow();
                throw Rejected.unprocessable("unknown product " + productIds[missing - 1]);
            }
            List<String> lineNames = new ArrayList<>();
            List<Long> linePrices = new ArrayList<>();
            for (int n = 1; n <= productIds.length; n++) {
                lineNames.add(names.get(n));
                linePrices.add(prices.get(n));
            }
            List<Line> lines = Model.priced(order, lineNames, linePrices);
            return new Order(orderId, customer.id(), customer.name(), lines, lines.stream().mapToLong(Line::lineTotalCents).sum());
        }
    }
}

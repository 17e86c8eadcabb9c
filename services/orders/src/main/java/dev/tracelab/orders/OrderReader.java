package dev.tracelab.orders;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;

import javax.sql.DataSource;

import dev.tracelab.orders.Model.Invoice;
import dev.tracelab.orders.Model.Line;
import dev.tracelab.orders.Model.Order;
import jakarta.enterprise.context.ApplicationScoped;

/**
 * GET /orders/{id}: one query, then CPU work. The case's GET was bound by CPU
 * (287 req/s at 99% of half a core, about 1.7 ms of CPU each) where its POST
 * waited off-CPU. The case does not say what that work was; here it is signing
 * the rendered invoice with ORDERS_INVOICE_ROUNDS rounds of SHA-256, whose
 * default costs about that much on this machine's cores.
 */
@ApplicationScoped
public class OrderReader {

    private final DataSource db;
    private final int rounds;

    OrderReader(DataSource db, OrdersSettings settings) {
        this.db = db;
        this.rounds = settings.invoiceRounds();
    }

    public Invoice invoice(long id) {
        Order order = read(id);
        return new Invoice(order, sign(render(order)));
    }

    private Order read(long id) {
        try (Connection c = db.getConnection(); PreparedStatement st = c.prepareStatement("""
                SELECT o.customer_id, o.customer_name, o.total_cents,
                       l.line_no, l.product_id, l.product_name, l.quantity, l.unit_price_cents
                FROM orders o JOIN order_lines l ON l.order_id = o.id
                WHERE o.id = ? ORDER BY l.line_no""")) {
            st.setLong(1, id);
            try (ResultSet rs = st.executeQuery()) {
                List<Line> lines = new ArrayList<>();
                long customerId = 0;
                String customerName = null;
                long total = 0;
                while (rs.next()) {
                    customerId = rs.getLong(1);
                    customerName = rs.getString(2);
                    total = rs.getLong(3);
                    int quantity = rs.getInt(7);
                    long price = rs.getLong(8);
                    lines.add(new Line(rs.getInt(4), rs.getLong(5), rs.getString(6), quantity, price, quantity * price));
                }
                if (lines.isEmpty()) {
                    throw new Rejected(404, "no order " + id);
                }
                return new Order(id, customerId, customerName, lines, total);
            }
        } catch (SQLException e) {
            throw new IllegalStateException("cannot read order " + id + ": " + e.getMessage(), e);
        }
    }

    private static String render(Order o) {
        StringBuilder b = new StringBuilder("Invoice for order ").append(o.id())
                .append('\n').append(o.customerName()).append(" (customer ").append(o.customerId()).append(")\n");
        for (Line l : o.lines()) {
            b.append(l.lineNo()).append(". ").append(l.productName()).append(" x").append(l.quantity())
                    .append(" @ ").append(l.unitPriceCents()).append(" = ").append(l.lineTotalCents()).append('\n');
        }
        return b.append("total ").append(o.totalCents()).append('\n').toString();
    }

    private String sign(String invoice) {
        try {
            MessageDigest sha = MessageDigest.getInstance("SHA-256");
            byte[] digest = invoice.getBytes(StandardCharsets.UTF_8);
            for (int i = 0; i < rounds; i++) {
                sha.update(digest);
                digest = sha.digest(invoice.getBytes(StandardCharsets.UTF_8));
            }
            return HexFormat.of().formatHex(digest);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}

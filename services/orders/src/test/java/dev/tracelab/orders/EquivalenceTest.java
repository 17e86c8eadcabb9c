package dev.tracelab.orders;

import static io.restassured.RestAssured.given;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Map;

import javax.sql.DataSource;

import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import io.restassured.response.Response;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;

/**
 * Every combination of ORDERS_CUSTOMER_CLIENT and ORDERS_PERSISTENCE must answer
 * the same requests the same way and leave the same rows behind. Each combination
 * runs one script of good and bad requests on an emptied database and must
 * reproduce, byte for byte, the transcript in equivalence/transcript.txt (its
 * answers and the database dump that follows them), so all six match each other.
 * The bad requests also get explicit checks: a 4xx and nothing written.
 */
@QuarkusTestResource(LabResources.class)
public abstract class EquivalenceTest {

    private static final String VALID = """
            {"customerId": 5, "lines": [{"productId": 1, "quantity": 2}, {"productId": 7, "quantity": 1}, {"productId": 42, "quantity": 3}]}""";

    @Inject
    DataSource db;

    @Test
    void sameAnswersAndSameRows() throws Exception {
        reset();
        StringBuilder t = new StringBuilder();
        post(t, VALID, 201);
        post(t, "{\"customerId\": 12, \"lines\": [{\"productId\": 3, \"quantity\": 1}, {\"productId\": 3, \"quantity\": 4}]}", 201);
        post(t, "{\"customerId\": 1000, \"lines\": [{\"productId\": 9, \"quantity\": 3}]}", 201);
        get(t, "/orders/1", 200);
        get(t, "/orders/2", 200);
        String afterGoodOrders = dump();

        // Bad input: refused with a reason, and nothing written.
        post(t, "{\"customerId\": 5, \"lines\": [", 400);
        post(t, "", 400);
        post(t, "{\"customerId\": \"five\", \"lines\": []}", 400);
        post(t, "{\"customerId\": 5001, \"lines\": [{\"productId\": 1, \"quantity\": 1}]}", 422);
        post(t, "{\"customerId\": 5, \"lines\": []}", 400);
        post(t, "{\"customerId\": 5}", 400);
        post(t, "{\"customerId\": 5, \"lines\": [{\"productId\": 1, \"quantity\": 0}]}", 400);
        post(t, "{\"customerId\": 5, \"lines\": [{\"productId\": 1, \"quantity\": -3}]}", 400);
        post(t, "{\"customerId\": 5, \"lines\": [{\"productId\": 1, \"quantity\": 1}, {\"productId\": 101, \"quantity\": 1}]}", 422);
        // Product 9 has 1 left after the third order above: this would overdraw it.
        post(t, "{\"customerId\": 5, \"lines\": [{\"productId\": 2, \"quantity\": 1}, {\"productId\": 9, \"quantity\": 2}]}", 409);
        get(t, "/orders/99", 404);
        assertEquals(afterGoodOrders, dump(), "a refused request changed the database");

        t.append(afterGoodOrders);
        String transcript = t.toString();
        Path actual = Path.of("target/equivalence", getClass().getSimpleName() + ".txt");
        Files.createDirectories(actual.getParent());
        Files.writeString(actual, transcript);
        assertEquals(expected(), transcript, "differs from equivalence/transcript.txt; this run's transcript: " + actual);
    }

    private static void post(StringBuilder t, String body, int status) {
        Response r = given().contentType("application/json").body(body).post("/orders");
        record(t, "POST /orders " + body, r, status);
    }

    private static void get(StringBuilder t, String path, int status) {
        record(t, "GET " + path, given().get(path), status);
    }

    private static void record(StringBuilder t, String request, Response r, int status) {
        assertEquals(status, r.statusCode(), request + " -> " + r.asString());
        t.append(request).append("\n  -> ").append(r.statusCode()).append(' ').append(r.asString()).append('\n');
    }

    private void reset() throws SQLException {
        try (Connection c = db.getConnection(); Statement s = c.createStatement()) {
            s.execute("TRUNCATE order_audit, order_lines, orders RESTART IDENTITY");
            s.execute("UPDATE products SET stock = 1000");
            s.execute("UPDATE products SET stock = 4 WHERE id = 9");
        }
    }

    /** Every row the service writes, without the timestamps. */
    private String dump() throws SQLException {
        StringBuilder b = new StringBuilder();
        try (Connection c = db.getConnection(); Statement s = c.createStatement()) {
            for (String query : new String[] {
                    "SELECT id, customer_id, customer_name, total_cents FROM orders ORDER BY id",
                    "SELECT order_id, line_no, product_id, product_name, quantity, unit_price_cents FROM order_lines ORDER BY order_id, line_no",
                    "SELECT id, order_id, event, detail FROM order_audit ORDER BY id",
                    "SELECT id, stock FROM products WHERE stock <> 1000 ORDER BY id" }) {
                b.append(query).append('\n');
                try (ResultSet rs = s.executeQuery(query)) {
                    int n = rs.getMetaData().getColumnCount();
                    while (rs.next()) {
                        b.append(' ');
                        for (int i = 1; i <= n; i++) {
                            b.append(' ').append(rs.getString(i));
                        }
                        b.append('\n');
                    }
                }
            }
        }
        return b.toString();
    }

    private static String expected() throws IOException {
        try (var in = EquivalenceTest.class.getResourceAsStream("/equivalence/transcript.txt")) {
            return in == null ? "(no equivalence/transcript.txt)" : new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    private static Map<String, String> settings(String client, String persistence) {
        return Map.of("ORDERS_CUSTOMER_CLIENT", client, "ORDERS_PERSISTENCE", persistence);
    }

    public static class BlockingChatty implements QuarkusTestProfile {
        public Map<String, String> getConfigOverrides() { return settings("blocking-on-event-loop", "chatty"); }
    }

    public static class BlockingSingle implements QuarkusTestProfile {
        public Map<String, String> getConfigOverrides() { return settings("blocking-on-event-loop", "single-round-trip"); }
    }

    public static class ReactiveChatty implements QuarkusTestProfile {
        public Map<String, String> getConfigOverrides() { return settings("reactive", "chatty"); }
    }

    public static class ReactiveSingle implements QuarkusTestProfile {
        public Map<String, String> getConfigOverrides() { return settings("reactive", "single-round-trip"); }
    }

    public static class VirtualChatty implements QuarkusTestProfile {
        public Map<String, String> getConfigOverrides() { return settings("virtual-threads", "chatty"); }
    }

    public static class VirtualSingle implements QuarkusTestProfile {
        public Map<String, String> getConfigOverrides() { return settings("virtual-threads", "single-round-trip"); }
    }

    @QuarkusTest @TestProfile(BlockingChatty.class) static class BlockingOnEventLoopChattyTest extends EquivalenceTest { }
    @QuarkusTest @TestProfile(BlockingSingle.class) static class BlockingOnEventLoopSingleRoundTripTest extends EquivalenceTest { }
    @QuarkusTest @TestProfile(ReactiveChatty.class) static class ReactiveChattyTest extends EquivalenceTest { }
    @QuarkusTest @TestProfile(ReactiveSingle.class) static class ReactiveSingleRoundTripTest extends EquivalenceTest { }
    @QuarkusTest @TestProfile(VirtualChatty.class) static class VirtualThreadsChattyTest extends EquivalenceTest { }
    @QuarkusTest @TestProfile(VirtualSingle.class) static class VirtualThreadsSingleRoundTripTest extends EquivalenceTest { }
}

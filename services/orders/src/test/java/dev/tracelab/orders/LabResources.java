package dev.tracelab.orders;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import com.sun.net.httpserver.HttpServer;
import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;

/**
 * What orders needs around it in tests: a real PostgreSQL, started with the lab's
 * own script (infra/local/run-postgres.sh) on a free port under target/, and a
 * small HTTP stand-in for customers that answers like the real one (ids 1 to
 * 1000, 404 otherwise) without its latency.
 */
public class LabResources implements QuarkusTestResourceLifecycleManager {

    private static final Pattern CUSTOMER = Pattern.compile("/customers/(-?\\d+)");

    private Process postgres;
    private HttpServer customers;

    @Override
    public Map<String, String> start() {
        try {
            int pgPort = freePort();
            startPostgres(pgPort);
            startCustomers();
            return Map.of(
                    "quarkus.datasource.jdbc.url", "jdbc:postgresql://127.0.0.1:" + pgPort + "/orders",
                    "quarkus.rest-client.customers.url", "http://127.0.0.1:" + customers.getAddress().getPort());
        } catch (IOException | InterruptedException e) {
            stop();
            throw new IllegalStateException("cannot start the test's PostgreSQL or customers stand-in: " + e.getMessage(), e);
        }
    }

    private void startPostgres(int port) throws IOException, InterruptedException {
        Path root = Path.of("").toAbsolutePath().getParent().getParent(); // services/orders -> the lab's root
        Path script = root.resolve("infra/local/run-postgres.sh");
        Path state = Path.of("target/test-state").toAbsolutePath();
        Files.createDirectories(state);
        String bin = pgBinDir(root);
        ProcessBuilder pb = new ProcessBuilder(script.toString())
                .redirectErrorStream(true)
                .redirectOutput(state.resolve("postgres.log").toFile());
        pb.environment().putAll(Map.of("LAB_STATE", state.toString(), "POSTGRES_PORT", Integer.toString(port), "PG_BIN_DIR", bin));
        postgres = pb.start();
        Instant deadline = Instant.now().plus(Duration.ofSeconds(60));
        // Ready once it takes a connection to orders: run-postgres.sh creates
        // the database before the server listens.
        String url = "jdbc:postgresql://127.0.0.1:" + port + "/orders";
        while (true) {
            try (Connection c = DriverManager.getConnection(url, "lab", "")) {
                return;
            } catch (SQLException notYet) {
                if (!postgres.isAlive() || Instant.now().isAfter(deadline)) {
                    throw new IOException("PostgreSQL did not start; see " + state.resolve("postgres.log"));
                }
                Thread.sleep(100);
            }
        }
    }

    /**
     * PostgreSQL's binaries: PG_BIN_DIR, else what `make tools` wrote in the lab's
     * .state/tools.env, so `mvn verify` works on its own after `make tools`.
     */
    private static String pgBinDir(Path root) throws IOException {
        String bin = System.getenv("PG_BIN_DIR");
        if (bin != null && !bin.isBlank()) {
            return bin;
        }
        Path tools = root.resolve(".state/tools.env");
        if (Files.exists(tools)) {
            for (String line : Files.readAllLines(tools)) {
                if (line.startsWith("PG_BIN_DIR=")) {
                    return line.substring("PG_BIN_DIR=".length());
                }
            }
        }
        throw new IOException("no PostgreSQL binaries: set PG_BIN_DIR, or run 'make tools' first (it writes " + tools + ")");
    }

    private void startCustomers() throws IOException {
        customers = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        customers.createContext("/customers/", exchange -> {
            Matcher m = CUSTOMER.matcher(exchange.getRequestURI().getPath());
            long id = m.matches() ? Long.parseLong(m.group(1)) : -1;
            boolean known = id >= 1 && id <= 1000;
            byte[] body = (known ? "{\"id\":" + id + ",\"name\":\"Customer " + id + "\"}" : "{\"detail\":\"no customer " + id + "\"}")
                    .getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().add("Content-Type", "application/json");
            exchange.sendResponseHeaders(known ? 200 : 404, body.length);
            exchange.getResponseBody().write(body);
            exchange.close();
        });
        customers.start();
    }

    @Override
    public void stop() {
        if (customers != null) {
            customers.stop(0);
        }
        if (postgres != null && postgres.isAlive()) {
            try {
                // SIGINT is PostgreSQL's fast shutdown: it does not wait for clients.
                new ProcessBuilder("kill", "-INT", Long.toString(postgres.pid())).start().waitFor();
                postgres.waitFor();
            } catch (IOException | InterruptedException e) {
                postgres.destroyForcibly();
            }
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }
}

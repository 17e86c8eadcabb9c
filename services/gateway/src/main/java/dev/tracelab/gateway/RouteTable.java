package dev.tracelab.gateway;

import java.util.ArrayList;
import java.util.List;

import org.springframework.web.bind.annotation.RequestMethod;

/**
 * The gateway's route table, generated from a short catalogue: a versioned
 * multi-tenant API (three versions, each mapped on its own, as versions usually
 * live in their own controllers) in which each of 80 resources has the same eight
 * operations, plus a few literal routes: 1,925 mappings. Every templated route
 * starts with {@code /api/tenants/{tenant}/regions/{region}/v1/projects/{project}}
 * (or v2, v3): tenant and region first, as in gateways that route on them
 * before anything else (Atlassian's {@code /ex/jira/{cloudId}/rest/api/3/...}),
 * then regex-constrained ids or a trailing wildcard, the shape of the case's
 * REST API.
 *
 * <p>Why the tenant and region come first: AntPathMatcher skips a pattern
 * cheaply only while the pattern's leading segments are literals that differ
 * from the path's; from the first variable on, it splits the whole path into
 * strings and compares segment by segment, through a regular expression for
 * each variable. With two variables before the version, every request pays
 * that for every templated mapping in the table, not only for those of its
 * own version. PathPattern has parsed both sides once and stops at the first
 * literal that differs, wherever it is.
 *
 * <p>Why the version is a literal and the tenant unconstrained: a regex on an
 * early segment ({@code v{version:[1-3]}}, {@code {tenant:[a-z0-9-]+}}) makes
 * both matchers run that regex for every route, which hides most of the
 * difference between them (see the scenario README for the numbers).
 */
public final class RouteTable {

    /** The API versions; each has the whole catalogue. */
    public static final int VERSIONS = 3;

    /** What a route does to its resource; each one is a handler method of {@link ResourceEndpoint}. */
    public enum Operation {
        LIST(RequestMethod.GET, "", 200),
        CREATE(RequestMethod.POST, "", 201),
        GET(RequestMethod.GET, "/{id:[0-9]+}", 200),
        UPDATE(RequestMethod.PUT, "/{id:[0-9]+}", 200),
        DELETE(RequestMethod.DELETE, "/{id:[0-9]+}", 204),
        // No regex on purpose: "abc" reaches the conversion to long, which answers 400.
        HISTORY(RequestMethod.GET, "/{id}/history", 200),
        EVENT(RequestMethod.GET, "/{id:[0-9]+}/events/{event:[0-9a-f]+}", 200),
        FILE(RequestMethod.GET, "/{id:[0-9]+}/files/**", 200);

        final RequestMethod method;
        final String suffix;
        final int status;

        Operation(RequestMethod method, String suffix, int status) {
            this.method = method;
            this.suffix = suffix;
            this.status = status;
        }

        public String handlerMethod() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    /**
     * One mapping: the method, the pattern as registered, and a request path that
     * must reach it. {@code resource} is null for literal routes.
     */
    public record Route(RequestMethod method, String pattern, int version, String resource, Operation operation,
            String samplePath, int status) {
    }

    /** The resources of the API, as a SaaS commerce and finance platform would name them. */
    public static final List<String> RESOURCES = List.of(
            "orders", "order-lines", "invoices", "credit-notes", "payments", "refunds", "customers",
            "contacts", "addresses", "products", "variants", "categories", "price-lists", "discounts",
            "coupons", "carts", "checkouts", "shipments", "parcels", "carriers", "warehouses", "stock-levels",
            "suppliers", "purchase-orders", "returns", "subscriptions", "plans", "usage-records",
            "contracts", "quotes", "tax-rates", "users", "roles", "teams", "api-keys",
            "webhooks", "tickets", "reports", "exports", "audit-events", "invoice-lines", "payment-methods",
            "disputes", "payouts", "balances", "ledgers", "journal-entries", "accounts", "budgets", "forecasts",
            "vendors", "assets", "licenses", "devices", "locations", "schedules", "tasks", "approvals",
            "documents", "templates", "fulfillments", "backorders", "bundles", "gift-cards", "loyalty-points",
            "promotions", "segments", "campaigns", "leads", "opportunities", "meetings", "calls", "emails",
            "attachments", "folders", "labels", "workflows", "integrations", "sandboxes", "quotas");

    /** Literal routes: Spring MVC finds these in a map, whatever the matcher. */
    public static final List<String> LITERALS = List.of(
            "/api/status", "/api/tenants", "/api/versions", "/api/regions");

    /** The literal route that lists this table (for the load test). */
    public static final String CATALOGUE = "/api/routes";

    /** Tenants the sample paths use. */
    static final List<String> TENANTS = List.of("acme-eu", "globex", "initech-us", "umbrella-42", "stark");

    /** Regions the sample paths use. */
    static final List<String> REGIONS = List.of("eu-west-1", "us-east-2", "ap-south-1");

    /** Projects the sample paths use. */
    static final List<String> PROJECTS = List.of("web-shop", "b2b", "retail-2025", "pos");

    private static final List<Route> ROUTES = build();

    private RouteTable() {
    }

    public static List<Route> routes() {
        return ROUTES;
    }

    private static List<Route> build() {
        List<Route> routes = new ArrayList<>();
        for (String path : LITERALS) {
            routes.add(new Route(RequestMethod.GET, path, 0, null, null, path, 200));
        }
        routes.add(new Route(RequestMethod.GET, CATALOGUE, 0, null, null, CATALOGUE, 200));
        for (int version = 1; version <= VERSIONS; version++) {
            for (int r = 0; r < RESOURCES.size(); r++) {
                String resource = RESOURCES.get(r);
                for (Operation op : Operation.values()) {
                    String pattern = "/api/tenants/{tenant}/regions/{region}/v%d/projects/{project}/%s%s".formatted(version, resource, op.suffix);
                    routes.add(new Route(op.method, pattern, version, resource, op, samplePath(version, resource, op, r), op.status));
                }
            }
        }
        return List.copyOf(routes);
    }

    // Versions, tenants and ids vary with the resource so that the samples are
    // not all the same path with one word changed.
    private static String samplePath(int version, String resource, Operation op, int r) {
        String base = "/api/tenants/%s/regions/%s/v%d/projects/%s/%s".formatted(TENANTS.get((r + version) % TENANTS.size()),
                REGIONS.get((r + 2 * version) % REGIONS.size()), version, PROJECTS.get(r % PROJECTS.size()), resource);
        long id = 1000 + 37L * r;
        return switch (op) {
            case LIST, CREATE -> base;
            case GET, UPDATE, DELETE -> base + "/" + id;
            case HISTORY -> base + "/" + id + "/history";
            case EVENT -> base + "/" + id + "/events/9f3a" + Integer.toHexString(0x1000 + r);
            case FILE -> base + "/" + id + "/files/2025/03/scan-" + r + ".pdf";
        };
    }
}

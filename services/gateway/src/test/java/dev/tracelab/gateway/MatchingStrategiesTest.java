package dev.tracelab.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.stream.Stream;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.web.servlet.mvc.method.annotation.RequestMappingHandlerMapping;

import dev.tracelab.gateway.RouteTable.Route;

/**
 * The scenario's guard on the service side: the gateway started twice, once per
 * strategy, over real HTTP. A user must not be able to tell the strategies apart
 * by any answer: every route of the table, unknown routes and malformed variables.
 */
class MatchingStrategiesTest {

    static ConfigurableApplicationContext ant;
    static ConfigurableApplicationContext pathPattern;
    static HttpClient http;

    @BeforeAll
    static void start() {
        ant = start("ant");
        pathPattern = start("path-pattern");
        http = HttpClient.newHttpClient();
    }

    @AfterAll
    static void stop() {
        http.close();
        ant.close();
        pathPattern.close();
    }

    static ConfigurableApplicationContext start(String strategy) {
        return new SpringApplicationBuilder(GatewayApplication.class)
                .run("--server.port=0", "--GATEWAY_PATH_MATCHING=" + strategy);
    }

    @Test
    void eachServiceMatchesWithItsStrategy() {
        assertThat(mvc(ant).getPatternParser()).isNull();
        assertThat(mvc(pathPattern).getPatternParser()).isNotNull();
    }

    @Test
    void theTableHasHundredsOfTemplatedRoutes() {
        long templated = RouteTable.routes().stream().filter(r -> r.pattern().contains("{")).count();
        assertThat(templated).isGreaterThanOrEqualTo(300);
        assertThat(RouteTable.routes()).extracting(r -> r.method() + " " + r.pattern()).doesNotHaveDuplicates();
        // All of them registered, next to the actuator's own mappings.
        assertThat(mvc(ant).getHandlerMethods()).hasSizeGreaterThanOrEqualTo(RouteTable.routes().size());
    }

    static Stream<Route> routes() {
        return RouteTable.routes().stream();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("routes")
    void everyRouteAnswersTheSameInBothStrategies(Route route) throws Exception {
        Answer a = send(ant, route.method().name(), route.samplePath());
        Answer p = send(pathPattern, route.method().name(), route.samplePath());

        assertThat(a.status()).as("status of %s %s", route.method(), route.samplePath()).isEqualTo(route.status());
        assertThat(p).isEqualTo(a);
        if (route.resource() != null && route.status() != 204) {
            // Reached the right route, not merely some route.
            assertThat(a.body()).contains("\"resource\":\"" + route.resource() + "\"");
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {
            "/api/tenants/acme-eu/regions/eu-west-1/v2/projects/b2b/unicorns",              // unknown resource
            "/api/tenants/acme-eu/regions/eu-west-1/v2/orders",                             // no project
            "/api/tenants/acme-eu/regions/eu-west-1/v4/projects/b2b/orders",                // unknown version
            "/api/tenants/acme-eu/regions/eu-west-1/v2/projects/b2b/orders/-12",            // id outside [0-9]+
            "/api/tenants/acme-eu/regions/eu-west-1/v2/projects/b2b/orders/12/lines",       // unknown sub-resource
            "/api/tenants/acme-eu/regions/eu-west-1/v2/projects/b2b/orders/12/events/xyz",  // event id not hex
            "/api/tenants/acme-eu/regions/eu-west-1/v2/projects/b2b/orders/",               // no trailing-slash matching in either
            "/nothing"})
    void unknownRoutesAre404InBoth(String path) throws Exception {
        Answer a = send(ant, "GET", path);
        assertThat(a.status()).isEqualTo(404);
        assertThat(a.body()).contains("\"title\":\"Not Found\"");
        assertThat(send(pathPattern, "GET", path)).isEqualTo(a);
    }

    // A trailing /** also matches nothing at all, in both strategies.
    @Test
    void anEmptyWildcardMatchesInBoth() throws Exception {
        Answer a = send(ant, "GET", "/api/tenants/acme-eu/regions/eu-west-1/v2/projects/b2b/orders/12/files");
        assertThat(a.status()).isEqualTo(200);
        assertThat(a.body()).endsWith("\"path\":\"\"}");
        assertThat(send(pathPattern, "GET", "/api/tenants/acme-eu/regions/eu-west-1/v2/projects/b2b/orders/12/files")).isEqualTo(a);
    }

    @ParameterizedTest
    @ValueSource(strings = {
            "/api/tenants/acme-eu/regions/eu-west-1/v2/projects/b2b/orders/abc/history",                  // {id} is a long
            "/api/tenants/acme-eu/regions/eu-west-1/v2/projects/b2b/orders/99999999999999999999",         // [0-9]+ but not a long
            "/api/tenants/globex/regions/eu-west-1/v1/projects/pos/invoices/12x/history"})
    void malformedPathVariablesAre400InBoth(String path) throws Exception {
        Answer a = send(ant, "GET", path);
        assertThat(a.status()).isEqualTo(400);
        assertThat(a.body()).contains("Failed to convert 'id'");
        assertThat(send(pathPattern, "GET", path)).isEqualTo(a);
    }

    @Test
    void theCatalogueListsEveryRoute() throws Exception {
        Answer a = send(ant, "GET", RouteTable.CATALOGUE);
        assertThat(a.status()).isEqualTo(200);
        List<Route> routes = RouteTable.routes();
        for (Route r : routes) {
            assertThat(a.body()).contains("\"sample\":\"" + r.samplePath() + "\"");
        }
    }

    record Answer(int status, String body) {
    }

    static Answer send(ConfigurableApplicationContext app, String method, String path) throws Exception {
        HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port(app) + path))
                .method(method, HttpRequest.BodyPublishers.noBody())
                .build();
        HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString());
        return new Answer(response.statusCode(), response.body());
    }

    static int port(ConfigurableApplicationContext context) {
        return ((WebServerApplicationContext) context).getWebServer().getPort();
    }

    static RequestMappingHandlerMapping mvc(ConfigurableApplicationContext context) {
        return context.getBean("requestMappingHandlerMapping", RequestMappingHandlerMapping.class);
    }
}

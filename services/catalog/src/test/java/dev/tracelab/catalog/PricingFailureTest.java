package dev.tracelab.catalog;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;

import org.junit.jupiter.api.Test;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

import dev.tracelab.pricing.PricingApplication;

/** When pricing fails, the catalog says so with a short 502 problem detail. */
class PricingFailureTest {

    @Test
    void anUnreachablePricingIsABadGateway() throws Exception {
        int closedPort;
        try (ServerSocket socket = new ServerSocket(0)) {
            closedPort = socket.getLocalPort();
        }

        HttpResponse<String> response = summaryFrom("http://127.0.0.1:" + closedPort);

        assertThat(response.statusCode()).isEqualTo(502);
        assertThat(response.headers().firstValue("Content-Type")).hasValue("application/problem+json");
        assertThat(response.body()).contains("\"status\":502", "\"detail\":\"pricing call failed: java.net.ConnectException");
    }

    @Test
    void anErrorAnswerFromPricingIsABadGateway() throws Exception {
        try (ConfigurableApplicationContext pricing = new SpringApplicationBuilder(PricingApplication.class)
                .run("--server.port=0", "--PRICING_ITEM_COUNT=3", "--PRICING_LIST_LATENCY_MS=0")) {
            // A wrong base path: pricing answers 404 to the item list.
            HttpResponse<String> response = summaryFrom("http://127.0.0.1:" + FetchModesTest.port(pricing) + "/v2");

            assertThat(response.statusCode()).isEqualTo(502);
            assertThat(response.body()).contains("\"detail\":\"pricing answered 404 NOT_FOUND\"");
        }
    }

    private static HttpResponse<String> summaryFrom(String pricingUrl) throws Exception {
        try (ConfigurableApplicationContext catalog = new SpringApplicationBuilder(CatalogApplication.class)
                .run("--server.port=0", "--PRICING_URL=" + pricingUrl);
                HttpClient http = HttpClient.newHttpClient()) {
            URI summary = URI.create("http://127.0.0.1:" + FetchModesTest.port(catalog) + "/catalog/summary");
            return http.send(HttpRequest.newBuilder(summary).build(), HttpResponse.BodyHandlers.ofString());
        }
    }
}

package dev.tracelab.catalog;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;

import dev.tracelab.pricing.PricingApplication;
import tools.jackson.databind.json.JsonMapper;

/**
 * The scenario's guard: the real pricing service and the real catalog over real HTTP.
 * The baseline must still make one call per item, one at a time; the fix must make
 * two calls; and the user must not be able to tell them apart by the answer.
 */
class FetchModesTest {

    static final int ITEMS = 50;

    static ConfigurableApplicationContext pricing;
    static PricingRequestLog pricingLog;

    @BeforeAll
    static void startPricing() {
        pricing = new SpringApplicationBuilder(PricingApplication.class, PricingRequestLog.class).run(
                "--server.port=0",
                "--PRICING_ITEM_COUNT=" + ITEMS,
                "--PRICING_LIST_LATENCY_MS=0",
                "--PRICING_ITEM_LATENCY_MS=0",
                "--PRICING_BATCH_LATENCY_MS=0");
        pricingLog = pricing.getBean(PricingRequestLog.class);
    }

    @AfterAll
    static void stopPricing() {
        pricing.close();
    }

    @Test
    void bothModesAnswerTheSameAndOnlyTheBaselineMakesOneCallPerItem() throws Exception {
        Run sequential = summaryWithFetchMode("sequential");
        Run batch = summaryWithFetchMode("batch");

        assertThat(sequential.status()).isEqualTo(200);
        assertThat(batch.status()).isEqualTo(200);
        assertThat(sequential.body()).isEqualTo(batch.body());

        Map<?, ?> summary = JsonMapper.shared().readValue(sequential.body(), Map.class);
        assertThat(summary.get("items")).isEqualTo(ITEMS);
        assertThat(summary.get("currency")).isEqualTo("EUR");
        assertThat((List<?>) summary.get("lines")).hasSize(ITEMS);
        assertThat(new String(sequential.body())).startsWith("{\"items\":50,\"currency\":\"EUR\",\"total\":");

        // The symptom: N+1 calls, never two at once, all on one kept-alive connection.
        assertThat(sequential.pricingRequests()).hasSize(ITEMS + 1);
        assertThat(sequential.pricingRequests().getFirst()).isEqualTo("GET /items");
        assertThat(sequential.pricingRequests().subList(1, ITEMS + 1))
                .containsExactlyElementsOf(IntStream.rangeClosed(1, ITEMS)
                        .mapToObj(id -> "GET /prices/" + id).toList());
        assertThat(sequential.mostInFlight()).isEqualTo(1);
        assertThat(sequential.connections()).isEqualTo(1);

        // The fix: the list, then one batch call.
        assertThat(batch.pricingRequests()).containsExactly("GET /items", "POST /prices/batch");
        assertThat(batch.connections()).isEqualTo(1);
    }

    record Run(int status, byte[] body, List<String> pricingRequests, int connections, int mostInFlight) {
    }

    private Run summaryWithFetchMode(String mode) throws Exception {
        String pricingUrl = "http://127.0.0.1:" + port(pricing);
        try (ConfigurableApplicationContext catalog = new SpringApplicationBuilder(CatalogApplication.class).run(
                "--server.port=0", "--PRICING_URL=" + pricingUrl, "--CATALOG_FETCH_MODE=" + mode);
                HttpClient http = HttpClient.newHttpClient()) {
            pricingLog.clear();
            HttpResponse<byte[]> response = http.send(
                    HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port(catalog) + "/catalog/summary")).build(),
                    HttpResponse.BodyHandlers.ofByteArray());
            return new Run(response.statusCode(), response.body(),
                    pricingLog.requests(), pricingLog.connections(), pricingLog.mostInFlight());
        }
    }

    static int port(ConfigurableApplicationContext context) {
        return ((WebServerApplicationContext) context).getWebServer().getPort();
    }
}

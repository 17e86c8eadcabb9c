package dev.tracelab.pricing;

import static org.assertj.core.api.Assertions.assertThat;

import java.math.BigDecimal;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.core.ParameterizedTypeReference;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.client.RestClient;

/** The three endpoints over real HTTP, on a small item list and without simulated latency. */
@SpringBootTest(webEnvironment = WebEnvironment.RANDOM_PORT, properties = {
        "PRICING_ITEM_COUNT=30",
        "PRICING_LIST_LATENCY_MS=0",
        "PRICING_ITEM_LATENCY_MS=0",
        "PRICING_BATCH_LATENCY_MS=0" })
class PricingApiTest {

    private static final ParameterizedTypeReference<List<Item>> ITEMS = new ParameterizedTypeReference<>() {};
    private static final ParameterizedTypeReference<List<Price>> PRICES = new ParameterizedTypeReference<>() {};

    @LocalServerPort
    int port;

    RestClient http;

    @BeforeEach
    void client() {
        // Let 4xx through as responses: several tests are about them.
        http = RestClient.builder()
                .baseUrl("http://127.0.0.1:" + port)
                .defaultStatusHandler(status -> true, (request, response) -> { })
                .build();
    }

    @Test
    void listHonoursTheItemCountSetting() {
        List<Item> items = http.get().uri("/items").retrieve().body(ITEMS);

        assertThat(items).hasSize(30);
        assertThat(items).extracting(Item::id).containsExactlyElementsOf(rangeClosed(1, 30));
        assertThat(items.getFirst()).isEqualTo(new Item(1, "SKU-00001", "Steel Hinge"));
        assertThat(items).allSatisfy(item -> assertThat(item.name()).isNotBlank());
    }

    @Test
    void priceIsAFixedFunctionOfTheId() {
        Price first = http.get().uri("/prices/{id}", 7).retrieve().body(Price.class);
        Price again = http.get().uri("/prices/{id}", 7).retrieve().body(Price.class);

        assertThat(first).isEqualTo(again);
        assertThat(first.currency()).isEqualTo("EUR");
        assertThat(first.price().scale()).isEqualTo(2);
        // Pinned so that a change to the formula (and to every recorded run) is deliberate.
        assertThat(first.price()).isEqualTo(PriceBook.amount(7)).isEqualTo(new BigDecimal("41.60"));
    }

    @Test
    void pricesAreWrittenWithTwoDecimals() {
        String body = http.get().uri("/prices/{id}", 7).retrieve().body(String.class);

        assertThat(body).isEqualTo("{\"id\":7,\"price\":41.60,\"currency\":\"EUR\"}");
    }

    @Test
    void batchAnswersInTheOrderOfTheIdsWithTheSamePricesAsSingleLookups() {
        List<Integer> ids = List.of(30, 2, 17, 1, 2);

        List<Price> batch = http.post().uri("/prices/batch").contentType(MediaType.APPLICATION_JSON)
                .body(ids).retrieve().body(PRICES);

        List<Price> single = ids.stream()
                .map(id -> http.get().uri("/prices/{id}", id).retrieve().body(Price.class))
                .toList();
        assertThat(batch).isEqualTo(single);
        assertThat(batch).extracting(Price::id).containsExactlyElementsOf(ids);
    }

    @Test
    void emptyBatchIsAnEmptyAnswer() {
        List<Price> batch = http.post().uri("/prices/batch").contentType(MediaType.APPLICATION_JSON)
                .body(List.of()).retrieve().body(PRICES);

        assertThat(batch).isEmpty();
    }

    @Test
    void unknownIdsAreNotFound() {
        for (int id : new int[] {0, -1, 31}) {
            ResponseEntity<Map<String, Object>> response = http.get().uri("/prices/{id}", id).retrieve()
                    .toEntity(new ParameterizedTypeReference<>() {});
            assertThat(response.getStatusCode().value()).as("GET /prices/%d", id).isEqualTo(404);
            assertThat(response.getBody()).containsEntry("detail", "no item with id " + id);
        }
    }

    @Test
    void batchWithAnUnknownIdIsNotFound() {
        ResponseEntity<String> response = http.post().uri("/prices/batch").contentType(MediaType.APPLICATION_JSON)
                .body(List.of(1, 31)).retrieve().toEntity(String.class);

        assertThat(response.getStatusCode().value()).isEqualTo(404);
        assertThat(response.getBody()).contains("no item with id 31");
    }

    @Test
    void healthAnswersWhenUp() {
        ResponseEntity<String> response = http.get().uri("/actuator/health").retrieve().toEntity(String.class);

        assertThat(response.getStatusCode().value()).isEqualTo(200);
        assertThat(response.getBody()).contains("\"UP\"");
    }

    private static List<Integer> rangeClosed(int from, int to) {
        return IntStream.rangeClosed(from, to).boxed().toList();
    }
}

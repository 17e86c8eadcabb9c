package dev.tracelab.customers;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;

import org.junit.jupiter.api.Test;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.http.ResponseEntity;
import org.springframework.web.client.RestClient;

import dev.tracelab.settings.InvalidSettingException;
import dev.tracelab.settings.Settings;

@SpringBootTest(webEnvironment = WebEnvironment.RANDOM_PORT, properties = { "CUSTOMERS_COUNT=10", "CUSTOMERS_LATENCY_MS=0" })
class CustomersApiTest {

    @LocalServerPort
    int port;

    private RestClient http() {
        return RestClient.builder().baseUrl("http://127.0.0.1:" + port)
                .defaultStatusHandler(status -> true, (request, response) -> { }).build();
    }

    @Test
    void knownCustomer() {
        ResponseEntity<CustomersApplication.Customer> res = http().get().uri("/customers/7").retrieve()
                .toEntity(CustomersApplication.Customer.class);
        assertThat(res.getStatusCode().value()).isEqualTo(200);
        assertThat(res.getBody()).isEqualTo(new CustomersApplication.Customer(7, "Customer 7"));
    }

    @Test
    void unknownCustomerIs404WithTheReason() {
        ResponseEntity<String> res = http().get().uri("/customers/11").retrieve().toEntity(String.class);
        assertThat(res.getStatusCode().value()).isEqualTo(404);
        assertThat(res.getBody()).contains("no customer 11");
    }

    @Test
    void badSettingNamesTheVariable() {
        Settings env = new Settings(Map.of("CUSTOMERS_LATENCY_MS", "-1")::get);
        assertThatThrownBy(() -> CustomersApplication.CustomersSettings.from(env))
                .isInstanceOf(InvalidSettingException.class)
                .hasMessage("CUSTOMERS_LATENCY_MS must be a whole number from 0 to 60000, got '-1'");
    }

    @Test
    void badSettingStopsStartup() {
        assertThatThrownBy(() -> new SpringApplicationBuilder(CustomersApplication.class)
                .run("--server.port=0", "--CUSTOMERS_COUNT=many"))
                .rootCause().isInstanceOf(InvalidSettingException.class)
                .hasMessage("CUSTOMERS_COUNT must be a whole number from 0 to 10000000, got 'many'");
    }
}

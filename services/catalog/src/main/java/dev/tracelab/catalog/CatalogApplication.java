package dev.tracelab.catalog;

import java.net.http.HttpClient;
import java.time.Duration;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.PropertySource;
import org.springframework.core.env.Environment;
import org.springframework.http.client.JdkClientHttpRequestFactory;
import org.springframework.web.client.RestClient;

import dev.tracelab.settings.spring.SpringSettings;

/**
 * The service with the pathology of the nplus1 scenario: it answers
 * GET /catalog/summary from the pricing service, fetching prices the way
 * CATALOG_FETCH_MODE says (see {@link PriceFetcher}).
 */
@SpringBootApplication
// Not application.properties: the tests run pricing in the same JVM, where two
// files of that name on one classpath would shadow each other.
@PropertySource("classpath:catalog.properties")
public class CatalogApplication {

    public static void main(String[] args) {
        SpringApplication.run(CatalogApplication.class, args);
    }

    @Bean
    CatalogSettings catalogSettings(Environment environment) {
        return CatalogSettings.from(SpringSettings.of(environment));
    }

    @Bean
    RestClient pricing(CatalogSettings settings) {
        // One JDK client for the whole service keeps connections alive between calls,
        // so each call costs a round trip, not a new connection. The OpenTelemetry
        // agent records one CLIENT span per request this client sends.
        // HTTP/1.1 because the default (HTTP/2) would try an h2c upgrade on plain http.
        HttpClient http = HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(Duration.ofSeconds(2))
                .build();
        JdkClientHttpRequestFactory requests = new JdkClientHttpRequestFactory(http);
        // Pricing's simulated latency is capped at 60 s per call; past that it is stuck.
        requests.setReadTimeout(Duration.ofSeconds(61));
        return RestClient.builder()
                .baseUrl(settings.pricingUrl())
                .requestFactory(requests)
                .build();
    }
}

package dev.tracelab.catalog;

import java.util.List;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.core.ParameterizedTypeReference;
import org.springframework.http.HttpStatus;
import org.springframework.http.ProblemDetail;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.client.RestClient;
import org.springframework.web.client.RestClientException;
import org.springframework.web.client.RestClientResponseException;

@RestController
class CatalogController {

    private static final Logger log = LoggerFactory.getLogger(CatalogController.class);
    private static final ParameterizedTypeReference<List<Item>> ITEMS = new ParameterizedTypeReference<>() {};

    private final RestClient pricing;
    private final PriceFetcher prices;

    CatalogController(RestClient pricing, PriceFetcher prices) {
        this.pricing = pricing;
        this.prices = prices;
    }

    // The "1" of N+1 is the item list; the N, or the single batch call, is in PriceFetcher.
    @GetMapping("/catalog/summary")
    CatalogSummary summary() {
        List<Item> items = pricing.get().uri("/items").retrieve().body(ITEMS);
        List<Integer> ids = items.stream().map(Item::id).toList();
        return CatalogSummary.of(items, prices.prices(ids));
    }

    // A failing downstream is not the catalog's own error: answer 502, briefly.
    @ExceptionHandler(RestClientException.class)
    ProblemDetail pricingFailed(RestClientException e) {
        String detail = e instanceof RestClientResponseException answer
                ? "pricing answered " + answer.getStatusCode()
                : "pricing call failed: " + (e.getCause() != null ? e.getCause() : e);
        log.warn("{} ({})", detail, e.getMessage());
        return ProblemDetail.forStatusAndDetail(HttpStatus.BAD_GATEWAY, detail);
    }
}

package dev.tracelab.catalog;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.core.ParameterizedTypeReference;
import org.springframework.http.MediaType;
import org.springframework.stereotype.Component;
import org.springframework.web.client.RestClient;

/**
 * How the catalog gets the price of every item from pricing: the N+1 pathology of
 * case study 003 and its fix, side by side. CATALOG_FETCH_MODE picks one at startup.
 * Both return the prices in the order of the ids, so the summary is the same.
 */
@Component
public class PriceFetcher {

    public enum Mode { SEQUENTIAL, BATCH }

    private static final Logger log = LoggerFactory.getLogger(PriceFetcher.class);
    private static final ParameterizedTypeReference<List<Price>> PRICES = new ParameterizedTypeReference<>() {};

    private final RestClient pricing;
    private final Mode mode;

    PriceFetcher(RestClient pricing, CatalogSettings settings) {
        this.pricing = pricing;
        this.mode = settings.fetchMode();
        log.info("Fetching prices from {} with CATALOG_FETCH_MODE={}", settings.pricingUrl(), mode.name().toLowerCase(Locale.ROOT));
    }

    public List<Price> prices(List<Integer> ids) {
        return switch (mode) {
            case SEQUENTIAL -> oneCallPerItem(ids);
            case BATCH -> oneCallForAll(ids);
        };
    }

    // The pathology: one round trip per item, each waiting for the one before.
    // The request costs N x (round trip + pricing's work): 1,600 x 12 ms, about 19 s,
    // in the case study. Every concurrent user adds another stream of calls to pricing.
    private List<Price> oneCallPerItem(List<Integer> ids) {
        List<Price> prices = new ArrayList<>(ids.size());
        for (int id : ids) {
            prices.add(pricing.get().uri("/prices/{id}", id).retrieve().body(Price.class));
        }
        return prices;
    }

    // The fix: all ids in one request, so the cost is one round trip whatever N is.
    private List<Price> oneCallForAll(List<Integer> ids) {
        return pricing.post().uri("/prices/batch")
                .contentType(MediaType.APPLICATION_JSON)
                .body(ids)
                .retrieve()
                .body(PRICES);
    }
}

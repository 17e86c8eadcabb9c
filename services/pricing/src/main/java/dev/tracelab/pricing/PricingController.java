package dev.tracelab.pricing;

import java.time.Duration;
import java.util.Arrays;
import java.util.List;

import org.springframework.http.HttpStatus;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.server.ResponseStatusException;

@RestController
class PricingController {

    private final PriceBook book;
    private final PricingSettings settings;

    PricingController(PriceBook book, PricingSettings settings) {
        this.book = book;
        this.settings = settings;
    }

    @GetMapping("/items")
    List<Item> items() {
        work(settings.listLatency());
        return book.items();
    }

    @GetMapping("/prices/{id}")
    Price price(@PathVariable int id) {
        work(settings.itemLatency());
        return known(id);
    }

    // One round trip whatever the number of ids: this is what makes batching the fix.
    @PostMapping("/prices/batch")
    List<Price> prices(@RequestBody int[] ids) {
        work(settings.batchLatency());
        return Arrays.stream(ids).mapToObj(this::known).toList();
    }

    private Price known(int id) {
        return book.price(id).orElseThrow(() -> new ResponseStatusException(HttpStatus.NOT_FOUND, "no item with id " + id));
    }

    // Stands in for the downstream's own work (its database, its own dependencies).
    // It holds a request thread like real work would, which is what the caller waits for.
    private static void work(Duration latency) {
        if (latency.isZero()) {
            return;
        }
        try {
            Thread.sleep(latency);
        }
        catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ResponseStatusException(HttpStatus.SERVICE_UNAVAILABLE, "interrupted");
        }
    }
}

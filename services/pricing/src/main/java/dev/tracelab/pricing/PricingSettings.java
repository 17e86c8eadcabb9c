package dev.tracelab.pricing;

import java.time.Duration;

import dev.tracelab.settings.Settings;

/**
 * Startup settings. Unset or empty means the default, which reproduces the
 * numbers of case study 003.
 */
public record PricingSettings(int itemCount, Duration listLatency, Duration itemLatency, Duration batchLatency) {

    // Bounds keep a typo from turning into an hour-long request or a huge item list.
    private static final int MAX_ITEMS = 100_000;
    private static final int MAX_LATENCY_MS = 60_000;

    public static PricingSettings from(Settings settings) {
        return new PricingSettings(
                settings.wholeNumber("PRICING_ITEM_COUNT", 1600, 0, MAX_ITEMS),
                settings.millis("PRICING_LIST_LATENCY_MS", 400, 0, MAX_LATENCY_MS),
                settings.millis("PRICING_ITEM_LATENCY_MS", 12, 0, MAX_LATENCY_MS),
                settings.millis("PRICING_BATCH_LATENCY_MS", 12, 0, MAX_LATENCY_MS));
    }
}

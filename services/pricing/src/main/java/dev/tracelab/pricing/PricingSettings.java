package dev.tracelab.pricing;

import java.time.Duration;

import dev.tracelab.settings.Settings;

/**
 * Startup settings. Unset or empty means the default, which reproduces the
 * numbers of case study 003.
 */
public record PricingSettings(int itemCount, Duration listLatency, Duration itemLatency, Duration batchLatency) {

    public static PricingSettings from(Settings settings) {
        return new PricingSettings(
                settings.wholeNumber("PRICING_ITEM_COUNT"),
                settings.millis("PRICING_LIST_LATENCY_MS"),
                settings.millis("PRICING_ITEM_LATENCY_MS"),
                settings.millis("PRICING_BATCH_LATENCY_MS"));
    }
}

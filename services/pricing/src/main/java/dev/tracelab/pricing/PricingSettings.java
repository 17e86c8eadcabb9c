package dev.tracelab.pricing;

import java.time.Duration;

import org.springframework.core.env.PropertyResolver;

/**
 * Startup settings. Each one is looked up under its environment variable name, so a
 * command-line argument or a test property of the same name works as well. Unset or
 * empty means the default, which reproduces the numbers of case study 003.
 */
public record PricingSettings(int itemCount, Duration listLatency, Duration itemLatency, Duration batchLatency) {

    // Bounds keep a typo from turning into an hour-long request or a huge item list.
    private static final int MAX_ITEMS = 100_000;
    private static final int MAX_LATENCY_MS = 60_000;

    public static PricingSettings from(PropertyResolver env) {
        return new PricingSettings(
                wholeNumber(env, "PRICING_ITEM_COUNT", 1600, MAX_ITEMS),
                millis(env, "PRICING_LIST_LATENCY_MS", 400),
                millis(env, "PRICING_ITEM_LATENCY_MS", 12),
                millis(env, "PRICING_BATCH_LATENCY_MS", 12));
    }

    private static Duration millis(PropertyResolver env, String name, int fallback) {
        return Duration.ofMillis(wholeNumber(env, name, fallback, MAX_LATENCY_MS));
    }

    private static int wholeNumber(PropertyResolver env, String name, int fallback, int max) {
        String raw = env.getProperty(name, "").strip();
        if (raw.isEmpty()) {
            return fallback;
        }
        try {
            int value = Integer.parseInt(raw);
            if (value >= 0 && value <= max) {
                return value;
            }
        }
        catch (NumberFormatException ignored) {
            // reported below, with the variable's name
        }
        throw new InvalidSettingException("%s must be a whole number from 0 to %d, got '%s'".formatted(name, max, raw));
    }
}

package dev.tracelab.catalog;

import java.net.URI;
import java.net.URISyntaxException;
import java.util.Locale;

import org.springframework.core.env.PropertyResolver;

import dev.tracelab.catalog.PriceFetcher.Mode;

/**
 * Startup settings. Each one is looked up under its environment variable name, so a
 * command-line argument or a test property of the same name works as well.
 * Unset or empty means the default.
 */
public record CatalogSettings(URI pricingUrl, Mode fetchMode) {

    public static CatalogSettings from(PropertyResolver env) {
        return new CatalogSettings(pricingUrl(env), fetchMode(env));
    }

    private static URI pricingUrl(PropertyResolver env) {
        String raw = setting(env, "PRICING_URL", "http://127.0.0.1:18081");
        try {
            URI url = new URI(raw);
            if (("http".equals(url.getScheme()) || "https".equals(url.getScheme())) && url.getHost() != null) {
                return url;
            }
        }
        catch (URISyntaxException ignored) {
            // reported below, with the variable's name
        }
        throw new InvalidSettingException("PRICING_URL must be an http:// or https:// URL, got '%s'".formatted(raw));
    }

    // Sequential by default: this service exists to show the pathology.
    private static Mode fetchMode(PropertyResolver env) {
        String raw = setting(env, "CATALOG_FETCH_MODE", "sequential");
        return switch (raw.toLowerCase(Locale.ROOT)) {
            case "sequential" -> Mode.SEQUENTIAL;
            case "batch" -> Mode.BATCH;
            default -> throw new InvalidSettingException(
                    "CATALOG_FETCH_MODE must be 'sequential' or 'batch', got '%s'".formatted(raw));
        };
    }

    private static String setting(PropertyResolver env, String name, String fallback) {
        String raw = env.getProperty(name, "").strip();
        return raw.isEmpty() ? fallback : raw;
    }
}

package dev.tracelab.catalog;

import java.net.URI;

import dev.tracelab.catalog.PriceFetcher.Mode;
import dev.tracelab.settings.Settings;

/** Startup settings. Unset or empty means the default. */
public record CatalogSettings(URI pricingUrl, Mode fetchMode) {

    public static CatalogSettings from(Settings settings) {
        return new CatalogSettings(
                settings.httpUrl("PRICING_URL", "http://127.0.0.1:18081"),
                settings.oneOf("CATALOG_FETCH_MODE", Mode.class));
    }
}

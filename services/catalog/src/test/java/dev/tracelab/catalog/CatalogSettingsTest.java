package dev.tracelab.catalog;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.URI;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.boot.builder.SpringApplicationBuilder;

import dev.tracelab.catalog.PriceFetcher.Mode;
import dev.tracelab.settings.InvalidSettingException;
import dev.tracelab.settings.Settings;

class CatalogSettingsTest {

    @Test
    void defaultsAreTheLocalPricingAndThePathology() {
        assertThat(CatalogSettings.from(new Settings(name -> null)))
                .isEqualTo(new CatalogSettings(URI.create("http://127.0.0.1:18081"), Mode.SEQUENTIAL));
    }

    @Test
    void everySettingIsReadUnderItsVariableName() {
        Settings env = new Settings(Map.of(
                "PRICING_URL", "http://pricing.lab:8080",
                "CATALOG_FETCH_MODE", "batch")::get);

        assertThat(CatalogSettings.from(env))
                .isEqualTo(new CatalogSettings(URI.create("http://pricing.lab:8080"), Mode.BATCH));
    }

    @ParameterizedTest
    @ValueSource(strings = {"parallel", "x", "batched"})
    void anUnknownFetchModeIsRejected(String mode) {
        Settings env = new Settings(Map.of("CATALOG_FETCH_MODE", mode)::get);

        assertThatThrownBy(() -> CatalogSettings.from(env))
                .isInstanceOf(InvalidSettingException.class)
                .hasMessage("CATALOG_FETCH_MODE must be 'sequential' or 'batch', got '" + mode + "'");
    }

    @ParameterizedTest
    @ValueSource(strings = {"127.0.0.1:18081", "ftp://127.0.0.1", "http://", "http://bad host"})
    void aPricingUrlThatIsNotHttpIsRejected(String url) {
        Settings env = new Settings(Map.of("PRICING_URL", url)::get);

        assertThatThrownBy(() -> CatalogSettings.from(env))
                .isInstanceOf(InvalidSettingException.class)
                .hasMessage("PRICING_URL must be an http:// or https:// URL, got '" + url + "'");
    }

    @Test
    void anInvalidFetchModeStopsStartup() {
        assertThatThrownBy(() -> new SpringApplicationBuilder(CatalogApplication.class)
                .run("--server.port=0", "--CATALOG_FETCH_MODE=x"))
                .rootCause().isInstanceOf(InvalidSettingException.class)
                .hasMessage("CATALOG_FETCH_MODE must be 'sequential' or 'batch', got 'x'");
    }
}

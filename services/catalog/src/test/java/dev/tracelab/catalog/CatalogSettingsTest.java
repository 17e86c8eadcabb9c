package dev.tracelab.catalog;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.URI;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.mock.env.MockEnvironment;

import dev.tracelab.catalog.PriceFetcher.Mode;

class CatalogSettingsTest {

    @Test
    void defaultsAreTheLocalPricingAndThePathology() {
        assertThat(CatalogSettings.from(new MockEnvironment()))
                .isEqualTo(new CatalogSettings(URI.create("http://127.0.0.1:18081"), Mode.SEQUENTIAL));
    }

    @Test
    void everySettingIsReadUnderItsVariableName() {
        MockEnvironment env = new MockEnvironment()
                .withProperty("PRICING_URL", "http://pricing.lab:8080")
                .withProperty("CATALOG_FETCH_MODE", "batch");

        assertThat(CatalogSettings.from(env))
                .isEqualTo(new CatalogSettings(URI.create("http://pricing.lab:8080"), Mode.BATCH));
    }

    @ParameterizedTest
    @ValueSource(strings = {"parallel", "x", "batched"})
    void anUnknownFetchModeIsRejected(String mode) {
        MockEnvironment env = new MockEnvironment().withProperty("CATALOG_FETCH_MODE", mode);

        assertThatThrownBy(() -> CatalogSettings.from(env))
                .isInstanceOf(InvalidSettingException.class)
                .hasMessage("CATALOG_FETCH_MODE must be 'sequential' or 'batch', got '" + mode + "'");
    }

    @ParameterizedTest
    @ValueSource(strings = {"127.0.0.1:18081", "ftp://127.0.0.1", "http://", "http://bad host"})
    void aPricingUrlThatIsNotHttpIsRejected(String url) {
        MockEnvironment env = new MockEnvironment().withProperty("PRICING_URL", url);

        assertThatThrownBy(() -> CatalogSettings.from(env))
                .isInstanceOf(InvalidSettingException.class)
                .hasMessage("PRICING_URL must be an http:// or https:// URL, got '" + url + "'");
    }

    @Test
    void anInvalidFetchModeStopsStartupWithAOneLineReport() {
        assertThatThrownBy(() -> new SpringApplicationBuilder(CatalogApplication.class)
                .run("--server.port=0", "--CATALOG_FETCH_MODE=x"))
                .satisfies(failure -> {
                    FailureAnalysis analysis = new InvalidSettingException.Analyzer().analyze(failure);
                    assertThat(analysis).isNotNull();
                    assertThat(analysis.getDescription())
                            .isEqualTo("CATALOG_FETCH_MODE must be 'sequential' or 'batch', got 'x'");
                });
    }
}

package dev.tracelab.pricing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.boot.builder.SpringApplicationBuilder;

import dev.tracelab.settings.InvalidSettingException;
import dev.tracelab.settings.Settings;

class PricingSettingsTest {

    @Test
    void defaultsAreTheCaseStudyNumbers() {
        PricingSettings settings = PricingSettings.from(new Settings(name -> null));

        assertThat(settings).isEqualTo(new PricingSettings(1600,
                Duration.ofMillis(400), Duration.ofMillis(12), Duration.ofMillis(12)));
    }

    @Test
    void everySettingIsReadUnderItsVariableName() {
        Settings env = new Settings(Map.of(
                "PRICING_ITEM_COUNT", "20",
                "PRICING_LIST_LATENCY_MS", "1",
                "PRICING_ITEM_LATENCY_MS", " 2 ",
                "PRICING_BATCH_LATENCY_MS", "0")::get);

        assertThat(PricingSettings.from(env)).isEqualTo(new PricingSettings(20,
                Duration.ofMillis(1), Duration.ofMillis(2), Duration.ZERO));
    }

    @Test
    void emptyMeansDefault() {
        Settings env = new Settings(Map.of("PRICING_ITEM_COUNT", "")::get);

        assertThat(PricingSettings.from(env).itemCount()).isEqualTo(1600);
    }

    @ParameterizedTest
    @ValueSource(strings = {"-1", "abc", "1.5", "12ms", "100001"})
    void unusableValuesAreRejectedWithTheVariableName(String value) {
        Settings env = new Settings(Map.of("PRICING_ITEM_COUNT", value)::get);

        assertThatThrownBy(() -> PricingSettings.from(env))
                .isInstanceOf(InvalidSettingException.class)
                .hasMessage("PRICING_ITEM_COUNT must be a whole number from 0 to 100000, got '" + value + "'");
    }

    @Test
    void anInvalidSettingStopsStartup() {
        assertThatThrownBy(() -> new SpringApplicationBuilder(PricingApplication.class)
                .run("--server.port=0", "--PRICING_ITEM_LATENCY_MS=-5"))
                .rootCause().isInstanceOf(InvalidSettingException.class)
                .hasMessage("PRICING_ITEM_LATENCY_MS must be a whole number from 0 to 60000, got '-5'");
    }

    @Test
    void latencyIsSpentOnEveryCall() {
        PricingSettings slow = new PricingSettings(3, Duration.ZERO, Duration.ofMillis(40), Duration.ofMillis(40));
        PricingController controller = new PricingController(new PriceBook(slow), slow);

        long start = System.nanoTime();
        controller.price(1);
        controller.prices(new int[] {1, 2, 3});
        Duration spent = Duration.ofNanos(System.nanoTime() - start);

        // A lower bound only: sleeping can overrun, never underrun.
        assertThat(spent).isGreaterThanOrEqualTo(Duration.ofMillis(80));
    }
}

package dev.tracelab.settings;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.URI;
import java.time.Duration;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class SettingsTest {

    enum Mode { SEQUENTIAL, BATCH }

    enum Client { BLOCKING_ON_EVENT_LOOP, REACTIVE, VIRTUAL_THREADS }

    private static Settings with(String name, String value) {
        return new Settings(Map.of(name, value)::get);
    }

    private static final Settings UNSET = new Settings(name -> null);

    @ParameterizedTest
    @ValueSource(strings = {"", " ", "\t"})
    void unsetOrBlankMeansTheDefault(String blank) {
        Settings settings = with("X", blank);

        assertThat(settings.text("X", "events")).isEqualTo("events");
        assertThat(settings.wholeNumber("X", 7, 0, 10)).isEqualTo(7);
        assertThat(settings.oneOf("X", Mode.BATCH)).isEqualTo(Mode.BATCH);
        assertThat(settings.httpUrl("X", "http://127.0.0.1:1")).isEqualTo(URI.create("http://127.0.0.1:1"));
        assertThat(UNSET.wholeNumber("X", 7, 0, 10)).isEqualTo(7);
    }

    @Test
    void valuesAreStripped() {
        assertThat(with("X", " 2 ").wholeNumber("X", 7, 0, 10)).isEqualTo(2);
        assertThat(with("X", " topic ").text("X", "events")).isEqualTo("topic");
    }

    @Test
    void wholeNumbersIncludeTheirBounds() {
        assertThat(with("X", "100").wholeNumber("X", 5000, 100, 60_000)).isEqualTo(100);
        assertThat(with("X", "60000").wholeNumber("X", 5000, 100, 60_000)).isEqualTo(60_000);
        assertThat(with("X", "12").millis("X", 400, 0, 60_000)).isEqualTo(Duration.ofMillis(12));
    }

    @ParameterizedTest
    @ValueSource(strings = {"-1", "abc", "1.5", "12ms", "100001", "99999999999"})
    void aWholeNumberOutOfRangeOrNotANumberIsRefused(String value) {
        assertThatThrownBy(() -> with("PRICING_ITEM_COUNT", value).wholeNumber("PRICING_ITEM_COUNT", 1600, 0, 100_000))
                .isInstanceOf(InvalidSettingException.class)
                .hasMessage("PRICING_ITEM_COUNT must be a whole number from 0 to 100000, got '" + value + "'");
    }

    @Test
    void aChoiceIsItsConstantsLabelInAnyCase() {
        assertThat(with("M", "batch").oneOf("M", Mode.SEQUENTIAL)).isEqualTo(Mode.BATCH);
        assertThat(with("M", " Virtual-Threads ").oneOf("M", Client.REACTIVE)).isEqualTo(Client.VIRTUAL_THREADS);
        assertThat(Settings.label(Client.BLOCKING_ON_EVENT_LOOP)).isEqualTo("blocking-on-event-loop");
    }

    @ParameterizedTest
    @ValueSource(strings = {"batched", "BATCH_", "virtual_threads", "x"})
    void anUnknownChoiceIsRefusedWithTheChoices(String value) {
        assertThatThrownBy(() -> with("CATALOG_FETCH_MODE", value).oneOf("CATALOG_FETCH_MODE", Mode.SEQUENTIAL))
                .isInstanceOf(InvalidSettingException.class)
                .hasMessage("CATALOG_FETCH_MODE must be 'sequential' or 'batch', got '" + value + "'");
    }

    @Test
    void threeChoicesAreListedWithCommas() {
        assertThatThrownBy(() -> with("ORDERS_CUSTOMER_CLIENT", "async").oneOf("ORDERS_CUSTOMER_CLIENT", Client.REACTIVE))
                .hasMessage("ORDERS_CUSTOMER_CLIENT must be 'blocking-on-event-loop', 'reactive' or 'virtual-threads', got 'async'");
    }

    @Test
    void anHttpUrlNeedsItsSchemeAndHost() {
        assertThat(with("U", "https://pricing.lab:8443/x").httpUrl("U", "http://127.0.0.1"))
                .isEqualTo(URI.create("https://pricing.lab:8443/x"));
    }

    @ParameterizedTest
    @ValueSource(strings = {"127.0.0.1:18081", "ftp://127.0.0.1", "http://", "http://bad host"})
    void aUrlThatIsNotHttpIsRefused(String value) {
        assertThatThrownBy(() -> with("PRICING_URL", value).httpUrl("PRICING_URL", "http://127.0.0.1:18081"))
                .isInstanceOf(InvalidSettingException.class)
                .hasMessage("PRICING_URL must be an http:// or https:// URL, got '" + value + "'");
    }

    @Test
    void theRefusalCarriesItsParts() {
        InvalidSettingException e = new InvalidSettingException("N", "v", "one of them");

        assertThat(e).hasMessage("N must be one of them, got 'v'");
        assertThat(e.name()).isEqualTo("N");
        assertThat(e.value()).isEqualTo("v");
        assertThat(e.allowed()).isEqualTo("one of them");
    }
}

package dev.tracelab.settings;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.URI;
import java.time.Duration;
import java.util.Map;
import java.util.Properties;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class SettingsTest {

    enum Mode { SEQUENTIAL, BATCH }

    enum Client { BLOCKING_ON_EVENT_LOOP, REACTIVE, VIRTUAL_THREADS }

    /** What make generate would write for these settings' descriptions. */
    private static final Properties DECLARED = declared(
            "X.default=7", "X.min=0", "X.max=10",
            "TIMEOUT.default=5000", "TIMEOUT.min=100", "TIMEOUT.max=60000",
            "PRICING_ITEM_COUNT.default=1600", "PRICING_ITEM_COUNT.min=0", "PRICING_ITEM_COUNT.max=100000",
            "M.default=batch", "M.values=sequential,batch",
            "CATALOG_FETCH_MODE.default=sequential", "CATALOG_FETCH_MODE.values=sequential,batch",
            "ORDERS_CUSTOMER_CLIENT.default=reactive", "ORDERS_CUSTOMER_CLIENT.values=blocking-on-event-loop,reactive,virtual-threads",
            "HALF.default=sequential", "HALF.values=sequential");

    private static Properties declared(String... lines) {
        Properties p = new Properties();
        for (String line : lines) {
            String[] kv = line.split("=", 2);
            p.setProperty(kv[0], kv[1]);
        }
        return p;
    }

    private static Settings with(String name, String value) {
        return new Settings(Map.of(name, value)::get, DECLARED);
    }

    private static final Settings UNSET = new Settings(name -> null, DECLARED);

    @ParameterizedTest
    @ValueSource(strings = {"", " ", "\t"})
    void unsetOrBlankMeansTheDefault(String blank) {
        Settings settings = with("X", blank);

        assertThat(settings.text("X", "events")).isEqualTo("events");
        assertThat(settings.wholeNumber("X")).isEqualTo(7);
        assertThat(settings.httpUrl("X", "http://127.0.0.1:1")).isEqualTo(URI.create("http://127.0.0.1:1"));
        assertThat(with("M", blank).oneOf("M", Mode.class)).isEqualTo(Mode.BATCH);
        assertThat(UNSET.wholeNumber("X")).isEqualTo(7);
        assertThat(UNSET.millis("TIMEOUT")).isEqualTo(Duration.ofMillis(5000));
    }

    @Test
    void valuesAreStripped() {
        assertThat(with("X", " 2 ").wholeNumber("X")).isEqualTo(2);
        assertThat(with("X", " topic ").text("X", "events")).isEqualTo("topic");
    }

    @Test
    void wholeNumbersIncludeTheirBounds() {
        assertThat(with("TIMEOUT", "100").wholeNumber("TIMEOUT")).isEqualTo(100);
        assertThat(with("TIMEOUT", "60000").wholeNumber("TIMEOUT")).isEqualTo(60_000);
        assertThat(with("TIMEOUT", "120").millis("TIMEOUT")).isEqualTo(Duration.ofMillis(120));
    }

    @ParameterizedTest
    @ValueSource(strings = {"-1", "abc", "1.5", "12ms", "100001", "99999999999"})
    void aWholeNumberOutOfRangeOrNotANumberIsRefused(String value) {
        assertThatThrownBy(() -> with("PRICING_ITEM_COUNT", value).wholeNumber("PRICING_ITEM_COUNT"))
                .isInstanceOf(InvalidSettingException.class)
                .hasMessage("PRICING_ITEM_COUNT must be a whole number from 0 to 100000, got '" + value + "'");
    }

    @Test
    void aChoiceIsItsConstantsLabelInAnyCase() {
        assertThat(with("M", "sequential").oneOf("M", Mode.class)).isEqualTo(Mode.SEQUENTIAL);
        assertThat(with("ORDERS_CUSTOMER_CLIENT", " Virtual-Threads ").oneOf("ORDERS_CUSTOMER_CLIENT", Client.class))
                .isEqualTo(Client.VIRTUAL_THREADS);
        assertThat(UNSET.oneOf("ORDERS_CUSTOMER_CLIENT", Client.class)).isEqualTo(Client.REACTIVE);
        assertThat(Settings.label(Client.BLOCKING_ON_EVENT_LOOP)).isEqualTo("blocking-on-event-loop");
    }

    @ParameterizedTest
    @ValueSource(strings = {"batched", "BATCH_", "virtual_threads", "x"})
    void anUnknownChoiceIsRefusedWithTheChoices(String value) {
        assertThatThrownBy(() -> with("CATALOG_FETCH_MODE", value).oneOf("CATALOG_FETCH_MODE", Mode.class))
                .isInstanceOf(InvalidSettingException.class)
                .hasMessage("CATALOG_FETCH_MODE must be 'sequential' or 'batch', got '" + value + "'");
    }

    @Test
    void threeChoicesAreListedWithCommas() {
        assertThatThrownBy(() -> with("ORDERS_CUSTOMER_CLIENT", "async").oneOf("ORDERS_CUSTOMER_CLIENT", Client.class))
                .hasMessage("ORDERS_CUSTOMER_CLIENT must be 'blocking-on-event-loop', 'reactive' or 'virtual-threads', got 'async'");
    }

    @Test
    void aSettingTheDescriptionDoesNotDeclareIsTheCodesMistake() {
        assertThatThrownBy(() -> UNSET.wholeNumber("UNDECLARED"))
                .isInstanceOf(IllegalStateException.class)
                .hasMessage("UNDECLARED has no min in settings.properties; declare it in the service's service.yaml and run make generate");
        // So is a number read as a choice, or a choice read as a number.
        assertThatThrownBy(() -> UNSET.oneOf("X", Mode.class)).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> UNSET.wholeNumber("M")).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void theDeclaredChoicesMustBeTheEnumsConstants() {
        assertThatThrownBy(() -> with("HALF", "sequential").oneOf("HALF", Mode.class))
                .isInstanceOf(IllegalStateException.class)
                .hasMessage("HALF: the description declares [sequential], the code knows [sequential, batch]");
    }

    @Test
    void withoutAGeneratedFileNothingIsDeclared() {
        // This library's own classpath has no settings.properties.
        assertThatThrownBy(() -> new Settings(name -> "3").wholeNumber("X"))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("make generate");
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

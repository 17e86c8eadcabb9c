package dev.tracelab.orders;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.Map;

import dev.tracelab.settings.InvalidSettingException;
import dev.tracelab.settings.Settings;
import org.junit.jupiter.api.Test;

/** The settings: their values and defaults, and a typo refused with the variable's name. */
class SettingsTest {

    private static OrdersSettings read(Map<String, String> env) {
        return OrdersSettings.from(new Settings(env::get));
    }

    @Test
    void defaultsAreThePathologies() {
        assertEquals(new OrdersSettings(CustomerClient.Mode.BLOCKING_ON_EVENT_LOOP, OrderWriter.Mode.CHATTY, 2000), read(Map.of()));
    }

    @Test
    void everyModeIsReadFromItsLabel() {
        for (CustomerClient.Mode m : CustomerClient.Mode.values()) {
            assertEquals(m, read(Map.of("ORDERS_CUSTOMER_CLIENT", " " + m.label().toUpperCase() + " ")).customerClient());
        }
        for (OrderWriter.Mode m : OrderWriter.Mode.values()) {
            assertEquals(m, read(Map.of("ORDERS_PERSISTENCE", m.label())).persistence());
        }
        assertEquals("blocking-on-event-loop", CustomerClient.Mode.BLOCKING_ON_EVENT_LOOP.label());
        assertEquals("single-round-trip", OrderWriter.Mode.SINGLE_ROUND_TRIP.label());
    }

    @Test
    void anUnknownModeIsRefusedWithTheChoices() {
        assertRefused("ORDERS_CUSTOMER_CLIENT", "async",
                "ORDERS_CUSTOMER_CLIENT must be 'blocking-on-event-loop', 'reactive' or 'virtual-threads', got 'async'");
        assertRefused("ORDERS_PERSISTENCE", "batched", "ORDERS_PERSISTENCE must be 'chatty' or 'single-round-trip', got 'batched'");
    }

    @Test
    void invoiceRounds() {
        assertEquals(1, read(Map.of("ORDERS_INVOICE_ROUNDS", "1")).invoiceRounds());
        assertRefused("ORDERS_INVOICE_ROUNDS", "0", "ORDERS_INVOICE_ROUNDS must be a whole number from 1 to 10000000, got '0'");
    }

    private static void assertRefused(String name, String value, String message) {
        var e = assertThrows(InvalidSettingException.class, () -> read(Map.of(name, value)));
        assertEquals(message, e.getMessage());
    }
}

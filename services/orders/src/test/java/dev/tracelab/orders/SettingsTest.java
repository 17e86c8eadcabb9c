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
    void customerClientModes() {
        assertEquals(CustomerClient.Mode.BLOCKING_ON_EVENT_LOOP, read(Map.of("ORDERS_CUSTOMER_CLIENT", "blocking-on-event-loop")).customerClient());
        assertEquals(CustomerClient.Mode.REACTIVE, read(Map.of("ORDERS_CUSTOMER_CLIENT", " Reactive ")).customerClient());
        assertEquals(CustomerClient.Mode.VIRTUAL_THREADS, read(Map.of("ORDERS_CUSTOMER_CLIENT", "virtual-threads")).customerClient());
        var e = assertThrows(InvalidSettingException.class, () -> read(Map.of("ORDERS_CUSTOMER_CLIENT", "async")));
        assertEquals("ORDERS_CUSTOMER_CLIENT must be 'blocking-on-event-loop', 'reactive' or 'virtual-threads', got 'async'", e.getMessage());
    }

    @Test
    void persistenceModes() {
        assertEquals(OrderWriter.Mode.CHATTY, read(Map.of("ORDERS_PERSISTENCE", "chatty")).persistence());
        assertEquals(OrderWriter.Mode.SINGLE_ROUND_TRIP, read(Map.of("ORDERS_PERSISTENCE", "single-round-trip")).persistence());
        var e = assertThrows(InvalidSettingException.class, () -> read(Map.of("ORDERS_PERSISTENCE", "batched")));
        assertEquals("ORDERS_PERSISTENCE must be 'chatty' or 'single-round-trip', got 'batched'", e.getMessage());
    }

    @Test
    void invoiceRounds() {
        assertEquals(1, read(Map.of("ORDERS_INVOICE_ROUNDS", "1")).invoiceRounds());
        var e = assertThrows(InvalidSettingException.class, () -> read(Map.of("ORDERS_INVOICE_ROUNDS", "0")));
        assertEquals("ORDERS_INVOICE_ROUNDS must be a whole number from 1 to 10000000, got '0'", e.getMessage());
    }
}

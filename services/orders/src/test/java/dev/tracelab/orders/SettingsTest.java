package dev.tracelab.orders;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** The two mode settings: their values, and a typo stopping the service with the variable's name. */
class SettingsTest {

    @Test
    void customerClientModes() {
        assertEquals(CustomerClient.Mode.BLOCKING_ON_EVENT_LOOP, CustomerClient.Mode.parse("blocking-on-event-loop"));
        assertEquals(CustomerClient.Mode.REACTIVE, CustomerClient.Mode.parse(" Reactive "));
        assertEquals(CustomerClient.Mode.VIRTUAL_THREADS, CustomerClient.Mode.parse("virtual-threads"));
        var e = assertThrows(IllegalArgumentException.class, () -> CustomerClient.Mode.parse("async"));
        assertTrue(e.getMessage().startsWith("ORDERS_CUSTOMER_CLIENT must be"), e.getMessage());
    }

    @Test
    void persistenceModes() {
        assertEquals(OrderWriter.Mode.CHATTY, OrderWriter.Mode.parse("chatty"));
        assertEquals(OrderWriter.Mode.SINGLE_ROUND_TRIP, OrderWriter.Mode.parse("single-round-trip"));
        var e = assertThrows(IllegalArgumentException.class, () -> OrderWriter.Mode.parse("batched"));
        assertTrue(e.getMessage().startsWith("ORDERS_PERSISTENCE must be"), e.getMessage());
    }
}

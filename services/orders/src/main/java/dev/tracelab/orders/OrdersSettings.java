package dev.tracelab.orders;

import dev.tracelab.settings.Settings;

/** Startup settings; {@link StartupSettings} reads them once, when the service starts. */
public record OrdersSettings(CustomerClient.Mode customerClient, OrderWriter.Mode persistence, int invoiceRounds) {

    static OrdersSettings from(Settings settings) {
        return new OrdersSettings(
                // The pathologies by default: this service exists to show them.
                settings.oneOf("ORDERS_CUSTOMER_CLIENT", CustomerClient.Mode.BLOCKING_ON_EVENT_LOOP),
                settings.oneOf("ORDERS_PERSISTENCE", OrderWriter.Mode.CHATTY),
                settings.wholeNumber("ORDERS_INVOICE_ROUNDS", 2000, 1, 10_000_000));
    }
}

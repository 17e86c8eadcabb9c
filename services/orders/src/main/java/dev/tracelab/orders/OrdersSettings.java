package dev.tracelab.orders;

import dev.tracelab.settings.Settings;

/** Startup settings; {@link StartupSettings} reads them once, when the service starts. */
public record OrdersSettings(CustomerClient.Mode customerClient, OrderWriter.Mode persistence, int invoiceRounds) {

    static OrdersSettings from(Settings settings) {
        return new OrdersSettings(
                settings.oneOf("ORDERS_CUSTOMER_CLIENT", CustomerClient.Mode.class),
                settings.oneOf("ORDERS_PERSISTENCE", OrderWriter.Mode.class),
                settings.wholeNumber("ORDERS_INVOICE_ROUNDS"));
    }
}

package dev.tracelab.catalog;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;

public record CatalogSummary(int items, String currency, BigDecimal total, List<Line> lines) {

    public record Line(int id, String sku, String name, BigDecimal price) {
    }

    /** Joins items with their prices, which must come in the same order. */
    static CatalogSummary of(List<Item> items, List<Price> prices) {
        if (prices.size() != items.size()) {
            throw new IllegalStateException("pricing answered %d prices for %d items".formatted(prices.size(), items.size()));
        }
        List<Line> lines = new ArrayList<>(items.size());
        BigDecimal total = BigDecimal.ZERO;
        String currency = null;
        for (int i = 0; i < items.size(); i++) {
            Item item = items.get(i);
            Price price = prices.get(i);
            if (price.id() != item.id()) {
                throw new IllegalStateException("expected the price of item %d, got item %d".formatted(item.id(), price.id()));
            }
            // The lab has no exchange rates: a total over mixed currencies would be wrong.
            if (currency != null && !currency.equals(price.currency())) {
                throw new IllegalStateException("prices in both %s and %s".formatted(currency, price.currency()));
            }
            currency = price.currency();
            lines.add(new Line(item.id(), item.sku(), item.name(), price.price()));
            total = total.add(price.price());
        }
        return new CatalogSummary(items.size(), currency, total, lines);
    }
}

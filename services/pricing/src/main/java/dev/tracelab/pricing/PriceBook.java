package dev.tracelab.pricing;

import java.math.BigDecimal;
import java.util.List;
import java.util.Optional;
import java.util.stream.IntStream;

import org.springframework.stereotype.Component;

/**
 * The downstream's data. Items and prices are pure functions of the id, so every
 * run, and both of catalog's fetch modes, see exactly the same numbers.
 */
@Component
public class PriceBook {

    static final String CURRENCY = "EUR";

    private static final String[] FINISHES = {"Brass", "Steel", "Oak", "Copper", "Walnut", "Granite", "Linen", "Cobalt"};
    private static final String[] KINDS = {"Hinge", "Bracket", "Shelf", "Lamp", "Handle", "Crate", "Bench", "Hook", "Rail", "Vase"};

    private final List<Item> items;

    public PriceBook(PricingSettings settings) {
        items = IntStream.rangeClosed(1, settings.itemCount()).mapToObj(PriceBook::item).toList();
    }

    public List<Item> items() {
        return items;
    }

    public Optional<Price> price(int id) {
        if (id < 1 || id > items.size()) {
            return Optional.empty();
        }
        return Optional.of(new Price(id, amount(id), CURRENCY));
    }

    private static Item item(int id) {
        String name = FINISHES[id % FINISHES.length] + " " + KINDS[(id / FINISHES.length) % KINDS.length];
        return new Item(id, "SKU-%05d".formatted(id), name);
    }

    // MurmurHash3's 32-bit finalizer spreads neighbouring ids over the whole range,
    // so prices look arbitrary yet never change between runs or JVMs.
    static BigDecimal amount(int id) {
        int h = id;
        h ^= h >>> 16;
        h *= 0x85ebca6b;
        h ^= h >>> 13;
        h *= 0xc2b2ae35;
        h ^= h >>> 16;
        long cents = 100 + Integer.toUnsignedLong(h) % 49_900; // 1.00 to 499.99
        return BigDecimal.valueOf(cents, 2);
    }
}

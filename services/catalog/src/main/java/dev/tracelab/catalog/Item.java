package dev.tracelab.catalog;

/** An item as pricing lists it. */
public record Item(int id, String sku, String name) {
}

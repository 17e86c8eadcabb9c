package dev.tracelab.pricing;

public record Item(int id, String sku, String name) {
}

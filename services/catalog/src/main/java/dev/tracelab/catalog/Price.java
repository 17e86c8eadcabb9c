package dev.tracelab.catalog;

import java.math.BigDecimal;

/** A price as pricing answers it. */
public record Price(int id, BigDecimal price, String currency) {
}

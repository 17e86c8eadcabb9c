package dev.tracelab.pricing;

import java.math.BigDecimal;

public record Price(int id, BigDecimal price, String currency) {
}

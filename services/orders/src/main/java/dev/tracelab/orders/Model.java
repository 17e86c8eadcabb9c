package dev.tracelab.orders;

import java.util.ArrayList;
import java.util.List;

/** The service's JSON shapes. */
final class Model {

    private Model() {
    }

    /** The body of POST /orders. */
    record NewOrder(Long customerId, List<NewLine> lines) {

        /** Checks what can be checked without asking anyone, so nothing is written for a bad request. */
        void validate() {
            if (customerId == null) {
                throw Rejected.badRequest("customerId is required");
            }
            if (lines == null || lines.isEmpty()) {
                throw Rejected.badRequest("an order needs at least one line");
            }
            for (int i = 0; i < lines.size(); i++) {
                NewLine line = lines.get(i);
                if (line == null || line.productId() == null || line.quantity() == null) {
                    throw Rejected.badRequest("line " + (i + 1) + " needs productId and quantity");
                }
                if (line.quantity() <= 0) {
                    throw Rejected.badRequest("line " + (i + 1) + ": quantity must be positive, got " + line.quantity());
                }
            }
        }

        long[] productIds() {
            return lines.stream().mapToLong(NewLine::productId).toArray();
        }

        int[] quantities() {
            return lines.stream().mapToInt(NewLine::quantity).toArray();
        }
    }

    record NewLine(Long productId, Integer quantity) {
    }

    /** What customers answers about a customer. */
    record Customer(long id, String name) {
    }

    /** An order as POST returns it and GET reads it. */
    record Order(long id, long customerId, String customerName, List<Line> lines, long totalCents) {
    }

    record Line(int lineNo, long productId, String productName, int quantity, long unitPriceCents, long lineTotalCents) {
    }

    /** GET /orders/{id}: the order and the digest its invoice is signed with. */
    record Invoice(Order order, String digest) {
    }

    record Problem(String error) {
    }

    static List<Line> priced(NewOrder order, List<String> names, List<Long> prices) {
        List<Line> lines = new ArrayList<>(order.lines().size());
        for (int i = 0; i < order.lines().size(); i++) {
            NewLine l = order.lines().get(i);
            lines.add(new Line(i + 1, l.productId(), names.get(i), l.quantity(), prices.get(i), prices.get(i) * l.quantity()));
        }
        return lines;
    }
}

package dev.tracelab.ingest;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.kafka.clients.producer.RecordMetadata;
import org.springframework.http.HttpStatus;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * POST /events: validates one event, publishes it with a fresh id, and answers
 * 202 only after the broker acknowledged it. A bad event is refused before
 * anything reaches the producer.
 */
@RestController
class EventsController {

    /** The event is not one the ledger could store: 400 or 413, nothing published. */
    static class BadEvent extends RuntimeException {
        final HttpStatus status;

        BadEvent(HttpStatus status, String message) {
            super(message);
            this.status = status;
        }
    }

    record Accepted(String id, int partition, long offset) {
    }

    record Stats(String profile, long accepted, long rejected, long unavailable) {
    }

    private static final JsonMapper JSON = JsonMapper.shared();
    private final EventPublisher publisher;
    private final AtomicLong accepted = new AtomicLong();
    private final AtomicLong rejected = new AtomicLong();
    private final AtomicLong unavailable = new AtomicLong();

    EventsController(EventPublisher publisher) {
        this.publisher = publisher;
    }

    @PostMapping("/events")
    ResponseEntity<Accepted> publish(@RequestBody(required = false) byte[] body) {
        Map<String, Object> event = validate(body);
        String id = UUID.randomUUID().toString();
        event.put("id", id);
        event.put("received_at", Instant.now().toString());
        RecordMetadata ack = publisher.publish((String) event.get("source"), JSON.writeValueAsBytes(event));
        accepted.incrementAndGet();
        return ResponseEntity.accepted().body(new Accepted(id, ack.partition(), ack.offset()));
    }

    /** What this process answered since it started; the scenario counts with the ledger, not with this. */
    @GetMapping("/events/stats")
    Stats stats() {
        return new Stats(publisher.settings().profile().label(), accepted.get(), rejected.get(), unavailable.get());
    }

    private Map<String, Object> validate(byte[] body) {
        int max = publisher.settings().maxEventBytes();
        if (body == null || body.length == 0) {
            throw new BadEvent(HttpStatus.BAD_REQUEST, "empty body; send one JSON event {\"type\":…,\"source\":…,\"payload\":{…}}");
        }
        if (body.length > max) {
            throw new BadEvent(HttpStatus.CONTENT_TOO_LARGE,
                    "event of %d bytes is larger than INGEST_MAX_EVENT_BYTES (%d)".formatted(body.length, max));
        }
        JsonNode node;
        try {
            node = JSON.readTree(new String(body, StandardCharsets.UTF_8));
        } catch (JacksonException e) {
            throw new BadEvent(HttpStatus.BAD_REQUEST, "body is not JSON: " + e.getOriginalMessage());
        }
        if (node == null || !node.isObject()) {
            throw new BadEvent(HttpStatus.BAD_REQUEST, "an event is a JSON object");
        }
        Map<String, Object> event = new LinkedHashMap<>();
        for (String field : new String[] {"type", "source"}) {
            JsonNode v = node.get(field);
            if (v == null || !v.isString() || v.asString().isBlank() || v.asString().length() > 100) {
                throw new BadEvent(HttpStatus.BAD_REQUEST, "field " + field + ": a non-empty string of at most 100 characters is required");
            }
            event.put(field, v.asString());
        }
        JsonNode payload = node.get("payload");
        if (payload != null && !payload.isObject()) {
            throw new BadEvent(HttpStatus.BAD_REQUEST, "field payload: must be a JSON object");
        }
        event.put("payload", payload == null ? Map.of() : payload);
        return event;
    }

    @ExceptionHandler
    ResponseEntity<ProblemDetail> badEvent(BadEvent e) {
        rejected.incrementAndGet();
        return ResponseEntity.status(e.status).body(ProblemDetail.forStatusAndDetail(e.status, e.getMessage()));
    }

    @ExceptionHandler
    ResponseEntity<ProblemDetail> brokerUnavailable(EventPublisher.Unavailable e) {
        unavailable.incrementAndGet();
        return ResponseEntity.status(HttpStatus.SERVICE_UNAVAILABLE)
                .body(ProblemDetail.forStatusAndDetail(HttpStatus.SERVICE_UNAVAILABLE, e.getMessage()));
    }
}

package dev.tracelab.ledger;

import java.sql.Timestamp;
import java.time.Instant;
import java.util.Map;
import java.util.UUID;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.kafka.annotation.KafkaListener;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The consumer side of case study 001's pipeline: every event ingest
 * published is stored here, once. GET /events/count is what the
 * kafka-batching scenario compares with the events ingest accepted.
 */
@SpringBootApplication
@RestController
public class LedgerApplication {

    private static final JsonMapper JSON = JsonMapper.shared();
    private final JdbcTemplate db;

    LedgerApplication(JdbcTemplate db) {
        this.db = db;
    }

    public static void main(String[] args) {
        SpringApplication.run(LedgerApplication.class, args);
    }

    @KafkaListener(topics = "${INGEST_TOPIC:events}")
    void store(String value) {
        JsonNode e = JSON.readTree(value);
        db.update("""
                INSERT INTO events (id, type, source, payload, received_at) VALUES (?, ?, ?, ?::jsonb, ?)
                ON CONFLICT (id) DO NOTHING""",
                UUID.fromString(e.get("id").asString()), e.get("type").asString(), e.get("source").asString(),
                e.get("payload").toString(), Timestamp.from(Instant.parse(e.get("received_at").asString())));
    }

    @GetMapping("/events/count")
    Map<String, Long> count() {
        return Map.of("stored", db.queryForObject("SELECT count(*) FROM events", Long.class));
    }
}

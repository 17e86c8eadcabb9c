package dev.tracelab.ingest;

import java.time.Duration;

import org.springframework.core.env.PropertyResolver;

/** Startup settings, read under their environment variable names. */
record IngestSettings(ProducerProfile profile, String bootstrapServers, String topic, Duration publishTimeout,
        int maxEventBytes) {

    static IngestSettings from(PropertyResolver env) {
        return new IngestSettings(
                ProducerProfile.parse(env.getProperty("INGEST_PRODUCER_PROFILE", "tuned").strip()),
                env.getProperty("KAFKA_BOOTSTRAP_SERVERS", "127.0.0.1:" + env.getProperty("KAFKA_PORT", "19092")).strip(),
                env.getProperty("INGEST_TOPIC", "events").strip(),
                Duration.ofMillis(number(env, "INGEST_PUBLISH_TIMEOUT_MS", 5000, 100, 60_000)),
                number(env, "INGEST_MAX_EVENT_BYTES", 4096, 64, 1_000_000));
    }

    private static int number(PropertyResolver env, String name, int fallback, int min, int max) {
        String raw = env.getProperty(name, "").strip();
        if (raw.isEmpty()) {
            return fallback;
        }
        try {
            int value = Integer.parseInt(raw);
            if (value >= min && value <= max) {
                return value;
            }
        } catch (NumberFormatException ignored) {
            // reported below, with the variable's name
        }
        throw new IllegalArgumentException("%s must be a whole number from %d to %d, got '%s'".formatted(name, min, max, raw));
    }
}

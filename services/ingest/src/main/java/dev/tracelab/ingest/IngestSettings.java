package dev.tracelab.ingest;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

import org.springframework.core.env.PropertyResolver;

/** Startup settings, read under their environment variable names. */
record IngestSettings(ProducerProfile profile, Map<String, String> overrides, String bootstrapServers, String topic,
        Duration publishTimeout, int maxEventBytes) {

    static IngestSettings from(PropertyResolver env) {
        return new IngestSettings(
                ProducerProfile.parse(env.getProperty("INGEST_PRODUCER_PROFILE", "tuned").strip()),
                overrides(env.getProperty("INGEST_PRODUCER_OVERRIDES", "")),
                // Through toxiproxy's kafka proxy by default, so every produce
                // round trip pays KAFKA_LATENCY_MS, as over a network.
                env.getProperty("KAFKA_BOOTSTRAP_SERVERS", "127.0.0.1:" + env.getProperty("KAFKA_PROXY_PORT", "19095")).strip(),
                env.getProperty("INGEST_TOPIC", "events").strip(),
                Duration.ofMillis(number(env, "INGEST_PUBLISH_TIMEOUT_MS", 5000, 100, 60_000)),
                number(env, "INGEST_MAX_EVENT_BYTES", 4096, 64, 1_000_000));
    }

    /**
     * INGEST_PRODUCER_OVERRIDES: producer settings over the profile's, e.g.
     * "batch.size=4096,linger.ms=1", for trying the knobs without a rebuild.
     * acks and idempotence cannot be overridden.
     */
    static Map<String, String> overrides(String raw) {
        Map<String, String> out = new LinkedHashMap<>();
        for (String pair : raw.split(",")) {
            if (pair.isBlank()) {
                continue;
            }
            String[] kv = pair.split("=", 2);
            String key = kv[0].strip();
            if (kv.length != 2 || key.isEmpty() || kv[1].isBlank()) {
                throw new IllegalArgumentException("INGEST_PRODUCER_OVERRIDES must be name=value pairs separated by commas, got '%s'".formatted(pair));
            }
            if (key.equals("acks") || key.equals("enable.idempotence")) {
                throw new IllegalArgumentException("INGEST_PRODUCER_OVERRIDES cannot change %s: both profiles are acks=all and idempotent".formatted(key));
            }
            out.put(key, kv[1].strip());
        }
        return out;
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

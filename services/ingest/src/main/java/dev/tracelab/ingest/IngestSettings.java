package dev.tracelab.ingest;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

import dev.tracelab.settings.InvalidSettingException;
import dev.tracelab.settings.Settings;

/** Startup settings. */
record IngestSettings(ProducerProfile profile, Map<String, String> overrides, String bootstrapServers, String topic,
        Duration publishTimeout, int maxEventBytes) {

    private static final String OVERRIDES = "INGEST_PRODUCER_OVERRIDES";

    static IngestSettings from(Settings settings) {
        return new IngestSettings(
                settings.oneOf("INGEST_PRODUCER_PROFILE", ProducerProfile.class),
                overrides(settings.text(OVERRIDES, "")),
                // Through toxiproxy's kafka proxy by default, so every produce
                // round trip pays KAFKA_LATENCY_MS, as over a network.
                settings.text("KAFKA_BOOTSTRAP_SERVERS", "127.0.0.1:" + settings.text("KAFKA_PROXY_PORT", "19095")),
                settings.text("INGEST_TOPIC", "events"),
                settings.millis("INGEST_PUBLISH_TIMEOUT_MS"),
                settings.wholeNumber("INGEST_MAX_EVENT_BYTES"));
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
                throw new InvalidSettingException(OVERRIDES, pair.strip(), "name=value pairs separated by commas");
            }
            if (key.equals("acks") || key.equals("enable.idempotence")) {
                throw new InvalidSettingException(OVERRIDES, pair.strip(),
                        "producer settings other than acks and enable.idempotence (both profiles are acks=all and idempotent)");
            }
            out.put(key, kv[1].strip());
        }
        return out;
    }
}

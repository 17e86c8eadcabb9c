package dev.tracelab.ingest;

import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.core.env.Environment;
import org.springframework.stereotype.Component;

import dev.tracelab.settings.spring.SpringSettings;

/**
 * Publishes an event and waits for the broker's acknowledgement, never longer
 * than the publish timeout: a blocked send() (no metadata, no buffer memory)
 * and the wait for the acknowledgement share one deadline.
 */
@Component
class EventPublisher implements DisposableBean {

    /** The broker did not acknowledge in time, or cannot be reached. */
    static class Unavailable extends RuntimeException {
        Unavailable(String message, Throwable cause) {
            super(message, cause);
        }
    }

    private final IngestSettings settings;
    private final KafkaProducer<String, byte[]> producer;

    EventPublisher(Environment env) {
        this.settings = IngestSettings.from(SpringSettings.of(env));
        this.producer = new KafkaProducer<>(config(settings), new StringSerializer(), new ByteArraySerializer());
    }

    static Map<String, Object> config(IngestSettings s) {
        Map<String, Object> c = new HashMap<>(s.profile().settings());
        c.putAll(s.overrides());
        c.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, s.bootstrapServers());
        c.put(ProducerConfig.CLIENT_ID_CONFIG, "ingest-" + s.profile().label());
        c.put(ProducerConfig.ACKS_CONFIG, "all");
        c.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        // Queue rather than fail: a send() may wait for buffer memory as long
        // as the request may wait in total.
        c.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, s.publishTimeout().toMillis());
        c.put(ProducerConfig.MAX_REQUEST_SIZE_CONFIG, Math.max(1_048_576, 2 * s.maxEventBytes()));
        // The client's averages (records per request, batch size, queue time)
        // cover its last 15 s in one-second samples, not the default 30-60 s:
        // a scenario's 20 s of load must not be averaged with the one-record
        // requests of the sequential warm-up just before it, and 15 s still
        // reaches back into the load when the runner reads them 5-10 s after.
        c.put(ProducerConfig.METRICS_SAMPLE_WINDOW_MS_CONFIG, 1000L);
        c.put(ProducerConfig.METRICS_NUM_SAMPLES_CONFIG, 15);
        return c;
    }

    IngestSettings settings() {
        return settings;
    }

    RecordMetadata publish(String key, byte[] value) {
        long deadline = System.nanoTime() + settings.publishTimeout().toNanos();
        Future<RecordMetadata> ack;
        try {
            ack = producer.send(new ProducerRecord<>(settings.topic(), key, value));
        } catch (KafkaException e) {
            throw unavailable(e);
        }
        try {
            return ack.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (java.util.concurrent.TimeoutException e) {
            throw unavailable(e);
        } catch (ExecutionException e) {
            throw unavailable(e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw unavailable(e);
        }
    }

    private Unavailable unavailable(Throwable cause) {
        String why = cause.getMessage() == null ? cause.getClass().getSimpleName() : cause.getMessage();
        return new Unavailable("Kafka at %s did not acknowledge the event on topic %s within %d ms (INGEST_PUBLISH_TIMEOUT_MS): %s"
                .formatted(settings.bootstrapServers(), settings.topic(), settings.publishTimeout().toMillis(), why), cause);
    }

    @Override
    public void destroy() {
        producer.close(java.time.Duration.ofSeconds(5));
    }
}

package dev.tracelab.ingest;

import java.util.Map;

import org.apache.kafka.clients.producer.ProducerConfig;

import dev.tracelab.settings.Settings;

/**
 * The two producer configurations the kafka-batching scenario compares
 * (INGEST_PRODUCER_PROFILE). Both are durable: acks=all and idempotence, so an
 * acknowledged event is on the broker once, whatever the profile.
 *
 * <p>How the producer spends its time: send() appends the record to a batch of
 * its partition (RecordAccumulator; one lock per partition's queue, and a
 * buffer pool with one lock for memory); one sender thread drains batches into
 * produce requests, at most max.in.flight.requests.per.connection unanswered
 * per broker and one batch per partition per request. Every request thread
 * then waits for its batch's acknowledgement.
 */
enum ProducerProfile {

    /**
     * Case study 001's pathology: batch and buffer too small for the rate.
     * A batch holds at most batch.size bytes (one of the load's ~330-byte events),
     * and linger.ms=0 sends it at once, so every round trip carries one record.
     * One request in flight serializes those round trips: the producer's
     * capacity is one event per round trip (in the lab, toxiproxy's
     * KAFKA_LATENCY_MS plus a little CPU, about 45 events/s). With
     * buffer.memory at a few batches, a burst fills the buffer and the request
     * threads queue in the buffer pool (its waiting-threads metric) behind the
     * sender, instead of failing: max.block.ms is the publish timeout. At a
     * uniform rate below the round-trip capacity nothing of this shows.
     */
    SMALL_BATCHES(Map.of(
            ProducerConfig.BATCH_SIZE_CONFIG, 512,
            ProducerConfig.LINGER_MS_CONFIG, 0,
            ProducerConfig.BUFFER_MEMORY_CONFIG, 2048,
            ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, 1)),

    /**
     * The fix, as the case made it: larger batches and buffer, and a linger.
     * The same one request in flight as SMALL_BATCHES, so the gain is the
     * batching alone: the records that arrive while a request is in flight,
     * or while its successor lingers, leave together in the next request,
     * and a 64 KiB batch takes a burst's worth of them (a few hundred
     * events) where 512 bytes took one. linger.ms 50 is longer than the gap
     * between two arrivals between the spikes (40-44 ms at the scenario's
     * base rate), so two of them share a request even there; shorter, they
     * would each still take a round trip of their own, and only the spikes
     * would batch (1.1 records per request measured with 20 ms). At the
     * case's scale (round trips 20 times shorter) it is 2.5 ms. 32 MiB of
     * buffer never runs out at these rates: no request thread waits for
     * memory.
     */
    TUNED(Map.of(
            ProducerConfig.BATCH_SIZE_CONFIG, 65536,
            ProducerConfig.LINGER_MS_CONFIG, 50,
            ProducerConfig.BUFFER_MEMORY_CONFIG, 33554432,
            ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, 1));

    private final Map<String, Object> settings;

    ProducerProfile(Map<String, Object> settings) {
        this.settings = settings;
    }

    /** The profile's settings; the durability settings are the same for both. */
    Map<String, Object> settings() {
        return settings;
    }

    /** small-batches or tuned, as INGEST_PRODUCER_PROFILE spells it. */
    String label() {
        return Settings.label(this);
    }
}

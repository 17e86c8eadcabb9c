package dev.tracelab.ingest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;

import org.apache.kafka.clients.producer.ProducerConfig;
import org.junit.jupiter.api.Test;
import org.springframework.mock.env.MockEnvironment;

class ProducerConfigTest {

    private static IngestSettings settings(String... kv) {
        MockEnvironment env = new MockEnvironment();
        for (int i = 0; i < kv.length; i += 2) {
            env.setProperty(kv[i], kv[i + 1]);
        }
        return IngestSettings.from(env);
    }

    @Test
    void bothProfilesAreDurable() {
        for (String profile : new String[] {"small-batches", "tuned"}) {
            Map<String, Object> c = EventPublisher.config(settings("INGEST_PRODUCER_PROFILE", profile, "INGEST_PUBLISH_TIMEOUT_MS", "2500"));
            assertThat(c).containsEntry(ProducerConfig.ACKS_CONFIG, "all")
                    .containsEntry(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true)
                    .containsEntry(ProducerConfig.MAX_BLOCK_MS_CONFIG, 2500L);
        }
    }

    @Test
    void smallBatchesBatchLessThanTuned() {
        Map<String, Object> small = ProducerProfile.SMALL_BATCHES.settings();
        Map<String, Object> tuned = ProducerProfile.TUNED.settings();
        assertThat((Integer) small.get(ProducerConfig.BATCH_SIZE_CONFIG)).isLessThan((Integer) tuned.get(ProducerConfig.BATCH_SIZE_CONFIG));
        assertThat((Integer) small.get(ProducerConfig.BUFFER_MEMORY_CONFIG)).isLessThan((Integer) tuned.get(ProducerConfig.BUFFER_MEMORY_CONFIG));
        assertThat(small.get(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION)).isEqualTo(1);
    }

    @Test
    void overridesApplyButNeverToDurability() {
        Map<String, Object> c = EventPublisher.config(settings("INGEST_PRODUCER_PROFILE", "small-batches", "INGEST_PRODUCER_OVERRIDES", "batch.size=4096, linger.ms=2"));
        assertThat(c).containsEntry("batch.size", "4096").containsEntry("linger.ms", "2");
        assertThatThrownBy(() -> settings("INGEST_PRODUCER_OVERRIDES", "acks=1")).hasMessageContaining("cannot change acks");
        assertThatThrownBy(() -> settings("INGEST_PRODUCER_OVERRIDES", "batch.size")).hasMessageContaining("name=value");
    }

    @Test
    void badSettingsNameTheVariable() {
        assertThatThrownBy(() -> settings("INGEST_PRODUCER_PROFILE", "huge-batches")).hasMessageContaining("INGEST_PRODUCER_PROFILE");
        assertThatThrownBy(() -> settings("INGEST_PUBLISH_TIMEOUT_MS", "0")).hasMessageContaining("INGEST_PUBLISH_TIMEOUT_MS");
    }
}

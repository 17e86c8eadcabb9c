package dev.tracelab.ingest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HashMap;
import java.util.Map;

import org.apache.kafka.clients.producer.ProducerConfig;
import org.junit.jupiter.api.Test;
import org.springframework.boot.builder.SpringApplicationBuilder;

import dev.tracelab.settings.InvalidSettingException;
import dev.tracelab.settings.Settings;

class ProducerConfigTest {

    private static IngestSettings settings(String... kv) {
        Map<String, String> env = new HashMap<>();
        for (int i = 0; i < kv.length; i += 2) {
            env.put(kv[i], kv[i + 1]);
        }
        return IngestSettings.from(new Settings(env::get));
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
        // The fix is the batching alone: both serialize their round trips.
        assertThat(small.get(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION)).isEqualTo(1);
        assertThat(tuned.get(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION)).isEqualTo(1);
    }

    @Test
    void overridesApplyButNeverToDurability() {
        Map<String, Object> c = EventPublisher.config(settings("INGEST_PRODUCER_PROFILE", "small-batches", "INGEST_PRODUCER_OVERRIDES", "batch.size=4096, linger.ms=2"));
        assertThat(c).containsEntry("batch.size", "4096").containsEntry("linger.ms", "2");
        assertThatThrownBy(() -> settings("INGEST_PRODUCER_OVERRIDES", "linger.ms=1, acks=1"))
                .isInstanceOf(InvalidSettingException.class)
                .hasMessage("INGEST_PRODUCER_OVERRIDES must be producer settings other than acks and enable.idempotence"
                        + " (both profiles are acks=all and idempotent), got 'acks=1'");
        assertThatThrownBy(() -> settings("INGEST_PRODUCER_OVERRIDES", "batch.size"))
                .isInstanceOf(InvalidSettingException.class)
                .hasMessage("INGEST_PRODUCER_OVERRIDES must be name=value pairs separated by commas, got 'batch.size'");
    }

    @Test
    void badSettingsNameTheVariable() {
        assertThatThrownBy(() -> settings("INGEST_PRODUCER_PROFILE", "huge-batches"))
                .isInstanceOf(InvalidSettingException.class)
                .hasMessage("INGEST_PRODUCER_PROFILE must be 'small-batches' or 'tuned', got 'huge-batches'");
        assertThatThrownBy(() -> settings("INGEST_PUBLISH_TIMEOUT_MS", "0"))
                .isInstanceOf(InvalidSettingException.class)
                .hasMessage("INGEST_PUBLISH_TIMEOUT_MS must be a whole number from 100 to 60000, got '0'");
    }

    @Test
    void emptyMeansTheDefault() {
        IngestSettings s = settings("INGEST_PRODUCER_PROFILE", "", "INGEST_TOPIC", " ");
        assertThat(s.profile()).isEqualTo(ProducerProfile.TUNED);
        assertThat(s.topic()).isEqualTo("events");
    }

    // The producer is made in a bean's constructor, before anything reaches Kafka,
    // so a bad setting stops startup even with no broker around.
    @Test
    void aBadSettingStopsStartup() {
        assertThatThrownBy(() -> new SpringApplicationBuilder(IngestApplication.class)
                .run("--server.port=0", "--INGEST_PRODUCER_PROFILE=huge"))
                .rootCause().isInstanceOf(InvalidSettingException.class)
                .hasMessage("INGEST_PRODUCER_PROFILE must be 'small-batches' or 'tuned', got 'huge'");
    }
}

package dev.tracelab.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.concurrent.ForkJoinPool;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.mock.env.MockEnvironment;

import dev.tracelab.settings.InvalidSettingException;

// The common pool is one per JVM and is sized once, so these tests never try
// to resize it: they check the reading of the setting and the refusal to
// pretend when the pool has already started.
class CommonPoolParallelismTest {

    @Test
    void theJvmsOwnSizeIsTheDefault() {
        assertThat(CommonPoolParallelism.from(new MockEnvironment())).isEqualTo(CommonPoolParallelism.JVM_DEFAULT);
    }

    @Test
    void aWholeNumberIsRead() {
        MockEnvironment env = new MockEnvironment().withProperty(CommonPoolParallelism.SETTING, "64");
        assertThat(CommonPoolParallelism.from(env)).isEqualTo(64);
    }

    @ParameterizedTest
    @ValueSource(strings = {"-1", "257", "many"})
    void aValueOutOfRangeIsRejected(String value) {
        MockEnvironment env = new MockEnvironment().withProperty(CommonPoolParallelism.SETTING, value);
        assertThatThrownBy(() -> CommonPoolParallelism.from(env))
                .isInstanceOf(InvalidSettingException.class)
                .hasMessage("GATEWAY_COMMON_POOL_PARALLELISM must be a whole number from 0 to 256, got '" + value + "'");
    }

    @Test
    void aPoolThatAlreadyStartedIsNotPretendedResized() {
        int started = ForkJoinPool.commonPool().getParallelism();
        try {
            assertThatCode(() -> CommonPoolParallelism.apply(started)).doesNotThrowAnyException();
            assertThatThrownBy(() -> CommonPoolParallelism.apply(started + 7))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("came too late");
        }
        finally {
            System.clearProperty(CommonPoolParallelism.JVM_PROPERTY);
        }
    }

    @Test
    void anInvalidValueStopsStartup() {
        assertThatThrownBy(() -> new SpringApplicationBuilder(GatewayApplication.class)
                .run("--server.port=0", "--GATEWAY_COMMON_POOL_PARALLELISM=x"))
                .isInstanceOf(InvalidSettingException.class)
                .hasMessage("GATEWAY_COMMON_POOL_PARALLELISM must be a whole number from 0 to 256, got 'x'");
    }
}

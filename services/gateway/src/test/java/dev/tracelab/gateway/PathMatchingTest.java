package dev.tracelab.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.mock.env.MockEnvironment;

import dev.tracelab.gateway.PathMatching.Strategy;
import dev.tracelab.settings.InvalidSettingException;

class PathMatchingTest {

    @Test
    void antIsTheDefault() {
        assertThat(Strategy.from(new MockEnvironment())).isEqualTo(Strategy.ANT);
    }

    @Test
    void eachSettingMapsToSpringsProperty() {
        for (Strategy s : Strategy.values()) {
            MockEnvironment env = new MockEnvironment().withProperty(PathMatching.SETTING, s.setting());
            new PathMatching().postProcessEnvironment(env, null);
            assertThat(env.getProperty(PathMatching.SPRING_PROPERTY))
                    .isEqualTo(s == Strategy.ANT ? "ant_path_matcher" : "path_pattern_parser");
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"regex", "path_pattern_parser", "antpath"})
    void anUnknownStrategyIsRejected(String value) {
        MockEnvironment env = new MockEnvironment().withProperty(PathMatching.SETTING, value);
        assertThatThrownBy(() -> Strategy.from(env))
                .isInstanceOf(InvalidSettingException.class)
                .hasMessage("GATEWAY_PATH_MATCHING must be 'ant' or 'path-pattern', got '" + value + "'");
    }

    @Test
    void anInvalidStrategyStopsStartup() {
        assertThatThrownBy(() -> new SpringApplicationBuilder(GatewayApplication.class)
                .run("--server.port=0", "--GATEWAY_PATH_MATCHING=x"))
                // Unwrapped: an EnvironmentPostProcessor runs before any bean.
                .isInstanceOf(InvalidSettingException.class)
                .hasMessage("GATEWAY_PATH_MATCHING must be 'ant' or 'path-pattern', got 'x'");
    }
}

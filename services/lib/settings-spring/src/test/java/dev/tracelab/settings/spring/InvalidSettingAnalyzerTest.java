package dev.tracelab.settings.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.beans.factory.BeanCreationException;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.Environment;

import dev.tracelab.settings.InvalidSettingException;

@ExtendWith(OutputCaptureExtension.class)
class InvalidSettingAnalyzerTest {

    enum Mode { SEQUENTIAL, BATCH }

    /** The smallest service that reads a setting at startup, as the lab's services do. */
    @SpringBootConfiguration
    static class OneSettingService {

        @Bean
        Mode fetchMode(Environment env) {
            return SpringSettings.of(env).oneOf("CATALOG_FETCH_MODE", Mode.class);
        }
    }

    @Test
    void theDescriptionIsTheSettingsOneLine() {
        InvalidSettingException bad = new InvalidSettingException("PRICING_ITEM_COUNT", "-1", "a whole number from 0 to 100000");
        Throwable wrapped = new BeanCreationException("pricingSettings", "Failed to instantiate", bad);

        FailureAnalysis analysis = new InvalidSettingAnalyzer().analyze(wrapped);

        assertThat(analysis).isNotNull();
        assertThat(analysis.getDescription()).isEqualTo("PRICING_ITEM_COUNT must be a whole number from 0 to 100000, got '-1'");
        assertThat(analysis.getAction()).isEqualTo("Fix or unset PRICING_ITEM_COUNT, then start the service again.");
        assertThat(analysis.getCause()).isSameAs(bad);
    }

    @Test
    void otherFailuresAreLeftToSpringBoot() {
        assertThat(new InvalidSettingAnalyzer().analyze(new IllegalStateException("no"))).isNull();
    }

    @Test
    void aBadSettingStopsStartupWithTheShortReportAndNoStackTrace(CapturedOutput output) {
        assertThatThrownBy(() -> new SpringApplicationBuilder(OneSettingService.class)
                .web(WebApplicationType.NONE)
                .run("--CATALOG_FETCH_MODE=x"))
                .hasRootCauseInstanceOf(InvalidSettingException.class);

        // The report comes from the analyzer registered in META-INF/spring.factories,
        // which is what a service gets by depending on this module.
        assertThat(output.getOut() + output.getErr())
                .contains("APPLICATION FAILED TO START")
                .contains("\nCATALOG_FETCH_MODE must be 'sequential' or 'batch', got 'x'\n")
                .contains("Fix or unset CATALOG_FETCH_MODE, then start the service again.")
                .doesNotContain("\tat ");
    }

    @Test
    void aGoodSettingStarts() {
        try (var context = new SpringApplicationBuilder(OneSettingService.class)
                .web(WebApplicationType.NONE)
                .run("--CATALOG_FETCH_MODE=Batch")) {
            assertThat(context.getBean(Mode.class)).isEqualTo(Mode.BATCH);
        }
    }
}

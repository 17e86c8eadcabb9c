package dev.tracelab.settings.spring;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

import dev.tracelab.settings.InvalidSettingException;

/**
 * Turns a bad setting, wherever Spring wrapped it (a bean's constructor, an
 * EnvironmentPostProcessor), into Spring Boot's short "APPLICATION FAILED TO START"
 * report instead of a stack trace; the process exits with 1. Registered in
 * META-INF/spring.factories, so every service that depends on this jar has it.
 */
public class InvalidSettingAnalyzer extends AbstractFailureAnalyzer<InvalidSettingException> {

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, InvalidSettingException cause) {
        return new FailureAnalysis(cause.getMessage(),
                "Fix or unset %s, then start the service again.".formatted(cause.name()), cause);
    }
}

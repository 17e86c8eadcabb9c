package dev.tracelab.gateway;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/** A startup setting with a value the service cannot use. The message names the variable. */
public class InvalidSettingException extends RuntimeException {

    public InvalidSettingException(String message) {
        super(message);
    }

    /**
     * Turns the exception into Spring Boot's short "APPLICATION FAILED TO START"
     * report instead of a stack trace. Registered in META-INF/spring.factories.
     */
    public static class Analyzer extends AbstractFailureAnalyzer<InvalidSettingException> {

        @Override
        protected FailureAnalysis analyze(Throwable rootFailure, InvalidSettingException cause) {
            return new FailureAnalysis(cause.getMessage(),
                    "Fix or unset that environment variable, then start the service again.", cause);
        }
    }
}

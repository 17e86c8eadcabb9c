package dev.tracelab.settings;

/**
 * A startup setting whose value the service cannot use. The message is the one
 * line an operator needs: the setting's name, what it accepts and what it got,
 * e.g. {@code CATALOG_FETCH_MODE must be 'sequential' or 'batch', got 'x'}.
 */
public class InvalidSettingException extends RuntimeException {

    private final String name;
    private final String value;
    private final String allowed;

    /**
     * @param allowed what the setting accepts, worded to follow "must be",
     *                e.g. "a whole number from 0 to 60000"
     */
    public InvalidSettingException(String name, String value, String allowed) {
        super("%s must be %s, got '%s'".formatted(name, allowed, value));
        this.name = name;
        this.value = value;
        this.allowed = allowed;
    }

    public String name() {
        return name;
    }

    public String value() {
        return value;
    }

    public String allowed() {
        return allowed;
    }
}

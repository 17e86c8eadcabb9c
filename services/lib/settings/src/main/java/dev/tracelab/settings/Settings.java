package dev.tracelab.settings;

import java.net.URI;
import java.net.URISyntaxException;
import java.time.Duration;
import java.util.Arrays;
import java.util.Locale;
import java.util.function.Function;

/**
 * A service's startup settings, each read under its environment variable's name.
 * The lookup is the framework's (Spring's Environment, MicroProfile Config), so a
 * command-line argument or a test property of the same name works as well.
 * Unset or blank means the default; any other value the service cannot use
 * throws {@link InvalidSettingException}, worded the same in every service.
 */
public final class Settings {

    private final Function<String, String> lookup;

    /** @param lookup the raw value of a setting by name, or null when it is not set */
    public Settings(Function<String, String> lookup) {
        this.lookup = lookup;
    }

    public String text(String name, String fallback) {
        String raw = raw(name);
        return raw == null ? fallback : raw;
    }

    public int wholeNumber(String name, int fallback, int min, int max) {
        String raw = raw(name);
        if (raw == null) {
            return fallback;
        }
        try {
            int value = Integer.parseInt(raw);
            if (value >= min && value <= max) {
                return value;
            }
        }
        catch (NumberFormatException ignored) {
            // refused below, with the bounds
        }
        throw new InvalidSettingException(name, raw, "a whole number from %d to %d".formatted(min, max));
    }

    /** A whole number of milliseconds: the simulated latencies and the timeouts. */
    public Duration millis(String name, int fallback, int min, int max) {
        return Duration.ofMillis(wholeNumber(name, fallback, min, max));
    }

    /**
     * One of the constants of the fallback's enum, spelled as {@link #label} spells it,
     * in any case: the pathology/fix switches.
     */
    public <E extends Enum<E>> E oneOf(String name, E fallback) {
        String raw = raw(name);
        if (raw == null) {
            return fallback;
        }
        E[] choices = fallback.getDeclaringClass().getEnumConstants();
        for (E choice : choices) {
            if (label(choice).equals(raw.toLowerCase(Locale.ROOT))) {
                return choice;
            }
        }
        throw new InvalidSettingException(name, raw, alternatives(choices));
    }

    /** An absolute http:// or https:// URL with a host: where a downstream service is. */
    public URI httpUrl(String name, String fallback) {
        String raw = text(name, fallback);
        try {
            URI url = new URI(raw);
            if (("http".equals(url.getScheme()) || "https".equals(url.getScheme())) && url.getHost() != null) {
                return url;
            }
        }
        catch (URISyntaxException ignored) {
            // refused below, with what is accepted
        }
        throw new InvalidSettingException(name, raw, "an http:// or https:// URL");
    }

    /** How a setting spells an enum constant: SMALL_BATCHES is small-batches. */
    public static String label(Enum<?> choice) {
        return choice.name().toLowerCase(Locale.ROOT).replace('_', '-');
    }

    private String raw(String name) {
        String raw = lookup.apply(name);
        return raw == null || raw.isBlank() ? null : raw.strip();
    }

    // 'a' or 'b'; 'a', 'b' or 'c'
    private static String alternatives(Enum<?>[] choices) {
        String[] quoted = Arrays.stream(choices).map(c -> "'" + label(c) + "'").toArray(String[]::new);
        int last = quoted.length - 1;
        return last == 0 ? quoted[0] : String.join(", ", Arrays.copyOf(quoted, last)) + " or " + quoted[last];
    }
}

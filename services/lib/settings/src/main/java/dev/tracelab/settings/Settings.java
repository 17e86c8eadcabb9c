package dev.tracelab.settings;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.URL;
import java.time.Duration;
import java.util.Arrays;
import java.util.Enumeration;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Properties;
import java.util.function.Function;

/**
 * A service's startup settings, each read under its environment variable's name.
 * The lookup is the framework's (Spring's Environment, MicroProfile Config), so a
 * command-line argument or a test property of the same name works as well.
 * Unset or blank means the default; any other value the service cannot use
 * throws {@link InvalidSettingException}, worded the same in every service.
 *
 * <p>What a scenario may set is declared once, in the service's description
 * (services/&lt;name&gt;/service.yaml): its allowed values and its default.
 * {@code make generate} writes them into the service's classpath as
 * {@value #DECLARATIONS}, and {@link #wholeNumber}, {@link #millis} and
 * {@link #oneOf} take them from there. {@link #text} and {@link #httpUrl} read
 * fixed wiring, which the runtimes always set; their fallback serves a run
 * outside them.
 */
public final class Settings {

    /** The resource, at the root of a service's classpath, that declares its settings. */
    public static final String DECLARATIONS = "settings.properties";

    private final Function<String, String> lookup;
    private final Properties declared;

    /** @param lookup the raw value of a setting by name, or null when it is not set */
    public Settings(Function<String, String> lookup) {
        this(lookup, declarations());
    }

    /** @param declared the declarations, as {@code make generate} writes them */
    public Settings(Function<String, String> lookup, Properties declared) {
        this.lookup = lookup;
        this.declared = declared;
    }

    public String text(String name, String fallback) {
        String raw = raw(name);
        return raw == null ? fallback : raw;
    }

    /** A whole number within the range its description declares. */
    public int wholeNumber(String name) {
        int min = declaredNumber(name, "min");
        int max = declaredNumber(name, "max");
        String raw = raw(name);
        if (raw == null) {
            return declaredNumber(name, "default");
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
    public Duration millis(String name) {
        return Duration.ofMillis(wholeNumber(name));
    }

    /**
     * One of the constants of an enum, spelled as {@link #label} spells it, in
     * any case: the pathology/fix switches. The description must declare
     * exactly the enum's constants as its values.
     */
    public <E extends Enum<E>> E oneOf(String name, Class<E> type) {
        E[] choices = type.getEnumConstants();
        List<String> labels = Arrays.stream(choices).map(Settings::label).toList();
        List<String> values = List.of(declaration(name, "values").split(","));
        if (!new HashSet<>(labels).equals(new HashSet<>(values))) {
            throw new IllegalStateException("%s: the description declares %s, the code knows %s".formatted(name, values, labels));
        }
        String raw = raw(name);
        String wanted = (raw == null ? declaration(name, "default") : raw).toLowerCase(Locale.ROOT);
        for (E choice : choices) {
            if (label(choice).equals(wanted)) {
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

    private String declaration(String name, String part) {
        String value = declared.getProperty(name + "." + part);
        if (value == null) {
            throw new IllegalStateException("%s has no %s in %s; declare it in the service's service.yaml and run make generate"
                    .formatted(name, part, DECLARATIONS));
        }
        return value;
    }

    private int declaredNumber(String name, String part) {
        return Integer.parseInt(declaration(name, part));
    }

    // Every service's file on the classpath: a test may run two services in
    // one JVM (catalog's tests start pricing). Their names do not overlap.
    private static Properties declarations() {
        Properties declared = new Properties();
        try {
            Enumeration<URL> files = Settings.class.getClassLoader().getResources(DECLARATIONS);
            while (files.hasMoreElements()) {
                try (InputStream in = files.nextElement().openStream()) {
                    declared.load(in);
                }
            }
        }
        catch (IOException e) {
            throw new UncheckedIOException("reading " + DECLARATIONS, e);
        }
        return declared;
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

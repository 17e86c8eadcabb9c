package dev.tracelab.settings.spring;

import org.springframework.core.env.PropertyResolver;

import dev.tracelab.settings.Settings;

/** The settings of a Spring service: its Environment, where the variables, arguments and test properties meet. */
public final class SpringSettings {

    private SpringSettings() {
    }

    public static Settings of(PropertyResolver env) {
        return new Settings(env::getProperty);
    }
}

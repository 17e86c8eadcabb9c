package dev.tracelab.orders;

import java.util.Set;

import dev.tracelab.settings.InvalidSettingException;
import dev.tracelab.settings.Settings;
import io.quarkus.runtime.Startup;
import io.quarkus.runtime.configuration.ConfigurationException;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;
import org.eclipse.microprofile.config.Config;

/**
 * Makes {@link OrdersSettings} from Quarkus's configuration (environment,
 * system properties, application.properties, a test profile's overrides).
 */
@Singleton
class StartupSettings {

    /**
     * At startup, not at the first request that needs them (CDI beans are lazy).
     * A bad value becomes Quarkus's ConfigurationException: when that is the root
     * cause of a failed start, Quarkus prints its message alone and exits with 1,
     * where any other exception is logged with its stack trace.
     */
    @Produces
    @Singleton
    @Startup
    OrdersSettings settings(Config config) {
        try {
            return OrdersSettings.from(new Settings(name -> config.getOptionalValue(name, String.class).orElse(null)));
        }
        catch (InvalidSettingException e) {
            throw new ConfigurationException(e.getMessage(), Set.of(e.name()));
        }
    }
}

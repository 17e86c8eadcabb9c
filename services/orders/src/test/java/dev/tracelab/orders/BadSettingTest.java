package dev.tracelab.orders;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;

import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import io.quarkus.test.junit.main.Launch;
import io.quarkus.test.junit.main.LaunchResult;
import io.quarkus.test.junit.main.QuarkusMainTest;
import org.junit.jupiter.api.Test;

/**
 * The whole service started as its jar's main would start it, with a bad setting:
 * it must stop with the setting's one line and exit code 1, not serve requests
 * until one of them needs the setting.
 */
@QuarkusMainTest
@TestProfile(BadSettingTest.BadPersistence.class)
class BadSettingTest {

    public static class BadPersistence implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("ORDERS_PERSISTENCE", "batched");
        }
    }

    @Test
    @Launch(exitCode = 1)
    void stopsStartupWithTheSettingsLine(LaunchResult result) {
        String err = result.getErrorOutput();
        assertTrue(err.contains("ORDERS_PERSISTENCE must be 'chatty' or 'single-round-trip', got 'batched'"), err);
        assertFalse(err.contains("\tat "), err);
    }
}

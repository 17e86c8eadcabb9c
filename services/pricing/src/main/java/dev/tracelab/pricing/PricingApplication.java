package dev.tracelab.pricing;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.PropertySource;
import org.springframework.core.env.Environment;

import dev.tracelab.settings.spring.SpringSettings;

/**
 * The downstream API of the nplus1 scenario: an item list, and a price per item
 * that can be asked for one id at a time or for many ids in one call.
 */
@SpringBootApplication
// Not application.properties: catalog's tests run this service in their own JVM,
// where two files of that name on one classpath would shadow each other.
@PropertySource("classpath:pricing.properties")
public class PricingApplication {

    public static void main(String[] args) {
        SpringApplication.run(PricingApplication.class, args);
    }

    @Bean
    PricingSettings pricingSettings(Environment environment) {
        return PricingSettings.from(SpringSettings.of(environment));
    }
}

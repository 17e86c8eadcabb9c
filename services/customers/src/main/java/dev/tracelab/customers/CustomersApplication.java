package dev.tracelab.customers;

import java.time.Duration;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.http.HttpStatus;
import org.springframework.http.ProblemDetail;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;

import dev.tracelab.settings.Settings;
import dev.tracelab.settings.spring.SpringSettings;

/**
 * Service B of case study 000: orders asks it who a customer is before storing an
 * order. The case's trace shows a Spring Boot answer ("HTTP/1.1 200", "Vary: Origin")
 * after 4.1 ms, so this is a Spring Boot service that answers after
 * CUSTOMERS_LATENCY_MS (default 4).
 */
@SpringBootApplication
@RestController
public class CustomersApplication {

    public record Customer(long id, String name) {
    }

    static class NoSuchCustomer extends RuntimeException {
        NoSuchCustomer(long id) {
            super("no customer " + id);
        }
    }

    private final CustomersSettings settings;

    CustomersApplication(org.springframework.core.env.Environment env) {
        this.settings = CustomersSettings.from(SpringSettings.of(env));
    }

    public static void main(String[] args) {
        SpringApplication.run(CustomersApplication.class, args);
    }

    @GetMapping("/customers/{id}")
    Customer customer(@PathVariable long id) throws InterruptedException {
        // Stands in for the lookup behind the case's 4.1 ms answer; a sleep,
        // not CPU, because that call was waiting too.
        Thread.sleep(settings.latency());
        if (id < 1 || id > settings.count()) {
            throw new NoSuchCustomer(id);
        }
        return new Customer(id, "Customer " + id);
    }

    @ExceptionHandler
    ProblemDetail notFound(NoSuchCustomer e) {
        return ProblemDetail.forStatusAndDetail(HttpStatus.NOT_FOUND, e.getMessage());
    }

    /** Startup settings. */
    record CustomersSettings(int count, Duration latency) {

        static CustomersSettings from(Settings settings) {
            return new CustomersSettings(settings.wholeNumber("CUSTOMERS_COUNT"),
                    settings.millis("CUSTOMERS_LATENCY_MS"));
        }
    }
}

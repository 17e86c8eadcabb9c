package dev.tracelab.gateway;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.PropertySource;

/**
 * The service of the antpath scenario: a versioned multi-tenant REST API whose
 * few hundred routes ({@link RouteTable}) are matched by AntPathMatcher or by
 * PathPattern, as GATEWAY_PATH_MATCHING says (see {@link PathMatching}).
 */
@SpringBootApplication
// Not application.properties, like the lab's other services: tests may run
// several services in one JVM, where files of that name would shadow each other.
@PropertySource("classpath:gateway.properties")
public class GatewayApplication {

    public static void main(String[] args) {
        SpringApplication.run(GatewayApplication.class, args);
    }
}

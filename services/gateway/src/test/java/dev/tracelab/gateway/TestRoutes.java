package dev.tracelab.gateway;

import org.springframework.context.support.StaticApplicationContext;
import org.springframework.web.servlet.mvc.method.annotation.RequestMappingHandlerMapping;

/** The service's handler mapping without a server, for the benchmark. */
public final class TestRoutes {

    private TestRoutes() {
    }

    /**
     * A RequestMappingHandlerMapping holding the gateway's routes, configured as
     * Spring Boot configures it for the strategy: ant_path_matcher sets the
     * pattern parser to null, so the mapping falls back to AntPathMatcher.
     */
    @SuppressWarnings("removal")
    public static RequestMappingHandlerMapping handlerMapping(boolean ant) {
        RequestMappingHandlerMapping mapping = new RequestMappingHandlerMapping();
        if (ant) {
            mapping.setPatternParser(null);
        }
        mapping.setApplicationContext(new StaticApplicationContext());
        mapping.afterPropertiesSet();
        new Routes(mapping);
        return mapping;
    }
}

package dev.tracelab.gateway;

import java.lang.reflect.Method;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.stereotype.Component;
import org.springframework.util.ReflectionUtils;
import org.springframework.web.bind.annotation.RequestMethod;
import org.springframework.web.servlet.mvc.method.RequestMappingInfo;
import org.springframework.web.servlet.mvc.method.annotation.RequestMappingHandlerMapping;

import dev.tracelab.gateway.RouteTable.Route;

/**
 * Registers {@link RouteTable} with Spring MVC, as if each route were an
 * annotated controller method. The mappings are built with the handler mapping's
 * own configuration, so they are matched with the strategy GATEWAY_PATH_MATCHING
 * chose, like annotated ones would be.
 */
@Component
class Routes {

    private static final Logger log = LoggerFactory.getLogger(Routes.class);

    Routes(@Qualifier("requestMappingHandlerMapping") RequestMappingHandlerMapping mvc) {
        RequestMappingInfo.BuilderConfiguration config = mvc.getBuilderConfiguration();
        Map<String, ResourceEndpoint> endpoints = new HashMap<>();
        StatusEndpoint status = new StatusEndpoint();
        Method statusMethod = handler(StatusEndpoint.class, "status");
        for (Route route : RouteTable.routes()) {
            RequestMappingInfo info = RequestMappingInfo.paths(route.pattern())
                    .methods(route.method())
                    .options(config)
                    .build();
            if (route.pattern().equals(RouteTable.CATALOGUE)) {
                mvc.registerMapping(info, status, handler(StatusEndpoint.class, "catalogue"));
                continue;
            }
            if (route.resource() == null) {
                mvc.registerMapping(info, status, statusMethod);
                continue;
            }
            ResourceEndpoint endpoint = endpoints.computeIfAbsent(route.version() + route.resource(),
                    k -> new ResourceEndpoint(route.version(), route.resource()));
            mvc.registerMapping(info, endpoint, handler(ResourceEndpoint.class, route.operation().handlerMethod()));
        }
        long templated = RouteTable.routes().stream().filter(r -> r.resource() != null).count();
        long templatedGets = RouteTable.routes().stream()
                .filter(r -> r.resource() != null && r.method() == RequestMethod.GET).count();
        log.info("Registered {} routes ({} with variables or wildcards, {} of them GET), matched with {}={}",
                RouteTable.routes().size(), templated, templatedGets, PathMatching.SETTING,
                mvc.getPatternParser() != null ? "path-pattern" : "ant");
    }

    private static Method handler(Class<?> type, String name) {
        return Arrays.stream(ReflectionUtils.getUniqueDeclaredMethods(type))
                .filter(m -> m.getName().equals(name))
                .findFirst()
                .orElseThrow(() -> new IllegalStateException(type.getSimpleName() + " has no method " + name));
    }
}

package dev.tracelab.gateway;

import java.util.List;

import jakarta.servlet.http.HttpServletRequest;

import org.springframework.web.bind.annotation.ResponseBody;

import dev.tracelab.gateway.RouteTable.Route;

/** The literal routes of {@link RouteTable}: nothing to match, Spring MVC finds them in a map. */
@ResponseBody
public class StatusEndpoint {

    public record Status(String path, String etag) {
    }

    /** One route as the load test needs it: what to send, and what must come back. */
    public record RouteDoc(String method, String pattern, String sample, int status) {
        static RouteDoc of(Route r) {
            return new RouteDoc(r.method().name(), r.pattern(), r.samplePath(), r.status());
        }
    }

    public record Catalogue(List<RouteDoc> routes) {
    }

    public Status status(HttpServletRequest request) {
        String path = request.getRequestURI();
        return new Status(path, ResourceEndpoint.etag(path));
    }

    // The route table itself, so that the load test spreads its requests over
    // exactly the routes the gateway serves.
    public Catalogue catalogue() {
        return new Catalogue(RouteTable.routes().stream()
                .map(RouteDoc::of)
                .toList());
    }
}

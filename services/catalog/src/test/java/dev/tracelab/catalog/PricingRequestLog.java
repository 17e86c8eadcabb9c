package dev.tracelab.catalog;

import java.io.IOException;
import java.util.List;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ConcurrentSkipListSet;
import java.util.concurrent.atomic.AtomicInteger;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import org.springframework.web.filter.OncePerRequestFilter;

/**
 * A servlet filter added to the real pricing service in tests: it records every
 * request that reaches pricing, over how many connections, and how many were in
 * flight at once. Deliberately not a @Component, so that catalog's own component
 * scan never picks it up.
 */
class PricingRequestLog extends OncePerRequestFilter {

    private final Queue<String> requests = new ConcurrentLinkedQueue<>();
    private final Set<Integer> clientPorts = new ConcurrentSkipListSet<>();
    private final AtomicInteger inFlight = new AtomicInteger();
    private final AtomicInteger mostInFlight = new AtomicInteger();

    @Override
    protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws ServletException, IOException {
        requests.add(request.getMethod() + " " + request.getRequestURI());
        // One client port per TCP connection: fewer ports than requests means keep-alive.
        clientPorts.add(request.getRemotePort());
        mostInFlight.accumulateAndGet(inFlight.incrementAndGet(), Math::max);
        try {
            chain.doFilter(request, response);
        }
        finally {
            inFlight.decrementAndGet();
        }
    }

    void clear() {
        requests.clear();
        clientPorts.clear();
        mostInFlight.set(0);
    }

    List<String> requests() {
        return List.copyOf(requests);
    }

    int connections() {
        return clientPorts.size();
    }

    int mostInFlight() {
        return mostInFlight.get();
    }
}

package dev.tracelab.orders;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.tracelab.orders.Model.Customer;
import dev.tracelab.settings.Settings;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.Scope;
import io.smallrye.mutiny.Uni;
import jakarta.annotation.PreDestroy;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.ws.rs.WebApplicationException;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.eclipse.microprofile.rest.client.inject.RestClient;
import org.jboss.logging.Logger;

/**
 * How orders asks customers who the customer is: the blocking call on the event
 * loop of case study 000 and two fixes, side by side. ORDERS_CUSTOMER_CLIENT picks
 * one at startup. All three give the same customer and the same errors.
 */
@ApplicationScoped
public class CustomerClient {

    public enum Mode {
        BLOCKING_ON_EVENT_LOOP, REACTIVE, VIRTUAL_THREADS;

        String label() {
            return Settings.label(this);
        }
    }

    private static final Logger log = Logger.getLogger(CustomerClient.class);

    private final Mode mode;
    private final URI base;
    private final CustomersApi api;
    private final ObjectMapper json;
    private final Tracer tracer;
    private final OpenTelemetry otel;
    private final HttpClient http = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5))
            .build();
    private final ExecutorService virtualThreads =
            Executors.newThreadPerTaskExecutor(Thread.ofVirtual().name("customers-call-", 0).factory());

    CustomerClient(OrdersSettings settings, @ConfigProperty(name = "quarkus.rest-client.customers.url") String url,
            @RestClient CustomersApi api, ObjectMapper json, OpenTelemetry otel) {
        this.mode = settings.customerClient();
        this.base = URI.create(url.replaceAll("/$", "") + "/");
        this.api = api;
        this.json = json;
        this.otel = otel;
        this.tracer = otel.getTracer("dev.tracelab.orders");
        log.infof("Calling customers at %s with ORDERS_CUSTOMER_CLIENT=%s", url, this.mode.label());
    }

    /** Called on the event loop by POST /orders. */
    public Uni<Customer> fetch(long id) {
        return switch (mode) {
            case BLOCKING_ON_EVENT_LOOP -> onCallingThread(id);
            case REACTIVE -> nonBlocking(id);
            case VIRTUAL_THREADS -> onVirtualThread(id);
        };
    }

    // The pathology. The Uni looks asynchronous, but its supplier runs on the
    // thread that subscribes: the event loop. For the call's whole round trip
    // (4.1 ms in the case) that loop reads no socket and runs no other request,
    // and every connection it owns waits. Vert.x only warns after 2 s, so
    // nothing is logged: the case found it with strace.
    private Uni<Customer> onCallingThread(long id) {
        return Uni.createFrom().item(() -> blockingGet(id));
    }

    // Fix 1: Quarkus's REST client with a Uni signature sends the request and
    // frees the loop; the response arrives later as an event on the same loop.
    private Uni<Customer> nonBlocking(long id) {
        return api.get(id).onFailure(WebApplicationException.class).transform(e -> {
            int status = ((WebApplicationException) e).getResponse().getStatus();
            return status == 404 ? unknown(id) : new IllegalStateException("customers answered " + status + " for customer " + id);
        });
    }

    // Fix 2: the same blocking call, on a virtual thread of its own. Blocking is
    // cheap there, and the event loop only sees the result arrive.
    private Uni<Customer> onVirtualThread(long id) {
        Executor withTraceContext = Context.current().wrap(virtualThreads);
        return Uni.createFrom().item(() -> blockingGet(id)).runSubscriptionOn(withTraceContext);
    }

    // A plain JDK HttpClient call. Quarkus does not trace this client, so the
    // CLIENT span is made here, named and attributed like its REST client's.
    private Customer blockingGet(long id) {
        URI uri = base.resolve("customers/" + id);
        Span span = tracer.spanBuilder("GET /customers/{id}").setSpanKind(SpanKind.CLIENT)
                .setAttribute("http.request.method", "GET")
                .setAttribute("url.full", uri.toString())
                .setAttribute("server.address", uri.getHost())
                .setAttribute("server.port", (long) uri.getPort())
                .startSpan();
        try (Scope ignored = span.makeCurrent()) {
            HttpRequest.Builder request = HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(10)).header("Accept", "application/json");
            otel.getPropagators().getTextMapPropagator().inject(Context.current(), request, HttpRequest.Builder::header);
            HttpResponse<byte[]> response = http.send(request.build(), HttpResponse.BodyHandlers.ofByteArray());
            span.setAttribute("http.response.status_code", (long) response.statusCode());
            if (response.statusCode() == 404) {
                throw unknown(id);
            }
            if (response.statusCode() != 200) {
                span.setStatus(StatusCode.ERROR);
                throw new IllegalStateException("customers answered " + response.statusCode() + " for customer " + id);
            }
            return json.readValue(response.body(), Customer.class);
        } catch (IOException e) {
            span.setStatus(StatusCode.ERROR, e.toString());
            throw new IllegalStateException("cannot reach customers at " + uri + ": " + e, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while calling customers", e);
        } finally {
            span.end();
        }
    }

    private static Rejected unknown(long id) {
        return Rejected.unprocessable("unknown customer " + id);
    }

    @PreDestroy
    void close() {
        virtualThreads.shutdownNow();
    }
}

package dev.tracelab.corpus;

import io.smallrye.mutiny.Uni;
import jakarta.inject.Inject;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.eclipse.microprofile.rest.client.inject.RestClient;

// The two endpoints of the frontend (quarkus-frontend). Both return a Uni,
// so Quarkus REST runs them on a Vert.x event-loop thread, and both make
// the same call: GET {backend}/slow.
@Path("/")
public class Calls {

    // The JDK client has no Quarkus integration: nothing stops its
    // blocking send() from running on an event loop.
    static final HttpClient JDK = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    @ConfigProperty(name = "quarkus.rest-client.backend.url")
    String backendUrl;

    @Inject
    @RestClient
    Backend backend;

    // The pathology (case study 000): the Uni looks asynchronous, but its
    // supplier runs on the subscribing thread, the event loop, and send()
    // holds that thread until the answer arrives. Every other connection
    // of that loop waits meanwhile.
    @GET
    @Path("/blocking")
    public Uni<String> blocking() {
        return Uni.createFrom().item(() -> {
            HttpRequest req = HttpRequest.newBuilder(URI.create(backendUrl + "/slow?from=blocking")).GET().build();
            try {
                return JDK.send(req, HttpResponse.BodyHandlers.ofString()).body();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        });
    }

    // The fix: the same call with the reactive REST client. The loop sends
    // the request and goes back to its other connections.
    @GET
    @Path("/reactive")
    public Uni<String> reactive() {
        return backend.slow("reactive");
    }
}

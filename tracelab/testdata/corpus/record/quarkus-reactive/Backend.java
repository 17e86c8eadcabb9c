package dev.tracelab.corpus;

import io.smallrye.mutiny.Uni;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.QueryParam;
import org.eclipse.microprofile.rest.client.inject.RegisterRestClient;

// Quarkus's REST client for the downstream. Returning Uni makes the call
// non-blocking: it is sent on the Vert.x HTTP client, and the answer comes
// back later as an event on the caller's event loop.
@RegisterRestClient(configKey = "backend")
@Path("/slow")
public interface Backend {

    @GET
    Uni<String> slow(@QueryParam("from") String from);
}

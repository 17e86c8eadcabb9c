package dev.tracelab.corpus;

import io.smallrye.mutiny.Uni;
import io.vertx.core.Vertx;
import jakarta.inject.Inject;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.QueryParam;

// The downstream. The backend process (quarkus-backend) serves it; the
// frontend calls it. It answers after SLOW_MS without holding a thread:
// a Vert.x timer completes the Uni, so the backend's own event loops stay
// free and its latency does not grow with load.
@Path("/slow")
public class Slow {

    static final long SLOW_MS = Long.getLong("slow.ms", 20);

    @Inject
    Vertx vertx;

    @GET
    public Uni<String> slow(@QueryParam("from") String from) {
        return Uni.createFrom().emitter(e -> vertx.setTimer(SLOW_MS, id -> e.complete("slow " + from)));
    }
}

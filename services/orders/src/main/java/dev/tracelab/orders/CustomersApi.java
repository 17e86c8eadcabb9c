package dev.tracelab.orders;

import dev.tracelab.orders.Model.Customer;
import io.smallrye.mutiny.Uni;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import org.eclipse.microprofile.rest.client.inject.RegisterRestClient;

/** The customers service as Quarkus's REST client sees it. Returning Uni makes the call non-blocking. */
@RegisterRestClient(configKey = "customers")
@Path("/customers")
public interface CustomersApi {

    @GET
    @Path("/{id}")
    Uni<Customer> get(@PathParam("id") long id);
}

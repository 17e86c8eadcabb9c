package dev.tracelab.orders;

import java.net.URI;
import java.util.concurrent.Callable;

import com.fasterxml.jackson.core.JsonProcessingException;
import dev.tracelab.orders.Model.Invoice;
import dev.tracelab.orders.Model.NewOrder;
import dev.tracelab.orders.Model.Order;
import dev.tracelab.orders.Model.Problem;
import io.smallrye.mutiny.Uni;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.WebApplicationException;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import org.jboss.resteasy.reactive.RestResponse;
import org.jboss.resteasy.reactive.server.ServerExceptionMapper;

/**
 * POST /orders returns a Uni, so Quarkus runs it on a Vert.x event-loop thread,
 * as in the case: the customer call starts there, and the database work moves
 * to a worker (executor-thread) because JDBC blocks. GET /orders/{id} returns a
 * plain value, so Quarkus runs all of it on a worker.
 */
@Path("/orders")
@Produces(MediaType.APPLICATION_JSON)
public class OrdersResource {

    private final CustomerClient customers;
    private final OrderWriter writer;
    private final OrderReader reader;

    OrdersResource(CustomerClient customers, OrderWriter writer, OrderReader reader) {
        this.customers = customers;
        this.writer = writer;
        this.reader = reader;
    }

    @POST
    @Consumes(MediaType.APPLICATION_JSON)
    public Uni<RestResponse<Order>> create(NewOrder order) {
        if (order == null) {
            throw Rejected.badRequest("the body must be a JSON order: {\"customerId\": 1, \"lines\": [{\"productId\": 1, \"quantity\": 1}]}");
        }
        order.validate();
        Context loop = Vertx.currentContext();
        return customers.fetch(order.customerId())
                .chain(customer -> onWorker(loop, () -> writer.create(customer, order)))
                .map(created -> RestResponse.ResponseBuilder.<Order>created(URI.create("/orders/" + created.id())).entity(created).build());
    }

    @GET
    @Path("/{id}")
    public Invoice get(@PathParam("id") long id) {
        return reader.invoice(id);
    }

    // Vert.x runs the task on its worker pool with this request's context, so
    // the trace context follows, and hands the result back to the loop.
    private static <T> Uni<T> onWorker(Context loop, Callable<T> task) {
        return Uni.createFrom().completionStage(() -> loop.executeBlocking(task, false).toCompletionStage());
    }

    @ServerExceptionMapper
    public RestResponse<Problem> rejected(Rejected e) {
        return RestResponse.ResponseBuilder.<Problem>create(e.status()).entity(new Problem(e.getMessage())).build();
    }

    @ServerExceptionMapper
    public RestResponse<Problem> malformed(JsonProcessingException e) {
        return RestResponse.status(RestResponse.Status.BAD_REQUEST, new Problem("malformed JSON: " + e.getOriginalMessage()));
    }

    // Quarkus reports a body that is not JSON at all as a bare 400; say why.
    @ServerExceptionMapper
    public Response unreadable(WebApplicationException e) {
        if (e.getCause() instanceof JsonProcessingException json) {
            return malformed(json).toResponse();
        }
        return e.getResponse();
    }
}

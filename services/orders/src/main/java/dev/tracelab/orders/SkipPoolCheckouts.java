package dev.tracelab.orders;

import java.util.List;

import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.context.Context;
import io.opentelemetry.sdk.trace.data.LinkData;
import io.opentelemetry.sdk.trace.samplers.Sampler;
import io.opentelemetry.sdk.trace.samplers.SamplingResult;
import jakarta.enterprise.context.ApplicationScoped;

/**
 * Quarkus's JDBC telemetry also traces every connection taken from the pool
 * (DataSource.getConnection, an INTERNAL span carrying db.system). Taking a
 * pooled connection makes no round trip to PostgreSQL, and the OpenTelemetry
 * Java agent that traces the lab's other services leaves these spans out by
 * default (otel.instrumentation.jdbc-datasource.enabled=false). Dropping them
 * keeps orders' traces to the statements, like the rest of the lab. Everything
 * else is sampled as Quarkus's default does: parent-based, always on.
 */
@ApplicationScoped
public class SkipPoolCheckouts implements Sampler {

    private final Sampler standard = Sampler.parentBased(Sampler.alwaysOn());

    @Override
    public SamplingResult shouldSample(Context parentContext, String traceId, String name, SpanKind spanKind,
            Attributes attributes, List<LinkData> parentLinks) {
        if (spanKind == SpanKind.INTERNAL && name.equals("DataSource.getConnection")) {
            return SamplingResult.drop();
        }
        return standard.shouldSample(parentContext, traceId, name, spanKind, attributes, parentLinks);
    }

    @Override
    public String getDescription() {
        return "SkipPoolCheckouts{" + standard.getDescription() + "}";
    }
}

package dev.tracelab.orders;

import io.opentelemetry.context.Context;
import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.trace.ReadWriteSpan;
import io.opentelemetry.sdk.trace.ReadableSpan;
import io.opentelemetry.sdk.trace.SpanProcessor;
import jakarta.enterprise.context.ApplicationScoped;

/**
 * Records on every span the thread that started it. Quarkus leaves this out,
 * yet it is the whole story of the eventloop scenario: a client call started
 * on a vert.x-eventloop-thread is either harmless (non-blocking) or holds the
 * loop for its whole duration, and only the thread tells the reader where to
 * look. Quarkus registers every SpanProcessor bean with its SDK.
 */
@ApplicationScoped
public class ThreadAttributes implements SpanProcessor {

    @Override
    public void onStart(Context parentContext, ReadWriteSpan span) {
        Thread t = Thread.currentThread();
        span.setAttribute("thread.name", t.getName());
        span.setAttribute("thread.id", t.threadId());
    }

    @Override
    public boolean isStartRequired() {
        return true;
    }

    @Override
    public void onEnd(ReadableSpan span) {
    }

    @Override
    public boolean isEndRequired() {
        return false;
    }

    @Override
    public CompletableResultCode shutdown() {
        return CompletableResultCode.ofSuccess();
    }
}

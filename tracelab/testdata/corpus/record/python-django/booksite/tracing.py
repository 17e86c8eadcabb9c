"""OpenTelemetry for the corpus application, set up before Django is.

opentelemetry-instrumentation-django makes a SERVER span per request (it
reads the caller's W3C traceparent); opentelemetry-instrumentation-psycopg2
(through the dbapi integration) makes a CLIENT span per cursor.execute. The
spans go out as OTLP/HTTP protobuf to OTEL_EXPORTER_OTLP_TRACES_ENDPOINT
through a batch span processor (OTEL_BSP_* from the environment); the
resource's service.name is OTEL_SERVICE_NAME. CAPTURE_PARAMETERS=true
passes capture_parameters=True to the psycopg2 instrumentor, and the
statement spans then carry db.statement.parameters. Everything else is the
instrumentations' default.
"""
import os
import signal
import sys


def setup():
    from opentelemetry import trace
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.instrumentation.django import DjangoInstrumentor
    from opentelemetry.instrumentation.psycopg2 import Psycopg2Instrumentor
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    provider = TracerProvider(resource=Resource.create())
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    trace.set_tracer_provider(provider)
    DjangoInstrumentor().instrument()
    capture = os.environ.get("CAPTURE_PARAMETERS", "false").lower() == "true"
    Psycopg2Instrumentor().instrument(capture_parameters=capture)
    # SIGTERM (the recording script's stop) exits normally, so that the SDK's
    # atexit hook exports the spans still queued.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))


def setup_if_configured():
    if os.environ.get("OTEL_SERVICE_NAME"):
        setup()

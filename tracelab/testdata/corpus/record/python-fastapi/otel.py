"""The OpenTelemetry set-up both services import before anything else.

The SDK's defaults throughout, with the span queue and schedule set from the
environment the recording script gives (OTEL_BSP_SCHEDULE_DELAY=500,
OTEL_BSP_MAX_QUEUE_SIZE=200000, OTEL_BSP_MAX_EXPORT_BATCH_SIZE=2048) and the
exporter's endpoint from OTEL_EXPORTER_OTLP_TRACES_ENDPOINT (OTLP/HTTP
protobuf, to collector.py). The resource is the SDK's default
(Resource.create(): service.name from OTEL_SERVICE_NAME and telemetry.sdk.*);
no resource detector is added.
"""
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

provider = TracerProvider(resource=Resource.create())
provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
trace.set_tracer_provider(provider)


def shutdown() -> None:
    """Flushes the batch span processor: called from the lifespan's shutdown
    (uvicorn runs it on SIGTERM); the SDK's atexit hook would do it too."""
    provider.force_flush()
    provider.shutdown()

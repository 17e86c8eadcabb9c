"""OpenTelemetry for the store, set up in each gunicorn worker (post_fork).

A TracerProvider with the SDK's default resource (Resource.create():
telemetry.sdk.*, service.name from OTEL_SERVICE_NAME), a batch span
processor (OTEL_BSP_* from the environment) into the OTLP/HTTP JSON
exporter (opentelemetry-exporter-otlp-json-http; OTEL_EXPORTER_OTLP_TRACES_ENDPOINT),
and the Flask and SQLAlchemy instrumentations with their defaults:
FlaskInstrumentor().instrument() replaces flask.Flask, and
SQLAlchemyInstrumentor().instrument() wraps create_engine and Engine.connect,
so the engine app.py creates afterwards is traced (a CLIENT span per cursor
execute, the statement with its placeholders, no parameter values; the
commenter stays off).

Each worker has its own provider, made after the fork (a BatchSpanProcessor's
thread does not survive a fork), and shuts it down on exit (worker_exit),
which exports the spans still queued.
"""
from opentelemetry import trace
from opentelemetry.exporter.otlp.json.http.trace_exporter import OTLPSpanExporter
from opentelemetry.instrumentation.flask import FlaskInstrumentor
from opentelemetry.instrumentation.sqlalchemy import SQLAlchemyInstrumentor
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

_provider = None


def init():
    global _provider
    _provider = TracerProvider(resource=Resource.create())
    _provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    trace.set_tracer_provider(_provider)
    FlaskInstrumentor().instrument()
    SQLAlchemyInstrumentor().instrument()


def shutdown():
    if _provider is not None:
        _provider.shutdown()

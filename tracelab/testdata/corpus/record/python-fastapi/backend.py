"""backend: GET /item/{id} answers after an awaited 5 ms sleep.

Run with: uvicorn backend:app (one process, one asyncio event loop).
"""
import asyncio
from contextlib import asynccontextmanager

import otel  # noqa: F401  (first: the tracer provider)
from fastapi import FastAPI
from opentelemetry.instrumentation.fastapi import FastAPIInstrumentor


@asynccontextmanager
async def lifespan(_app):
    yield
    otel.shutdown()


app = FastAPI(lifespan=lifespan)


@app.get("/health")
async def health():
    return {"ok": True}


@app.get("/item/{item_id}")
async def item(item_id: int):
    await asyncio.sleep(0.005)
    return {"id": item_id, "name": f"item {item_id}"}


FastAPIInstrumentor.instrument_app(app)

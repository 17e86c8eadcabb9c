"""api: six async def handlers, in pairs that do the same work, one pair
member blocking the event loop and the other awaiting.

  GET /fetch/sync   requests.get of backend's /item/{id}   (blocks the loop)
  GET /fetch/async  the same call with a shared httpx.AsyncClient, awaited
  GET /sleep/sync   time.sleep(0.01)                       (blocks the loop)
  GET /sleep/async  await asyncio.sleep(0.01)
  GET /db/sync      one query with psycopg2                (blocks the loop)
  GET /db/async     the same query with asyncpg, awaited

Each request makes exactly one call (one HTTP request, one sleep, one query).
Run with: uvicorn api:app (one process, one asyncio event loop).
Environment: BACKEND_URL (http://127.0.0.1:PORT), DATABASE_URL
(postgresql://user@127.0.0.1:PORT/db).
"""
import asyncio
import os
import random
import time
from contextlib import asynccontextmanager

import otel  # noqa: F401  (first: the tracer provider)
import asyncpg
import httpx
import psycopg2.pool
import requests
from fastapi import FastAPI
from opentelemetry.instrumentation.asyncpg import AsyncPGInstrumentor
from opentelemetry.instrumentation.fastapi import FastAPIInstrumentor
from opentelemetry.instrumentation.httpx import HTTPXClientInstrumentor
from opentelemetry.instrumentation.psycopg2 import Psycopg2Instrumentor
from opentelemetry.instrumentation.requests import RequestsInstrumentor

# Before any client or connection exists, so that all of them are traced.
RequestsInstrumentor().instrument()
HTTPXClientInstrumentor().instrument()
Psycopg2Instrumentor().instrument()
AsyncPGInstrumentor().instrument()

BACKEND_URL = os.environ["BACKEND_URL"]
DATABASE_URL = os.environ["DATABASE_URL"]

# One statement for both drivers: the readings of one sensor, summed over
# the seeded table (seed.py) by a sequential scan, a few ms of real work.
QUERY_PG2 = "SELECT count(*), avg(value) FROM readings WHERE sensor = %s"
QUERY_ASYNCPG = "SELECT count(*), avg(value) FROM readings WHERE sensor = $1"
SENSORS = 100

state = {}


@asynccontextmanager
async def lifespan(_app):
    state["http"] = httpx.AsyncClient(timeout=30)
    state["pool"] = await asyncpg.create_pool(DATABASE_URL, min_size=4, max_size=10)
    # psycopg2's connections are used from the event loop's thread only (the
    # handlers are async def), one at a time: a small pool is plenty.
    state["pg2"] = psycopg2.pool.SimpleConnectionPool(1, 2, DATABASE_URL)
    yield
    await state["http"].aclose()
    await state["pool"].close()
    state["pg2"].closeall()
    otel.shutdown()


app = FastAPI(lifespan=lifespan)


def item_id() -> int:
    return random.randint(1, 10000)


@app.get("/health")
async def health():
    return {"ok": True}


@app.get("/fetch/sync")
async def fetch_sync():
    # Synchronous HTTP inside async def: the loop waits for the backend.
    r = requests.get(f"{BACKEND_URL}/item/{item_id()}", timeout=30)
    r.raise_for_status()
    return r.json()


@app.get("/fetch/async")
async def fetch_async():
    r = await state["http"].get(f"{BACKEND_URL}/item/{item_id()}")
    r.raise_for_status()
    return r.json()


@app.get("/sleep/sync")
async def sleep_sync():
    time.sleep(0.01)  # blocks the loop
    return {"slept_ms": 10}


@app.get("/sleep/async")
async def sleep_async():
    await asyncio.sleep(0.01)
    return {"slept_ms": 10}


@app.get("/db/sync")
async def db_sync():
    pool = state["pg2"]
    conn = pool.getconn()
    try:
        with conn.cursor() as cur:
            cur.execute(QUERY_PG2, (random.randint(1, SENSORS),))
            count, avg = cur.fetchone()
        conn.rollback()  # end the implicit transaction; nothing was written
    finally:
        pool.putconn(conn)
    return {"count": count, "avg": float(avg)}


@app.get("/db/async")
async def db_async():
    row = await state["pool"].fetchrow(QUERY_ASYNCPG, random.randint(1, SENSORS))
    return {"count": row[0], "avg": float(row[1])}


FastAPIInstrumentor.instrument_app(app)

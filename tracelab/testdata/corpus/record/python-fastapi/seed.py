"""Creates and fills the readings table (untraced: no OpenTelemetry here).

200,000 rows, sensor = id % 100 + 1, no index on sensor: the query of
api.py's /db handlers scans the whole table for one sensor's 2,000 rows.
Usage: python seed.py (DATABASE_URL in the environment).
"""
import os

import psycopg2

ROWS = int(os.environ.get("SEED_ROWS", "200000"))

conn = psycopg2.connect(os.environ["DATABASE_URL"])
conn.autocommit = True
with conn.cursor() as cur:
    cur.execute("DROP TABLE IF EXISTS readings")
    cur.execute("CREATE TABLE readings (id integer PRIMARY KEY, sensor integer NOT NULL, value double precision NOT NULL)")
    cur.execute(
        "INSERT INTO readings SELECT g, g %% 100 + 1, (g * 7919 %% 1000) / 10.0 FROM generate_series(1, %s) g",
        (ROWS,),
    )
    cur.execute("VACUUM ANALYZE readings")
    cur.execute("SELECT count(*) FROM readings")
    print(f"seeded readings: {cur.fetchone()[0]} rows, 100 sensors")
conn.close()

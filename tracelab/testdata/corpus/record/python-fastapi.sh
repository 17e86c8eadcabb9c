#!/usr/bin/env bash
# Records the corpus cases python-fastapi-sync-http, python-fastapi-async-http,
# python-fastapi-sleep, python-fastapi-async-sleep, python-fastapi-sync-db and
# python-fastapi-async-db (see python-fastapi/README.md).
#
# Two FastAPI services from python-fastapi/, installed into a virtualenv from
# PyPI at the versions pinned in python-fastapi/requirements.txt (pip
# install --no-deps: every package, transitive ones too, is in the file),
# each run by uvicorn as ONE process with one asyncio event loop, instrumented
# with the OpenTelemetry Python SDK (python-fastapi/otel.py; instrumentation
# fastapi, requests, httpx, psycopg2, asyncpg) exporting OTLP/HTTP protobuf
# to a small receiver (python-fastapi/collector.py) that appends every export
# as a line of plain OTLP JSON:
#   api      GET /fetch/sync, /fetch/async (HTTP to backend), /sleep/sync,
#            /sleep/async, /db/sync (psycopg2), /db/async (asyncpg); every
#            handler is async def, the sync ones block the event loop
#   backend  GET /item/{id} (an awaited 5 ms sleep)
# PostgreSQL is a throwaway cluster of its own (initdb on a temporary data
# dir), seeded by python-fastapi/seed.py. For each case it starts the
# receiver, backend and api fresh, warms up, loads one api endpoint with
# tracelab's load engine (closed model: VUS clients, ITERATIONS requests),
# stops the services (uvicorn runs the lifespan shutdown on SIGTERM, which
# flushes the SDK), and writes <case>/traces.json: the traces whose root
# started in the measured run, the first MAX_TRACES of them, converted by
# `tracelab convert --redact`.
#
# Needs: Python >= 3.10 with venv (3.11 used; PYTHON, default python3), Go (builds
# tracelab), jq, curl, and PostgreSQL's server binaries (initdb, postgres)
# in PG_BIN_DIR (default: the lab's tool cache,
# ~/.cache/tracelab/postgres/16.4.0/linux-amd64/bin, which
# `infra/local/tools.sh` fills; if that is missing, a Debian
# /usr/lib/postgresql/<version>/bin). As root, PostgreSQL runs as the
# postgres account (or nobody) from a copy of the binaries in a temporary dir.
#
# Environment:
#   FASTAPI_CORPUS_WORK  scratch dir for the virtualenv, the application copy,
#                        tracelab and raw logs (default: $TRACELAB_CACHE or
#                        ~/.cache/tracelab, then corpus-python-fastapi); never
#                        inside the repository
#   PG_PORT, BACKEND_PORT, API_PORT, COLLECTOR_PORT   default 18700-18703
#   CASES              which cases to record (default: all six)
#   VUS, WARMUP_ITERATIONS, ITERATIONS, MAX_TRACES   the load (defaults below)
#
# What every recording script does alike (the scratch dir, process tracking,
# PostgreSQL, the load, the window, the summary) is in lib.sh.
set -euo pipefail
# shellcheck source=SCRIPTDIR/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# The load, the same in every case: 20 closed-loop clients, WARMUP_ITERATIONS
# requests not recorded, then ITERATIONS measured; the first MAX_TRACES of
# those go into the case.
VUS=${VUS:-20}
WARMUP_ITERATIONS=${WARMUP_ITERATIONS:-100}
ITERATIONS=${ITERATIONS:-400}
MAX_TRACES=${MAX_TRACES:-300}

pg_port=${PG_PORT:-18700}
backend_port=${BACKEND_PORT:-18701}
api_port=${API_PORT:-18702}
collector_port=${COLLECTOR_PORT:-18703}
target=http://127.0.0.1:$api_port
niced=(nice -n 19)
python=${PYTHON:-python3}

use_work FASTAPI_CORPUS_WORK corpus-python-fastapi raw
need curl jq go "$python"
# The lab's cached PostgreSQL first; a machine without it may have Debian's.
if [ -z "${PG_BIN_DIR:-}" ] && [ ! -x "$cache/postgres/$POSTGRES_VERSION/linux-amd64/bin/postgres" ]; then
  for d in /usr/lib/postgresql/*/bin; do
    [ -x "$d/postgres" ] && [ -x "$d/initdb" ] && PG_BIN_DIR=$d
  done
fi
pg_need

# --- tracelab, the virtualenv and the application ------------------------------
build_tracelab
venv=$work/venv
if [ ! -x "$venv/bin/python" ]; then
  run "$work/logs/venv.log" "$python" -m venv "$venv"
fi
py=$venv/bin/python
"$py" -c 'import sys; assert sys.version_info >= (3, 10)' || die "$python is older than 3.10"
if ! cmp -s "$src/requirements.txt" "$venv/.installed"; then
  say "installing python-fastapi/requirements.txt into $venv (pip --no-deps: the file pins every package)"
  run "$work/logs/pip.log" nice -n 19 "$venv/bin/pip" install --disable-pip-version-check --no-deps -r "$src/requirements.txt"
  run "$work/logs/pip-check.log" "$venv/bin/pip" check
  cp "$src/requirements.txt" "$venv/.installed"
fi
# The application runs from a copy in the scratch dir, so any path a span or
# log might name is under $work (which --redact drops), never the checkout.
app=$work/app
mkdir -p "$app"
cp "$src"/*.py "$app/"
export PYTHONDONTWRITEBYTECODE=1

# --- PostgreSQL: the database readings, seeded by seed.py ----------------------
pgtmp=$(mktemp -d "${TMPDIR:-/tmp}/tracelab-corpus-fastapi-pg.XXXXXX")
say "PostgreSQL $("$pg_bin/postgres" --version | awk '{print $3}') on 127.0.0.1:$pg_port (data in $pgtmp)"
pg_start corpus readings -c max_connections=50 -c log_min_messages=warning
export DATABASE_URL="postgresql://corpus@127.0.0.1:$pg_port/readings"
pg_wait "seed the database" "$work/logs/seed.log" env -C "$app" "$py" seed.py
say "$(cat "$work/logs/seed.log")"

# --- one case ------------------------------------------------------------------
# start NAME MODULE PORT: uvicorn, one process (no --workers: no supervisor,
# one asyncio event loop), under nice 10, logging to logs/CASE-NAME.log.
start() {
  local name=$1 module=$2 port=$3
  spawn "$name" env -C "$app" OTEL_SERVICE_NAME="$name" \
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT="http://127.0.0.1:$collector_port/v1/traces" \
    OTEL_BSP_SCHEDULE_DELAY=500 OTEL_BSP_MAX_QUEUE_SIZE=200000 OTEL_BSP_MAX_EXPORT_BATCH_SIZE=2048 \
    OTEL_METRICS_EXPORTER=none OTEL_LOGS_EXPORTER=none \
    BACKEND_URL="http://127.0.0.1:$backend_port" DATABASE_URL="$DATABASE_URL" \
    nice -n 10 "$venv/bin/uvicorn" "$module:app" --host 127.0.0.1 --port "$port" \
    --loop asyncio --http h11 --no-access-log --log-level warning
}

# load_case OUT ITERATIONS: VUS clients on the case's endpoint.
load_case() { load "$1" ENDPOINT="$endpoint" VUS="$VUS" ITERATIONS="$2"; }

# The most api SERVER spans open at one instant in the case: with a blocked
# loop the requests still overlap (uvicorn accepts and starts them), so this
# is a check that the load was concurrent, not a reading of the loop.
# shellcheck disable=SC2016 # jq's variables, not the shell's
overlap='[.resourceSpans[] | select(any(.resource.attributes[]; .key == "service.name" and .value.stringValue == "api"))
  | .scopeSpans[].spans[] | select(.kind == 2 or .kind == "SPAN_KIND_SERVER")
  | [(.startTimeUnixNano | tonumber), 1], [(.endTimeUnixNano | tonumber), -1]]
  | sort | reduce .[] as $e ({n: 0, max: 0}; .n += $e[1] | .max = ([.max, .n] | max)) | .max'

record() { # ENDPOINT
  local endpoint=$1 collector_pid backend_pid api_pid
  raw=$work/raw/$case
  rm -f "$raw"-*
  say "$case: starting the OTLP receiver, backend and api"
  spawn collector env PORT="$collector_port" OUT="$raw-otlp.jsonl" "$py" "$app/collector.py"
  collector_pid=$!
  wait_ready "$collector_port" /health collector "$collector_pid" 30
  start backend backend "$backend_port"; backend_pid=$!
  start api api "$api_port"; api_pid=$!
  wait_ready "$backend_port" /health backend "$backend_pid" 30
  wait_ready "$api_port" /health api "$api_pid" 30
  curl -sf "http://127.0.0.1:$api_port/$endpoint" >"$raw-sample.json" || die "GET /$endpoint failed; log: $work/logs/$case-api.log"
  say "$case: GET /$endpoint answers $(cat "$raw-sample.json")"
  measure "$WARMUP_ITERATIONS" "$WARMUP_ITERATIONS requests by $VUS clients" \
    "$ITERATIONS" "$ITERATIONS requests by $VUS clients on /$endpoint"
  say "$case: stopping the services (the lifespan shutdown flushes the SDK on SIGTERM)"
  stop "$api_pid" "$backend_pid"
  stop "$collector_pid"

  keep_sdk_json "$MAX_TRACES"
  say_warmup
  summarise 2200 "2 MB; lower MAX_TRACES" "$raw-window.json"
  say "$case: at most $(jq "$overlap" "$out/traces.json") api SERVER spans open at one instant"
}

record_all 'case\trequests\treq/s\tp50_ms\tp95_ms\tfailed\twindow_traces\tkept\tspans\tbytes' "
  python-fastapi-sync-http    fetch/sync
  python-fastapi-async-http   fetch/async
  python-fastapi-sleep        sleep/sync
  python-fastapi-async-sleep  sleep/async
  python-fastapi-sync-db      db/sync
  python-fastapi-async-db     db/async"

#!/usr/bin/env bash
# Records the corpus cases python-flask-orm-nplus1, python-flask-orm-joined,
# python-flask-chatty, python-flask-one-query, python-flask-same-setting and
# python-flask-setting-once (see python-flask/README.md).
#
# One service, store (python-flask/app.py): Flask 3.1 + SQLAlchemy 2 ORM on
# PostgreSQL through psycopg2, served by gunicorn with 2 sync workers, in a
# virtualenv made in the scratch dir from python-flask/requirements.txt (every
# package pinned, from PyPI). Each worker sets up the OpenTelemetry Python
# SDK after the fork (python-flask/tracing.py, from gunicorn.conf.py's
# post_fork): the Flask and SQLAlchemy instrumentations with their defaults
# (the statement with placeholders, no parameter values), a batch span
# processor into the OTLP/HTTP JSON exporter, sent to a small receiver
# (python-flask/collector.py) that appends every export request to a file;
# a worker shuts its SDK down when it exits (worker_exit), which flushes it.
# PostgreSQL is a throwaway cluster of its own, seeded by python-flask/seed.py
# (untraced). For each case it starts the receiver and gunicorn fresh, warms
# up, loads one endpoint with tracelab's load engine (closed model: VUS
# clients, ITERATIONS requests), stops gunicorn (SIGTERM: the workers exit
# and flush) and writes <case>/traces.json: the traces whose root started in
# the measured run, the first MAX_TRACES of them, redacted.
#
# Needs: Python >= 3.11 with venv (PYTHON, default python3), Go (builds
# tracelab), jq, curl, and PostgreSQL's server binaries (initdb, postgres)
# in PG_BIN_DIR (default: the lab's tool cache,
# ~/.cache/tracelab/postgres/16.4.0/linux-amd64/bin, which
# `infra/local/tools.sh` fills; a distribution's, e.g.
# /usr/lib/postgresql/15/bin, works too). As root, PostgreSQL runs as the
# postgres account (or nobody) from a copy of the binaries in a temporary dir.
#
# Environment:
#   FLASK_CORPUS_WORK  scratch dir for the virtualenv, tracelab and raw logs
#                      (default: $TRACELAB_CACHE or ~/.cache/tracelab, then
#                      corpus-python-flask); never inside the repository
#   PG_PORT, APP_PORT, COLLECTOR_PORT   default 18720-18722
#   CASES              which cases to record (default: all six)
#   VUS, WARMUP_ITERATIONS, ITERATIONS, MAX_TRACES   the load (defaults below)
#   WORKERS            gunicorn's sync workers (default 2)
#
# What every recording script does alike (the scratch dir, process tracking,
# PostgreSQL, the load, the window, the summary) is in lib.sh.
set -euo pipefail
# shellcheck source=SCRIPTDIR/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# The load: 4 closed-loop clients, WARMUP_ITERATIONS requests not recorded,
# then ITERATIONS measured; the first MAX_TRACES of those go into the case
# (an N+1 trace holds about 33 spans).
VUS=${VUS:-4}
WARMUP_ITERATIONS=${WARMUP_ITERATIONS:-40}
ITERATIONS=${ITERATIONS:-40}
MAX_TRACES=${MAX_TRACES:-20}
WORKERS=${WORKERS:-2}
python=${PYTHON:-python3}

pg_port=${PG_PORT:-18720}
app_port=${APP_PORT:-18721}
collector_port=${COLLECTOR_PORT:-18722}
target=http://127.0.0.1:$app_port
niced=(nice -n 19)

use_work FLASK_CORPUS_WORK corpus-python-flask raw
need "$python" curl jq go
pg_need

# --- tracelab and the virtualenv ---------------------------------------------
build_tracelab
venv=$work/venv
if [ ! -x "$venv/bin/python" ]; then
  run "$work/logs/venv.log" "$python" -m venv "$venv"
fi
if ! cmp -s "$src/requirements.txt" "$venv/.installed"; then
  say "installing python-flask/requirements.txt into $venv"
  run "$work/logs/pip.log" nice -n 19 "$venv/bin/pip" install --disable-pip-version-check --no-deps -r "$src/requirements.txt"
  run "$work/logs/pip-check.log" "$venv/bin/pip" check
  cp "$src/requirements.txt" "$venv/.installed"
fi
py=$venv/bin/python
export PYTHONDONTWRITEBYTECODE=1

# --- PostgreSQL: the database store, seeded by seed.py -----------------------
pgtmp=$(mktemp -d "${TMPDIR:-/tmp}/tracelab-corpus-flask-pg.XXXXXX")
say "PostgreSQL $("$pg_bin/postgres" --version | awk '{print $3}') on 127.0.0.1:$pg_port (data in $pgtmp)"
pg_start corpus store -c max_connections=50 -c synchronous_commit=off -c timezone=UTC
export DATABASE_URL="postgresql+psycopg2://corpus@127.0.0.1:$pg_port/store"
pg_wait "seed the database" "$work/logs/seed.log" env -C "$src" "$py" seed.py
say "$(cat "$work/logs/seed.log")"

# --- one case ------------------------------------------------------------------
# load_case OUT ITERATIONS: VUS clients on the case's endpoint.
load_case() { load "$1" ENDPOINT="$endpoint" VUS="$VUS" ITERATIONS="$2"; }

record() { # ENDPOINT
  local endpoint=$1 collector_pid app_pid
  raw=$work/raw/$case
  rm -f "$raw"-*
  say "$case: starting the OTLP receiver and store (gunicorn, $WORKERS sync workers)"
  spawn collector env PORT="$collector_port" OUT="$raw-otlp.jsonl" "$py" "$src/collector.py"
  collector_pid=$!
  wait_ready "$collector_port" /health collector "$collector_pid" 30
  spawn store env -C "$src" OTEL_SERVICE_NAME=store \
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT="http://127.0.0.1:$collector_port/v1/traces" \
    OTEL_BSP_SCHEDULE_DELAY=500 OTEL_BSP_MAX_QUEUE_SIZE=200000 OTEL_BSP_MAX_EXPORT_BATCH_SIZE=2048 \
    OTEL_METRICS_EXPORTER=none OTEL_LOGS_EXPORTER=none DATABASE_URL="$DATABASE_URL" \
    nice -n 10 "$venv/bin/gunicorn" -c gunicorn.conf.py -w "$WORKERS" -b "127.0.0.1:$app_port" app:app
  app_pid=$!
  wait_ready "$app_port" /health store "$app_pid" 60
  curl -sf "http://127.0.0.1:$app_port/$endpoint" >"$raw-sample.json" || die "GET /$endpoint failed; log: $work/logs/$case-store.log"
  say "$case: GET /$endpoint answers $(head -c 160 "$raw-sample.json")..."
  measure "$WARMUP_ITERATIONS" "$WARMUP_ITERATIONS requests by $VUS clients" \
    "$ITERATIONS" "$ITERATIONS requests by $VUS clients on /$endpoint"
  say "$case: stopping store (each worker shuts its SDK down on exit, which exports its last spans)"
  stop "$app_pid"
  stop "$collector_pid"

  keep_sdk_json "$MAX_TRACES"
  # The SQLAlchemy instrumentation's default: statements with placeholders,
  # never a bound value.
  if jq -e '[.resourceSpans[].scopeSpans[].spans[].attributes[]? | select(.key | test("param|values"))] | length > 0' "$out/traces.json" >/dev/null; then
    die "$out/traces.json holds parameter values; the instrumentation was meant to record none"
  fi
  say_warmup
  summarise 2200 "2 MB; lower MAX_TRACES" "$raw-window.json"
}

record_all 'case\trequests\treq/s\tp50_ms\tp95_ms\tfailed\twindow_traces\tkept\tspans\tbytes' "
  python-flask-orm-nplus1    orders/nplus1
  python-flask-orm-joined    orders/joined
  python-flask-chatty        dashboard/chatty
  python-flask-one-query     dashboard/one-query
  python-flask-same-setting  orders/same-setting
  python-flask-setting-once  orders/setting-once"

#!/usr/bin/env bash
# Records the corpus cases python-django-nplus1, python-django-nplus1-params,
# python-django-joined and python-django-same-author (see
# python-django/README.md).
#
# It makes a virtualenv with the packages pinned in
# python-django/requirements.txt (Django 5.2, psycopg2-binary, the
# OpenTelemetry SDK, OTLP/HTTP exporter and the Django and psycopg2
# instrumentations, the waitress WSGI server, all from PyPI), starts its own
# PostgreSQL 16 and Jaeger v2 in a scratch dir, migrates and seeds the books
# database, and for each case serves the application in python-django/ with
# waitress, instrumented, exporting OTLP/HTTP to Jaeger. It warms it up, loads
# one page with tracelab's load engine (closed model: VUS clients back to
# back), reads the traces of the measured run back from Jaeger's api/v3 and
# writes <case>/traces.json with `tracelab convert --redact`.
#
# Needs: Python >= 3.10 with venv, Go (builds tracelab), jq, curl, the
# PostgreSQL 16 server binaries (initdb, postgres) and a Jaeger v2 binary;
# infra/local/tools.sh caches both under ~/.cache/tracelab (PG_BIN_DIR and
# JAEGER_BIN override where they are).
#
# Environment:
#   DJANGO_CORPUS_WORK  scratch dir for the virtualenv, tools, database and
#                       raw logs (default: $TRACELAB_CACHE or ~/.cache/tracelab,
#                       then corpus-python-django); never inside the repository
#   PORT_BASE           the first of 6 consecutive ports (default 18600):
#                       PostgreSQL, the application, Jaeger's OTLP/HTTP
#                       receiver, its query HTTP and gRPC ports (+0..+4)
#   CASES               which cases to record (default: all four)
#   VUS, WARMUP, DURATION, MAX_TRACES   the load and the case size (below)
#
# What every recording script does alike (the scratch dir, process tracking,
# PostgreSQL, the load, the window, the summary) is in lib.sh.
set -euo pipefail
# shellcheck source=SCRIPTDIR/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

JAEGER_VERSION=v1.76.0

# The load: VUS closed-loop clients for DURATION on one page, after a warm-up
# of WARMUP with the same load (not recorded). A traces.json keeps the
# MAX_TRACES earliest traces of the measured run: an N+1 request is 42 spans
# (~0.6 KB each in OTLP JSON), so 60 traces stay under 2 MB.
VUS=${VUS:-4}
WARMUP=${WARMUP:-3s}
DURATION=${DURATION:-5s}
MAX_TRACES=${MAX_TRACES:-60}

port_base=${PORT_BASE:-18600}
pg_port=$port_base
app_port=$((port_base + 1))
otlp_port=$((port_base + 2))
query_port=$((port_base + 3))
query_grpc_port=$((port_base + 4))
target=http://127.0.0.1:$app_port
jaeger_bin=${JAEGER_BIN:-$cache/jaeger/$JAEGER_VERSION/jaeger}
service=django-books

use_work DJANGO_CORPUS_WORK corpus-python-django
need curl jq go python3
pg_need
[ -x "$jaeger_bin" ] || die "no Jaeger binary at $jaeger_bin (run infra/local/tools.sh, or set JAEGER_BIN)"

# --- tools: tracelab, the virtualenv -----------------------------------------
build_tracelab
venv=$work/venv
if [ ! -x "$venv/bin/python" ]; then
  run "$work/logs/venv.log" python3 -m venv "$venv"
fi
say "installing python-django/requirements.txt into $venv"
run "$work/logs/pip.log" "$venv/bin/pip" install --disable-pip-version-check -r "$src/requirements.txt"
py=$venv/bin/python
export PYTHONDONTWRITEBYTECODE=1 PYTHONPATH=$src
export DJANGO_SETTINGS_MODULE=booksite.settings BOOKS_DB_PORT=$pg_port

# --- PostgreSQL: the database books, migrated and seeded by manage.py --------
pgtmp=$(mktemp -d /tmp/corpus-python-django-pg.XXXXXX)
say "PostgreSQL: a fresh cluster in $pgtmp, port $pg_port"
pg_start books books -c timezone=UTC -c log_min_messages=warning
pg_wait "connect to PostgreSQL" "$work/logs/pg-connect.log" \
  "$py" -c "import psycopg2; psycopg2.connect(host='127.0.0.1', port=$pg_port, user='books', dbname='books').close()"
say "migrating and seeding (untraced): 41 authors, 80 books"
run "$work/logs/migrate.log" "$py" "$src/manage.py" migrate --noinput
run "$work/logs/seed.log" "$py" "$src/manage.py" seed

# --- Jaeger ------------------------------------------------------------------
say "Jaeger $JAEGER_VERSION: OTLP/HTTP on $otlp_port, query on $query_port"
spawn jaeger env JAEGER_OTLP_HTTP_PORT="$otlp_port" JAEGER_QUERY_PORT="$query_port" JAEGER_QUERY_GRPC_PORT="$query_grpc_port" \
  "$jaeger_bin" --config "$src/jaeger.yaml"
wait_ready "$query_port" /api/v3/services jaeger $! 30

# --- one case ----------------------------------------------------------------
# load_case OUT DURATION: VUS clients on the case's page.
load_case() { load "$1" PAGE="$page" VUS="$VUS" DURATION="$2"; }

rfc3339() { date -u -d "@$(($1 / 1000000000))" +%Y-%m-%dT%H:%M:%SZ; }

record() { # PAGE CAPTURE_PARAMETERS
  local page=$1 capture=$2 apid
  say "$case: serving the application (waitress, 4 threads), capture_parameters=$capture"
  spawn app env OTEL_SERVICE_NAME=$service CAPTURE_PARAMETERS="$capture" \
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT="http://127.0.0.1:$otlp_port/v1/traces" \
    OTEL_BSP_SCHEDULE_DELAY=500 OTEL_BSP_MAX_QUEUE_SIZE=200000 OTEL_BSP_MAX_EXPORT_BATCH_SIZE=2048 \
    OTEL_METRICS_EXPORTER=none OTEL_LOGS_EXPORTER=none \
    "$venv/bin/waitress-serve" --listen="127.0.0.1:$app_port" --threads=4 booksite.wsgi:application
  apid=$!
  wait_ready "$app_port" /health app "$apid" 30
  probe "$app_port" "books/$page" app
  measure "$WARMUP" "$WARMUP of the same load on /books/$page" "$DURATION" "$VUS clients for $DURATION on /books/$page" 2
  # SIGTERM: booksite/tracing.py turns it into a normal exit, so the SDK's
  # atexit hook flushes the batch span processor.
  say "$case: stopping the application (it exports its last spans on exit)"
  stop "$apid"
  sleep 2

  # Jaeger's find-traces: every trace of the service with a span in the
  # window (a second either side); the jq window keeps the measured ones.
  curl -sf -G "http://127.0.0.1:$query_port/api/v3/traces" \
    --data-urlencode "query.service_name=$service" \
    --data-urlencode "query.start_time_min=$(rfc3339 $((t0 - 1000000000)))" \
    --data-urlencode "query.start_time_max=$(rfc3339 $((t1 + 2000000000)))" \
    --data-urlencode "query.num_traces=100000" --data-urlencode "query.raw_traces=true" -o "$raw-jaeger.json" ||
    die "could not read the traces from Jaeger (port $query_port)"
  keep_window "$raw-jaeger.json" "$MAX_TRACES"
  say_warmup
  summarise 2200 "2 MB; lower MAX_TRACES" "$raw-window.json"
}

record_all 'case\trequests\treq/s\tp50_ms\tp95_ms\tfailed\twindow_traces\tkept_traces\tspans\tbytes' "
  python-django-nplus1         nplus1       false
  python-django-nplus1-params  nplus1       true
  python-django-joined         joined       true
  python-django-same-author    same-author  true"

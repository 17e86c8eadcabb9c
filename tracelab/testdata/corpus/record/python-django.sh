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
set -euo pipefail

POSTGRES_VERSION=16.4.0
JAEGER_VERSION=v1.76.0

# The load: VUS closed-loop clients for DURATION on one page, after a warm-up
# of WARMUP with the same load (not recorded). A traces.json keeps the
# MAX_TRACES earliest traces of the measured run: an N+1 request is 42 spans
# (~0.6 KB each in OTLP JSON), so 60 traces stay under 2 MB.
VUS=${VUS:-4}
WARMUP=${WARMUP:-3s}
DURATION=${DURATION:-5s}
MAX_TRACES=${MAX_TRACES:-60}

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
src=$here/python-django
corpus=$(dirname "$here")
tracelab_src=$(cd "$corpus/../.." && pwd)
cache=${TRACELAB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/tracelab}
work=${DJANGO_CORPUS_WORK:-$cache/corpus-python-django}
port_base=${PORT_BASE:-18600}
pg_port=$port_base
app_port=$((port_base + 1))
otlp_port=$((port_base + 2))
query_port=$((port_base + 3))
query_grpc_port=$((port_base + 4))
pg_bin=${PG_BIN_DIR:-$cache/postgres/$POSTGRES_VERSION/linux-amd64/bin}
jaeger_bin=${JAEGER_BIN:-$cache/jaeger/$JAEGER_VERSION/jaeger}
cases=${CASES:-python-django-nplus1 python-django-nplus1-params python-django-joined python-django-same-author}
service=django-books

say() { printf '==> %s\n' "$*" >&2; }
die() { printf 'python-django.sh: %s\n' "$*" >&2; exit 1; }

work=$(realpath -m "$work")
case $work in "$tracelab_src"/*|"$(dirname "$tracelab_src")"/*) die "DJANGO_CORPUS_WORK=$work is inside the repository; pick a scratch dir outside it" ;; esac
mkdir -p "$work/bin" "$work/logs"

# Every process this script starts is in pids; the trap stops them all (the
# application first, so that it exports its last spans, PostgreSQL last).
pids=()
pgdir=
stop_all() {
  local i
  for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
    kill "${pids[i]}" 2>/dev/null || true
    wait "${pids[i]}" 2>/dev/null || true
  done
  pids=()
}
cleanup() {
  stop_all
  [ -z "$pgdir" ] || rm -rf "$pgdir"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# run LOG CMD...: a build step, its output in LOG, the tail shown on failure.
run() {
  local log=$1; shift
  if ! "$@" >"$log" 2>&1; then
    tail -n 20 "$log" >&2
    die "failed: $*; full log: $log"
  fi
}

for c in curl jq go python3; do
  command -v "$c" >/dev/null || die "$c is required"
done
[ -x "$pg_bin/postgres" ] || die "no PostgreSQL binaries in $pg_bin (run infra/local/tools.sh, or set PG_BIN_DIR)"
[ -x "$jaeger_bin" ] || die "no Jaeger binary at $jaeger_bin (run infra/local/tools.sh, or set JAEGER_BIN)"

# --- tools: tracelab, the virtualenv -----------------------------------------
say "building tracelab from $tracelab_src"
(cd "$tracelab_src" && run "$work/logs/tracelab-build.log" go build -o "$work/bin/tracelab" .)
tracelab=$work/bin/tracelab

venv=$work/venv
if [ ! -x "$venv/bin/python" ]; then
  run "$work/logs/venv.log" python3 -m venv "$venv"
fi
say "installing python-django/requirements.txt into $venv"
run "$work/logs/pip.log" "$venv/bin/pip" install --disable-pip-version-check -r "$src/requirements.txt"
py=$venv/bin/python
export PYTHONDONTWRITEBYTECODE=1 PYTHONPATH=$src
export DJANGO_SETTINGS_MODULE=booksite.settings BOOKS_DB_PORT=$pg_port

# --- PostgreSQL --------------------------------------------------------------
# PostgreSQL refuses to run as root. As root it runs as the postgres account
# (else nobody) from a copy of the binaries in a temporary dir that account
# can reach (root's home is closed to it); the trap removes that dir.
as_pg=()
pgdir=$(mktemp -d /tmp/corpus-python-django-pg.XXXXXX)
if [ "$(id -u)" = 0 ]; then
  account=postgres
  id "$account" >/dev/null 2>&1 || account=nobody
  as_pg=(setpriv --reuid="$account" --regid="$(id -g "$account")" --init-groups)
  cp -a "$(dirname "$pg_bin")" "$pgdir/dist"
  chmod -R a+rX "$pgdir"; chown "$account:" "$pgdir"
  pg_bin=$pgdir/dist/bin
fi
say "PostgreSQL: a fresh cluster in $pgdir, port $pg_port"
run "$work/logs/initdb.log" "${as_pg[@]}" "$pg_bin/initdb" -D "$pgdir/data" -U books --auth=trust -E UTF8 --locale=C
echo "CREATE DATABASE books" | "${as_pg[@]}" "$pg_bin/postgres" --single -D "$pgdir/data" postgres >"$work/logs/createdb.log" 2>&1 ||
  die "could not create the books database; log: $work/logs/createdb.log"
"${as_pg[@]}" "$pg_bin/postgres" -D "$pgdir/data" -c listen_addresses=127.0.0.1 -p "$pg_port" \
  -c unix_socket_directories="$pgdir" -c timezone=UTC -c log_min_messages=warning >"$work/logs/postgres.log" 2>&1 &
pids+=($!)
for i in $(seq 60); do
  "$py" -c "import psycopg2; psycopg2.connect(host='127.0.0.1', port=$pg_port, user='books', dbname='books').close()" 2>/dev/null && break
  [ "$i" = 60 ] && die "PostgreSQL did not start; log: $work/logs/postgres.log"
  sleep 0.5
done
say "migrating and seeding (untraced): 41 authors, 80 books"
run "$work/logs/migrate.log" "$py" "$src/manage.py" migrate --noinput
run "$work/logs/seed.log" "$py" "$src/manage.py" seed

# --- Jaeger ------------------------------------------------------------------
say "Jaeger $JAEGER_VERSION: OTLP/HTTP on $otlp_port, query on $query_port"
JAEGER_OTLP_HTTP_PORT=$otlp_port JAEGER_QUERY_PORT=$query_port JAEGER_QUERY_GRPC_PORT=$query_grpc_port \
  "$jaeger_bin" --config "$src/jaeger.yaml" >"$work/logs/jaeger.log" 2>&1 &
pids+=($!)
for i in $(seq 60); do
  curl -sf -o /dev/null "http://127.0.0.1:$query_port/api/v3/services" && break
  [ "$i" = 60 ] && die "Jaeger did not start; log: $work/logs/jaeger.log"
  sleep 0.5
done

# --- one case ----------------------------------------------------------------
# The traces whose root (the Django SERVER span) started inside the measured
# run, every span of them; warm-up and readiness probes drop out. A root's
# parent is the load's traceparent, which no span in the file has.
window='
  ([.resourceSpans[].scopeSpans[].spans[].spanId | {key: ., value: true}] | from_entries) as $ids
  | ([.resourceSpans[].scopeSpans[].spans[]
    | select(($ids[.parentSpanId // ""] | not)
             and (.startTimeUnixNano | tonumber) >= $t0
             and (.startTimeUnixNano | tonumber) <= $t1)
    | {key: .traceId, value: true}] | from_entries) as $keep
  | .resourceSpans |= map(.scopeSpans |= map(.spans |= map(select($keep[.traceId])) | select(.spans | length > 0)))
  | .resourceSpans |= map(select(.scopeSpans | length > 0))'

load() { # PAGE DURATION OUT
  "$tracelab" load run "$src/load.yaml" --target "http://127.0.0.1:$app_port" \
    --param PAGE="$1" --param VUS="$VUS" --param DURATION="$2" --out "$3" >>"$work/logs/$case-load.log" 2>&1 ||
    die "the load failed; log: $work/logs/$case-load.log"
}

rfc3339() { date -u -d "@$(($1 / 1000000000))" +%Y-%m-%dT%H:%M:%SZ; }

record() { # CASE PAGE CAPTURE_PARAMETERS
  case=$1; local page=$2 capture=$3 out=$corpus/$1 raw=$work/$1
  say "$case: serving the application (waitress, 4 threads), capture_parameters=$capture"
  : >"$work/logs/$case-load.log"
  OTEL_SERVICE_NAME=$service CAPTURE_PARAMETERS=$capture \
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT="http://127.0.0.1:$otlp_port/v1/traces" \
    OTEL_BSP_SCHEDULE_DELAY=500 OTEL_BSP_MAX_QUEUE_SIZE=200000 OTEL_BSP_MAX_EXPORT_BATCH_SIZE=2048 \
    OTEL_METRICS_EXPORTER=none OTEL_LOGS_EXPORTER=none \
    "$venv/bin/waitress-serve" --listen="127.0.0.1:$app_port" --threads=4 booksite.wsgi:application \
    >"$work/logs/$case-app.log" 2>&1 &
  pids+=($!); local apid=$!
  for i in $(seq 60); do
    curl -sf -o /dev/null "http://127.0.0.1:$app_port/health" && break
    kill -0 "$apid" 2>/dev/null || die "the application exited while starting; log: $work/logs/$case-app.log"
    [ "$i" = 60 ] && die "the application did not answer on $app_port; log: $work/logs/$case-app.log"
    sleep 0.5
  done
  curl -sf -o /dev/null "http://127.0.0.1:$app_port/books/$page" || die "GET /books/$page failed; log: $work/logs/$case-app.log"
  say "$case: warm-up, $WARMUP of the same load on /books/$page (not recorded)"
  load "$page" "$WARMUP" "$raw-warmup.json"
  sleep 1
  say "$case: measured run, $VUS clients for $DURATION on /books/$page"
  local t0 t1; t0=$(date +%s%N)
  load "$page" "$DURATION" "$raw-load.json"
  t1=$(date +%s%N)
  sleep 2
  say "$case: stopping the application (it exports its last spans on exit)"
  stop_app "$apid"
  sleep 2

  # Jaeger's find-traces: every trace of the service with a span in the
  # window (a second either side); the jq window keeps the measured ones.
  curl -sf -G "http://127.0.0.1:$query_port/api/v3/traces" \
    --data-urlencode "query.service_name=$service" \
    --data-urlencode "query.start_time_min=$(rfc3339 $((t0 - 1000000000)))" \
    --data-urlencode "query.start_time_max=$(rfc3339 $((t1 + 2000000000)))" \
    --data-urlencode "query.num_traces=100000" --data-urlencode "query.raw_traces=true" -o "$raw-jaeger.json" ||
    die "could not read the traces from Jaeger (port $query_port)"
  (cd "$work" && "$tracelab" convert --file "$raw-jaeger.json" --to otlp --out "$raw-all.json") ||
    die "tracelab convert failed on $raw-jaeger.json"
  jq -c --argjson t0 "$t0" --argjson t1 "$t1" "$window" "$raw-all.json" >"$raw-window.json"
  mkdir -p "$out"
  # Run from $work so --redact also drops every value that names it.
  (cd "$work" && "$tracelab" convert --file "$raw-window.json" --to otlp --redact --max-traces "$MAX_TRACES" --out "$out/traces.json") ||
    die "tracelab convert --redact failed on $raw-window.json"
  if grep -qE "$work|/root|/home/|$pgdir" "$out/traces.json"; then die "$out/traces.json still names a local path"; fi

  local reqs rate p50 p95 failed wtraces traces spans size
  numbers() { jq -r '.summary | [.requests, (.throughput_rps*10|round/10), (.p50_ms|round), (.p95_ms|round), .error_rate] | @tsv' "$1"; }
  read -r reqs rate p50 p95 failed < <(numbers "$raw-warmup.json")
  say "$case: warm-up (not recorded): $reqs requests, $rate req/s, p50 ${p50} ms, p95 ${p95} ms, failed $failed"
  read -r reqs rate p50 p95 failed < <(numbers "$raw-load.json")
  wtraces=$(jq '[.resourceSpans[].scopeSpans[].spans[].traceId] | unique | length' "$raw-window.json")
  traces=$(jq '[.resourceSpans[].scopeSpans[].spans[].traceId] | unique | length' "$out/traces.json")
  spans=$(jq '[.resourceSpans[].scopeSpans[].spans[]] | length' "$out/traces.json")
  size=$(stat -c %s "$out/traces.json")
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$case" "$reqs" "$rate" "$p50" "$p95" "$failed" "$wtraces" "$traces" "$spans" "$size" >>"$work/summary.tsv"
  say "$case: measured: $reqs requests, $rate req/s, p50 ${p50} ms, p95 ${p95} ms, failed $failed; $wtraces traces in the window, $traces kept, $spans spans, $((size / 1024)) KiB"
  [ "$wtraces" = "$reqs" ] || say "$case: WARNING: $reqs requests but $wtraces traces in the window"
  [ "$size" -le $((2200 * 1024)) ] || say "$case: WARNING: traces.json is over 2 MB; lower MAX_TRACES"
}

# stop_app PID: SIGTERM (booksite/tracing.py turns it into a normal exit, so
# the SDK's atexit hook flushes the batch span processor), then out of pids.
stop_app() {
  kill -TERM "$1" 2>/dev/null || true
  wait "$1" 2>/dev/null || true
  local keep=() p
  for p in "${pids[@]}"; do [ "$p" = "$1" ] || keep+=("$p"); done
  pids=("${keep[@]}")
}

printf 'case\trequests\treq/s\tp50_ms\tp95_ms\tfailed\twindow_traces\tkept_traces\tspans\tbytes\n' >"$work/summary.tsv"
for c in $cases; do
  case $c in
    python-django-nplus1) record "$c" nplus1 false ;;
    python-django-nplus1-params) record "$c" nplus1 true ;;
    python-django-joined) record "$c" joined true ;;
    python-django-same-author) record "$c" same-author true ;;
    *) die "unknown case $c (CASES)" ;;
  esac
done
say "done; summary:"
column -t -s $'\t' "$work/summary.tsv" >&2
say "traces written under $corpus; raw logs under $work/logs"

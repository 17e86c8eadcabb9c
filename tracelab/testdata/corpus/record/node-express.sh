#!/usr/bin/env bash
# Records the corpus cases node-express-orm-nplus1, node-express-orm-joined,
# node-express-http-nplus1 and node-express-http-batched (see
# node-express/README.md).
#
# Two Express services from node-express/, installed from npm at the
# versions pinned in node-express/package-lock.json (npm ci), each started
# with the OpenTelemetry Node SDK (node-express/tracing.js:
# instrumentation-http, -express, -pg, -knex; instrumentation-pg with
# enhancedDatabaseReporting, so the bound values are recorded) exporting OTLP/HTTP JSON to a small receiver
# (node-express/collector.js) that appends every export request to a file:
#   shop     GET /orders/nplus1, /orders/joined (Knex + Objection on
#            PostgreSQL), GET /cart/nplus1, /cart/batched (HTTP to pricing)
#   pricing  GET /price/:id, GET /prices?ids=...
# PostgreSQL is a throwaway cluster of its own (initdb on a temporary data
# dir, seeded from node-express/db.sql). For each case it starts the receiver,
# pricing and shop fresh, warms up, loads one shop endpoint with tracelab's
# load engine (closed model: VUS clients, ITERATIONS requests), stops the
# services (the SDK flushes its spans on SIGTERM), and writes
# <case>/traces.json: the traces whose root started in the measured run, the
# first MAX_TRACES of them, converted by `tracelab convert --redact`.
#
# Needs: Node >= 20 with npm, Go (builds tracelab), jq, curl, and
# PostgreSQL's server binaries (initdb, postgres) in PG_BIN_DIR (default: the
# lab's tool cache, ~/.cache/tracelab/postgres/16.4.0/linux-amd64/bin, which
# `infra/local/tools.sh` fills). As root, PostgreSQL runs as the postgres
# account (or nobody) from a copy of the binaries in a temporary dir.
#
# Environment:
#   NODE_CORPUS_WORK   scratch dir for node_modules, tracelab and raw logs
#                      (default: $TRACELAB_CACHE or ~/.cache/tracelab, then
#                      corpus-node-express); never inside the repository
#   PG_PORT, SHOP_PORT, PRICING_PORT, COLLECTOR_PORT   default 18620-18623
#   CASES              which cases to record (default: all four)
#   VUS, WARMUP_ITERATIONS, ITERATIONS, MAX_TRACES   the load (defaults below)
set -euo pipefail

# The load: 4 closed-loop clients, WARMUP_ITERATIONS requests not recorded,
# then ITERATIONS measured; the first MAX_TRACES of those go into the case
# (the N+1 order traces hold ~65 spans each, ~1 KB a span in OTLP JSON).
VUS=${VUS:-4}
WARMUP_ITERATIONS=${WARMUP_ITERATIONS:-40}
ITERATIONS=${ITERATIONS:-40}
MAX_TRACES=${MAX_TRACES:-20}

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
src=$here/node-express
corpus=$(dirname "$here")
tracelab_src=$(cd "$corpus/../.." && pwd)
cache=${TRACELAB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/tracelab}
work=${NODE_CORPUS_WORK:-$cache/corpus-node-express}
pg_bin=${PG_BIN_DIR:-$cache/postgres/16.4.0/linux-amd64/bin}
pg_port=${PG_PORT:-18620}
shop_port=${SHOP_PORT:-18621}
pricing_port=${PRICING_PORT:-18622}
collector_port=${COLLECTOR_PORT:-18623}
cases=${CASES:-node-express-orm-nplus1 node-express-orm-joined node-express-http-nplus1 node-express-http-batched}

say() { printf '==> %s\n' "$*" >&2; }
die() { printf 'node-express.sh: %s\n' "$*" >&2; exit 1; }

work=$(realpath -m "$work")
case $work in "$tracelab_src"/*|"$(dirname "$tracelab_src")"/*) die "NODE_CORPUS_WORK=$work is inside the repository; pick a scratch dir outside it" ;; esac
mkdir -p "$work/bin" "$work/logs" "$work/raw"

# Every process this script starts is in pids; the trap stops them all
# (SIGTERM: the services flush their spans, PostgreSQL shuts down), then
# removes the temporary PostgreSQL dir.
pids=()
pgtmp=
stop_all() {
  local p
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  pids=()
}
cleanup() {
  stop_all
  [ -z "$pgtmp" ] || rm -rf "$pgtmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

run() { # LOG CMD...: a build step, its output in LOG, the tail shown on failure
  local log=$1; shift
  if ! "$@" >"$log" 2>&1; then
    tail -n 20 "$log" >&2
    die "failed: $*; full log: $log"
  fi
}

for c in node npm curl jq go; do
  command -v "$c" >/dev/null || die "$c is required"
done
[ -x "$pg_bin/postgres" ] && [ -x "$pg_bin/initdb" ] || die "no PostgreSQL server binaries in $pg_bin (PG_BIN_DIR)"

# --- tracelab and the application --------------------------------------------
say "building tracelab from $tracelab_src"
(cd "$tracelab_src" && run "$work/logs/tracelab-build.log" nice -n 19 go build -o "$work/bin/tracelab" .)
tracelab=$work/bin/tracelab

app=$work/app
mkdir -p "$app"
cp "$src"/package.json "$src"/package-lock.json "$src"/*.js "$src"/db.sql "$app/"
# package-lock.json pins every package (written with
# --omit-lockfile-registry-resolved: npm ci takes them from the configured
# registry). No package needs an install script (protobufjs's postinstall
# only prints a notice), so none runs.
if ! cat "$src/package.json" "$src/package-lock.json" | cmp -s - "$app/.installed"; then
  say "installing the application's packages from npm (node-express/package-lock.json)"
  (cd "$app" && run "$work/logs/npm-ci.log" nice -n 19 npm ci --no-audit --no-fund --ignore-scripts)
  cat "$src/package.json" "$src/package-lock.json" >"$app/.installed"
fi

# --- PostgreSQL ----------------------------------------------------------------
pgtmp=$(mktemp -d "${TMPDIR:-/tmp}/tracelab-corpus-node-pg.XXXXXX")
as_pg=()
if [ "$(id -u)" = 0 ]; then
  account=postgres
  id "$account" >/dev/null 2>&1 || account=nobody
  as_pg=(setpriv --reuid="$account" --regid="$(id -g "$account")" --init-groups)
  cp -a "$(dirname "$pg_bin")" "$pgtmp/dist" && chmod -R a+rX "$pgtmp/dist"
  chmod 755 "$pgtmp"
  pg_bin=$pgtmp/dist/bin
fi
mkdir -p "$pgtmp/data" "$pgtmp/run"
[ ${#as_pg[@]} = 0 ] || chown "$account:" "$pgtmp/data" "$pgtmp/run"
say "PostgreSQL $("$pg_bin/postgres" --version | awk '{print $3}') on 127.0.0.1:$pg_port (data in $pgtmp)"
run "$work/logs/initdb.log" "${as_pg[@]}" "$pg_bin/initdb" -D "$pgtmp/data" -U corpus --auth=trust -E UTF8 --locale=C
echo "CREATE DATABASE shop" | "${as_pg[@]}" "$pg_bin/postgres" --single -D "$pgtmp/data" postgres >"$work/logs/createdb.log" 2>&1 ||
  die "CREATE DATABASE failed; log: $work/logs/createdb.log"
"${as_pg[@]}" "$pg_bin/postgres" -D "$pgtmp/data" -c listen_addresses=127.0.0.1 -p "$pg_port" \
  -c unix_socket_directories="$pgtmp/run" -c max_connections=50 -c synchronous_commit=off \
  >"$work/logs/postgres.log" 2>&1 &
pids+=($!); pg_pid=$!
export DATABASE_URL="postgres://corpus@127.0.0.1:$pg_port/shop"
for i in $(seq 60); do
  (cd "$app" && node seed.js) >"$work/logs/seed.log" 2>&1 && break
  kill -0 "$pg_pid" 2>/dev/null || die "PostgreSQL exited; log: $work/logs/postgres.log"
  [ "$i" = 60 ] && die "could not seed the database in 30 s; log: $work/logs/seed.log"
  sleep 0.5
done
say "$(cat "$work/logs/seed.log")"

# --- one case ------------------------------------------------------------------
svc_pids=()
start() { # NAME SCRIPT [ENV=VALUE...]: a node process in the background, logging to logs/CASE-NAME.log
  local name=$1 script=$2; shift 2
  (cd "$app" && exec env "$@" nice -n 10 node $script) >"$work/logs/$case-$name.log" 2>&1 &
  pids+=($!); svc_pids+=($!)
}
wait_ready() { # URL NAME
  local i
  for i in $(seq 60); do
    curl -sf -o /dev/null "$1" && return 0
    sleep 0.5
  done
  die "$2 did not answer on $1 within 30 s; log: $work/logs/$case-$2.log"
}
stop_svcs() { # SIGTERM the services (they flush on it), then the receiver
  local p
  for p in "${svc_pids[@]:1}"; do kill "$p" 2>/dev/null || true; done
  for p in "${svc_pids[@]:1}"; do wait "$p" 2>/dev/null || true; done
  kill "${svc_pids[0]}" 2>/dev/null || true; wait "${svc_pids[0]}" 2>/dev/null || true
  local keep=() q
  for q in "${pids[@]}"; do [[ " ${svc_pids[*]} " == *" $q "* ]] || keep+=("$q"); done
  pids=("${keep[@]}"); svc_pids=()
}

load() { # ENDPOINT ITERATIONS OUT
  "$tracelab" load run "$src/load.yaml" --target "http://127.0.0.1:$shop_port" \
    --param ENDPOINT="$1" --param VUS="$VUS" --param ITERATIONS="$2" --out "$3" >>"$work/logs/$case-load.log" 2>&1 ||
    die "the load failed; log: $work/logs/$case-load.log"
}

# The traces whose root started inside the measured run, every span of them.
# A request's root is shop's server span, whose parent is the load's
# traceparent, which no span in the file has.
window='
  ([.resourceSpans[].scopeSpans[].spans[].spanId | {key: ., value: true}] | from_entries) as $ids
  | ([.resourceSpans[].scopeSpans[].spans[]
    | select(($ids[.parentSpanId // ""] | not)
             and (.startTimeUnixNano | tonumber) >= $t0
             and (.startTimeUnixNano | tonumber) <= $t1)
    | {key: .traceId, value: true}] | from_entries) as $keep
  | .resourceSpans |= map(.scopeSpans |= map(.spans |= map(select($keep[.traceId])) | select(.spans | length > 0)))
  | .resourceSpans |= map(select(.scopeSpans | length > 0))'

# The machine's attributes dropped as `tracelab convert --redact` drops
# them (pkg/redact's machineKeys, and every value that names the home, temporary or
# scratch dir), then the MAX_TRACES traces whose roots start first.
redact_trim='
  ["host.name", "host.id", "host.ip", "host.mac", "process.command", "process.command_line",
   "process.command_args", "process.executable.path", "process.owner"] as $machine
  | def clean: map(select((.key | IN($machine[]) | not)
                          and ((.value | tojson) as $v | [$home, $tmp, $work] | any(. as $d | $v | contains($d)) | not)));
  ([.resourceSpans[].scopeSpans[].spans[].spanId | {key: ., value: true}] | from_entries) as $ids
  | ([.resourceSpans[].scopeSpans[].spans[] | select($ids[.parentSpanId // ""] | not)]
     | sort_by(.startTimeUnixNano | tonumber) | map(.traceId)) as $roots
  | (reduce $roots[] as $t ([]; if index([$t]) then . else . + [$t] end) | .[:$n]
     | map({key: ., value: true}) | from_entries) as $keep
  | .resourceSpans |= map(
      .resource.attributes |= clean
      | .scopeSpans |= map(.spans |= map(select($keep[.traceId]) | .attributes |= clean) | select(.spans | length > 0)))
  | .resourceSpans |= map(select(.scopeSpans | length > 0))'

record() { # CASE ENDPOINT
  case=$1; local endpoint=$2 out=$corpus/$1 raw=$work/raw/$1
  : >"$work/logs/$case-load.log"; rm -f "$raw".*
  say "$case: starting the OTLP receiver, pricing and shop"
  start collector collector.js PORT="$collector_port" OUT="$raw.otlp.jsonl"
  wait_ready "http://127.0.0.1:$collector_port/health" collector
  local otel=(OTLP_TRACES_URL="http://127.0.0.1:$collector_port/v1/traces" OTEL_METRICS_EXPORTER=none OTEL_LOGS_EXPORTER=none PG_ENHANCED=1)
  start pricing "--require ./tracing.js pricing.js" "${otel[@]}" OTEL_SERVICE_NAME=pricing PORT="$pricing_port"
  start shop "--require ./tracing.js shop.js" "${otel[@]}" OTEL_SERVICE_NAME=shop PORT="$shop_port" \
    PRICING_URL="http://127.0.0.1:$pricing_port" DATABASE_URL="$DATABASE_URL"
  wait_ready "http://127.0.0.1:$pricing_port/health" pricing
  wait_ready "http://127.0.0.1:$shop_port/health" shop
  curl -sf "http://127.0.0.1:$shop_port/$endpoint" >"$raw.sample.json" || die "GET /$endpoint failed; log: $work/logs/$case-shop.log"
  say "$case: GET /$endpoint answers $(cat "$raw.sample.json")"
  say "$case: warm-up, $WARMUP_ITERATIONS requests by $VUS clients (not recorded)"
  load "$endpoint" "$WARMUP_ITERATIONS" "$raw.warmup.json"
  sleep 1
  say "$case: measured run, $ITERATIONS requests by $VUS clients on /$endpoint"
  local t0 t1; t0=$(date +%s%N)
  load "$endpoint" "$ITERATIONS" "$raw.load.json"
  t1=$(date +%s%N)
  sleep 1
  say "$case: stopping the services (the SDK exports its last spans on SIGTERM)"
  stop_svcs

  [ -s "$raw.otlp.jsonl" ] || die "no spans received ($raw.otlp.jsonl)"
  # The receiver's lines merged into one document, the window cut out, the
  # machine redacted and the first MAX_TRACES traces kept, all in jq: the
  # case keeps the SDK's own OTLP JSON (intValue numbers, arrayValue lists:
  # db.postgresql.values is one), which `tracelab convert` would rewrite as
  # strings.
  jq -c -s '{resourceSpans: [.[].resourceSpans[]]}' "$raw.otlp.jsonl" |
    jq -c --argjson t0 "$t0" --argjson t1 "$t1" "$window" >"$raw.window.json"
  mkdir -p "$out"
  jq -c --argjson n "$MAX_TRACES" --arg home "$HOME" --arg tmp "${TMPDIR:-/tmp}" --arg work "$work" "$redact_trim" \
    "$raw.window.json" >"$out/traces.json"
  if grep -qE "$work|$pgtmp|$HOME|/home/" "$out/traces.json"; then die "$out/traces.json still names a local path"; fi
  # Nothing left that `tracelab convert --redact` would drop.
  (cd "$work" && cmp -s <("$tracelab" convert --file "$out/traces.json" --to otlp) <("$tracelab" convert --file "$out/traces.json" --to otlp --redact)) ||
    die "$out/traces.json holds something tracelab convert --redact drops"

  local reqs rate p50 p95 failed wtraces traces spans size
  numbers() { jq -r '.summary | [.requests, (.throughput_rps*10|round/10), (.p50_ms|round), (.p95_ms|round), .error_rate] | @tsv' "$1"; }
  read -r reqs rate p50 p95 failed < <(numbers "$raw.warmup.json")
  say "$case: warm-up (not recorded): $reqs requests, $rate req/s, p50 ${p50} ms, p95 ${p95} ms, failed $failed"
  read -r reqs rate p50 p95 failed < <(numbers "$raw.load.json")
  wtraces=$(jq '[.resourceSpans[].scopeSpans[].spans[].traceId] | unique | length' "$raw.window.json")
  traces=$(jq '[.resourceSpans[].scopeSpans[].spans[].traceId] | unique | length' "$out/traces.json")
  spans=$(jq '[.resourceSpans[].scopeSpans[].spans[]] | length' "$out/traces.json")
  size=$(stat -c %s "$out/traces.json")
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$case" "$reqs" "$rate" "$p50" "$p95" "$failed" "$wtraces" "$traces" "$spans" "$size" >>"$work/summary.tsv"
  say "$case: measured: $reqs requests, $rate req/s, p50 ${p50} ms, p95 ${p95} ms, failed $failed; $wtraces traces in the window, $traces kept, $spans spans, $((size / 1024)) KiB"
  [ "$wtraces" = "$reqs" ] || say "$case: WARNING: $reqs requests but $wtraces traces in the window"
  [ "$size" -le $((2200 * 1024)) ] || say "$case: WARNING: traces.json is over 2 MB; lower MAX_TRACES"
}

printf 'case\trequests\treq/s\tp50_ms\tp95_ms\tfailed\twindow_traces\tkept\tspans\tbytes\n' >"$work/summary.tsv"
for c in $cases; do
  case $c in
    node-express-orm-nplus1) record "$c" orders/nplus1 ;;
    node-express-orm-joined) record "$c" orders/joined ;;
    node-express-http-nplus1) record "$c" cart/nplus1 ;;
    node-express-http-batched) record "$c" cart/batched ;;
    *) die "unknown case $c (CASES)" ;;
  esac
done
say "done; summary:"
column -t -s $'\t' "$work/summary.tsv" >&2
say "traces written under $corpus; raw logs under $work/logs"

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
#
# What every recording script does alike (the scratch dir, process tracking,
# PostgreSQL, the load, the window, the summary) is in lib.sh.
set -euo pipefail
# shellcheck source=SCRIPTDIR/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# The load: 4 closed-loop clients, WARMUP_ITERATIONS requests not recorded,
# then ITERATIONS measured; the first MAX_TRACES of those go into the case
# (the N+1 order traces hold ~65 spans each, ~1 KB a span in OTLP JSON).
VUS=${VUS:-4}
WARMUP_ITERATIONS=${WARMUP_ITERATIONS:-40}
ITERATIONS=${ITERATIONS:-40}
MAX_TRACES=${MAX_TRACES:-20}

pg_port=${PG_PORT:-18620}
shop_port=${SHOP_PORT:-18621}
pricing_port=${PRICING_PORT:-18622}
collector_port=${COLLECTOR_PORT:-18623}
target=http://127.0.0.1:$shop_port

use_work NODE_CORPUS_WORK corpus-node-express raw
need node npm curl jq go
pg_need

# --- tracelab and the application --------------------------------------------
build_tracelab
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

# --- PostgreSQL: the database shop, seeded by seed.js from db.sql -------------
pgtmp=$(mktemp -d "${TMPDIR:-/tmp}/tracelab-corpus-node-pg.XXXXXX")
say "PostgreSQL $("$pg_bin/postgres" --version | awk '{print $3}') on 127.0.0.1:$pg_port (data in $pgtmp)"
pg_start corpus shop -c max_connections=50 -c synchronous_commit=off
export DATABASE_URL="postgres://corpus@127.0.0.1:$pg_port/shop"
pg_wait "seed the database" "$work/logs/seed.log" env -C "$app" node seed.js
say "$(cat "$work/logs/seed.log")"

# --- one case ------------------------------------------------------------------
# start NAME NODE_ARGS [ENV=VALUE...]: a node process in the app dir, under
# nice 10, logging to logs/CASE-NAME.log.
start() {
  local name=$1 node_args=$2
  shift 2
  # shellcheck disable=SC2086 # NODE_ARGS is node's arguments, split on purpose
  spawn "$name" env -C "$app" "$@" nice -n 10 node $node_args
}

# load_case OUT ITERATIONS: VUS clients on the case's endpoint.
load_case() { load "$1" ENDPOINT="$endpoint" VUS="$VUS" ITERATIONS="$2"; }

# The machine's attributes dropped as `tracelab convert --redact` drops
# them (pkg/redact's machineKeys, and every value that names the home, temporary or
# scratch dir), then the MAX_TRACES traces whose roots start first.
# shellcheck disable=SC2016 # jq's variables, not the shell's
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

record() { # ENDPOINT
  local endpoint=$1 collector_pid pricing_pid shop_pid
  raw=$work/raw/$case
  rm -f "$raw"-*
  say "$case: starting the OTLP receiver, pricing and shop"
  start collector collector.js PORT="$collector_port" OUT="$raw-otlp.jsonl"
  collector_pid=$!
  wait_ready "$collector_port" /health collector "$collector_pid" 30
  local otel=(OTLP_TRACES_URL="http://127.0.0.1:$collector_port/v1/traces" OTEL_METRICS_EXPORTER=none OTEL_LOGS_EXPORTER=none PG_ENHANCED=1)
  start pricing "--require ./tracing.js pricing.js" "${otel[@]}" OTEL_SERVICE_NAME=pricing PORT="$pricing_port"
  pricing_pid=$!
  start shop "--require ./tracing.js shop.js" "${otel[@]}" OTEL_SERVICE_NAME=shop PORT="$shop_port" \
    PRICING_URL="http://127.0.0.1:$pricing_port" DATABASE_URL="$DATABASE_URL"
  shop_pid=$!
  wait_ready "$pricing_port" /health pricing "$pricing_pid" 30
  wait_ready "$shop_port" /health shop "$shop_pid" 30
  curl -sf "http://127.0.0.1:$shop_port/$endpoint" >"$raw-sample.json" || die "GET /$endpoint failed; log: $work/logs/$case-shop.log"
  say "$case: GET /$endpoint answers $(cat "$raw-sample.json")"
  measure "$WARMUP_ITERATIONS" "$WARMUP_ITERATIONS requests by $VUS clients" \
    "$ITERATIONS" "$ITERATIONS requests by $VUS clients on /$endpoint"
  say "$case: stopping the services (the SDK exports its last spans on SIGTERM)"
  stop "$shop_pid" "$pricing_pid"
  stop "$collector_pid"

  [ -s "$raw-otlp.jsonl" ] || die "no spans received ($raw-otlp.jsonl)"
  # The receiver's lines merged into one document, the window cut out, the
  # machine redacted and the first MAX_TRACES traces kept, all in jq: the
  # case keeps the SDK's own OTLP JSON (intValue numbers, arrayValue lists:
  # db.postgresql.values is one), which `tracelab convert` would rewrite as
  # strings.
  jq -c -s '{resourceSpans: [.[].resourceSpans[]]}' "$raw-otlp.jsonl" | cut_window >"$raw-window.json"
  mkdir -p "$out"
  jq -c --argjson n "$MAX_TRACES" --arg home "$HOME" --arg tmp "${TMPDIR:-/tmp}" --arg work "$work" "$redact_trim" \
    "$raw-window.json" >"$out/traces.json"
  check_paths
  # Nothing left that `tracelab convert --redact` would drop.
  (cd "$work" && cmp -s <("$tracelab" convert --file "$out/traces.json" --to otlp) <("$tracelab" convert --file "$out/traces.json" --to otlp --redact)) ||
    die "$out/traces.json holds something tracelab convert --redact drops"
  say_warmup
  summarise 2200 "2 MB; lower MAX_TRACES" "$raw-window.json"
}

record_all 'case\trequests\treq/s\tp50_ms\tp95_ms\tfailed\twindow_traces\tkept\tspans\tbytes' "
  node-express-orm-nplus1    orders/nplus1
  node-express-orm-joined    orders/joined
  node-express-http-nplus1   cart/nplus1
  node-express-http-batched  cart/batched"

#!/usr/bin/env bash
# Records the corpus cases node-express-orm-nplus1, node-express-orm-joined,
# node-express-http-nplus1 and node-express-http-batched (shop and pricing),
# and node-express-cpu-sync, node-express-cpu-async, node-express-json,
# node-express-exec-sync and node-express-exec-async (accounts) (see
# node-express/README.md).
#
# Three Express services from node-express/, installed from npm at the
# versions pinned in node-express/package-lock.json (npm ci), each started
# with the OpenTelemetry Node SDK (node-express/tracing.js:
# instrumentation-http, -express, -pg, -knex; instrumentation-pg with
# enhancedDatabaseReporting, so the bound values are recorded) exporting OTLP/HTTP JSON to a small receiver
# (node-express/collector.js) that appends every export request to a file:
#   shop      GET /orders/nplus1, /orders/joined (Knex + Objection on
#             PostgreSQL), GET /cart/nplus1, /cart/batched (HTTP to pricing)
#   pricing   GET /price/:id, GET /prices?ids=...
#   accounts  GET /hash/sync, /hash/async (PBKDF2, ~10 ms), /exec/sync,
#             /exec/async (a `sleep 0.01` child process), /json: the same
#             work blocking Node's event loop and not; no database
# PostgreSQL (shop's cases only) is a throwaway cluster of its own (initdb on
# a temporary data dir, seeded from node-express/db.sql), started before the
# first shop case. For each case it starts the receiver and the case's
# services (pricing and shop, or accounts) fresh, warms up, loads one
# endpoint with tracelab's load engine (closed model: VUS clients, ITERATIONS
# requests), stops the services (the SDK flushes its spans on SIGTERM), and
# writes <case>/traces.json: the traces whose root started in the measured
# run, the first MAX_TRACES of them, converted by `tracelab convert --redact`.
#
# Needs: Node >= 20 with npm, Go (builds tracelab), jq, curl; for the shop
# cases also PostgreSQL's server binaries (initdb, postgres) in PG_BIN_DIR
# (default: the lab's tool cache, ~/.cache/tracelab/postgres/16.4.0/linux-amd64/bin, which
# `infra/local/tools.sh` fills). As root, PostgreSQL runs as the postgres
# account (or nobody) from a copy of the binaries in a temporary dir. The
# accounts cases need `sleep` (coreutils) and no PostgreSQL.
#
# Environment:
#   NODE_CORPUS_WORK   scratch dir for node_modules, tracelab and raw logs
#                      (default: $TRACELAB_CACHE or ~/.cache/tracelab, then
#                      corpus-node-express); never inside the repository
#   PG_PORT, SHOP_PORT, PRICING_PORT, COLLECTOR_PORT, ACCOUNTS_PORT
#                      default 18620-18624
#   CASES              which cases to record (default: all nine)
#   VUS, WARMUP_ITERATIONS, ITERATIONS, MAX_TRACES   the load; each case has
#                      its own defaults (the table at the end: shop's 4, 40,
#                      40, 20; accounts' 20, 100, 400, 300); set, they apply
#                      to every case recorded
#   HASH_ITERATIONS    accounts' PBKDF2 iterations (default 40000, ~10 ms)
#
# What every recording script does alike (the scratch dir, process tracking,
# PostgreSQL, the load, the window, the summary) is in lib.sh.
set -euo pipefail
# shellcheck source=SCRIPTDIR/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# The load, per case in the table at the end: VUS closed-loop clients,
# WARMUP_ITERATIONS requests not recorded, then ITERATIONS measured; the first
# MAX_TRACES of those go into the case. shop's N+1 order traces hold ~65 spans
# each (~1 KB a span in OTLP JSON), hence 20 of 40 at 4 clients; accounts'
# traces hold 2 spans, so 300 of 400 at 20 clients stay well under 2 MB. Set
# in the environment, a value applies to every case recorded.
env_vus=${VUS:-}
env_warmup=${WARMUP_ITERATIONS:-}
env_iterations=${ITERATIONS:-}
env_max_traces=${MAX_TRACES:-}

pg_port=${PG_PORT:-18620}
shop_port=${SHOP_PORT:-18621}
pricing_port=${PRICING_PORT:-18622}
collector_port=${COLLECTOR_PORT:-18623}
accounts_port=${ACCOUNTS_PORT:-18624}
# accounts' PBKDF2-HMAC-SHA256 iterations: ~10 ms a hash on the recording machine.
hash_iterations=${HASH_ITERATIONS:-40000}

# The cases: CASE SERVICE ENDPOINT VUS WARMUP_ITERATIONS ITERATIONS MAX_TRACES.
cases='
  node-express-orm-nplus1    shop      orders/nplus1  4  40   40   20
  node-express-orm-joined    shop      orders/joined  4  40   40   20
  node-express-http-nplus1   shop      cart/nplus1    4  40   40   20
  node-express-http-batched  shop      cart/batched   4  40   40   20
  node-express-cpu-sync      accounts  hash/sync      20 100  400  300
  node-express-cpu-async     accounts  hash/async     20 100  400  300
  node-express-json          accounts  json           20 100  400  300
  node-express-exec-sync     accounts  exec/sync      20 100  400  300
  node-express-exec-async    accounts  exec/async     20 100  400  300'

use_work NODE_CORPUS_WORK corpus-node-express raw
need node npm curl jq go
# PostgreSQL only if a shop case is to be recorded: accounts has no database.
need_pg=
for c in ${CASES:-$(awk 'NF {print $1}' <<<"$cases")}; do
  [ "$(awk -v c="$c" '$1 == c {print $2}' <<<"$cases")" != shop ] || need_pg=1
done
[ -z "$need_pg" ] || pg_need

# --- tracelab and the application --------------------------------------------
niced=(nice -n 19) # the build only: the load runs at the default priority
build_tracelab
niced=()
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
# Started once, before the first shop case, and left running until the end.
pg_up() {
  [ -z "$pg_pid" ] || return 0
  pgtmp=$(mktemp -d "${TMPDIR:-/tmp}/tracelab-corpus-node-pg.XXXXXX")
  say "PostgreSQL $("$pg_bin/postgres" --version | awk '{print $3}') on 127.0.0.1:$pg_port (data in $pgtmp)"
  pg_start corpus shop -c max_connections=50 -c synchronous_commit=off
  export DATABASE_URL="postgres://corpus@127.0.0.1:$pg_port/shop"
  pg_wait "seed the database" "$work/logs/seed.log" env -C "$app" node seed.js
  say "$(cat "$work/logs/seed.log")"
}

# --- one case ------------------------------------------------------------------
# start NAME NODE_ARGS [ENV=VALUE...]: a node process in the app dir, under
# nice 10, logging to logs/CASE-NAME.log.
start() {
  local name=$1 node_args=$2
  shift 2
  # shellcheck disable=SC2086 # NODE_ARGS is node's arguments, split on purpose
  spawn "$name" env -C "$app" "$@" nice -n 10 node $node_args
}

# load_case OUT ITERATIONS: the case's VUS clients on its endpoint.
load_case() { load "$1" ENDPOINT="$endpoint" VUS="$vus" ITERATIONS="$2"; }

record() { # SERVICE ENDPOINT VUS WARMUP_ITERATIONS ITERATIONS MAX_TRACES
  local service=$1 endpoint=$2 vus=${env_vus:-$3} warmup=${env_warmup:-$4} iterations=${env_iterations:-$5}
  local max_traces=${env_max_traces:-$6} collector_pid service_pids=() port
  raw=$work/raw/$case
  rm -f "$raw"-*
  [ "$service" != shop ] || pg_up
  say "$case: starting the OTLP receiver and $([ "$service" = shop ] && echo "pricing and shop" || echo "$service")"
  start collector collector.js PORT="$collector_port" OUT="$raw-otlp.jsonl"
  collector_pid=$!
  wait_ready "$collector_port" /health collector "$collector_pid" 30
  local otel=(OTLP_TRACES_URL="http://127.0.0.1:$collector_port/v1/traces" OTEL_METRICS_EXPORTER=none OTEL_LOGS_EXPORTER=none PG_ENHANCED=1)
  case $service in
    shop)
      port=$shop_port
      start pricing "--require ./tracing.js pricing.js" "${otel[@]}" OTEL_SERVICE_NAME=pricing PORT="$pricing_port"
      service_pids+=($!)
      start shop "--require ./tracing.js shop.js" "${otel[@]}" OTEL_SERVICE_NAME=shop PORT="$shop_port" \
        PRICING_URL="http://127.0.0.1:$pricing_port" DATABASE_URL="$DATABASE_URL"
      service_pids+=($!)
      wait_ready "$pricing_port" /health pricing "${service_pids[0]}" 30
      wait_ready "$shop_port" /health shop "${service_pids[1]}" 30 ;;
    accounts)
      port=$accounts_port
      start accounts "--require ./tracing.js accounts.js" "${otel[@]}" OTEL_SERVICE_NAME=accounts PORT="$accounts_port" \
        HASH_ITERATIONS="$hash_iterations"
      service_pids+=($!)
      wait_ready "$accounts_port" /health accounts "${service_pids[0]}" 30 ;;
    *) die "unknown service $service" ;;
  esac
  target=http://127.0.0.1:$port
  curl -sf "$target/$endpoint" >"$raw-sample.json" || die "GET /$endpoint failed; log: $work/logs/$case-$service.log"
  say "$case: GET /$endpoint answers $(cat "$raw-sample.json")"
  measure "$warmup" "$warmup requests by $vus clients" \
    "$iterations" "$iterations requests by $vus clients on /$endpoint"
  say "$case: stopping the services (the SDK exports its last spans on SIGTERM)"
  # Newest first (shop, then pricing): stop signals them all, then waits.
  local k rev=()
  for ((k = ${#service_pids[@]} - 1; k >= 0; k--)); do rev+=("${service_pids[k]}"); done
  stop "${rev[@]}"
  stop "$collector_pid"

  keep_sdk_json "$max_traces"
  say_warmup
  summarise 2200 "2 MB; lower MAX_TRACES" "$raw-window.json"
}

record_all 'case\trequests\treq/s\tp50_ms\tp95_ms\tfailed\twindow_traces\tkept\tspans\tbytes' "$cases"

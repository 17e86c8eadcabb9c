#!/usr/bin/env bash
# Records the corpus cases go-nethttp-db-nplus1, go-nethttp-db-joined,
# go-nethttp-http-nplus1 and go-nethttp-http-batched (see
# go-nethttp/README.md).
#
# It builds the Go application in go-nethttp/ (its own module: net/http with
# otelhttp on the server and the client, database/sql with otelsql over
# pgx's stdlib driver, otlptracehttp; versions pinned in its go.mod and
# go.sum, from the Go module proxy), starts a throwaway PostgreSQL 16 and
# fills it, and for each case runs three processes of that binary: the
# collector (an OTLP/HTTP receiver that writes every export request as a
# JSON line), stock and inventory. It warms inventory up, loads one
# endpoint with tracelab's load engine (closed loop, VUS clients), stops
# inventory and stock (each flushes its spans on SIGTERM), then the
# collector, and writes <case>/traces.json: the traces whose root started
# inside the measured run, the MAX_TRACES earliest of them, as plain OTLP JSON
# (`tracelab convert --redact`).
#
# Needs: Go >= 1.26 (the application's go.mod), jq, curl, and PostgreSQL 16
# server binaries (initdb, postgres): PG_BIN_DIR, by default the ones the
# lab's infra/local/tools.sh caches (io.zonky.test.postgres binaries 16.4.0
# from Maven Central). As root, PostgreSQL runs as the postgres account (or
# nobody) from a copy in a temporary directory, since it refuses root.
#
# Environment:
#   GO_NETHTTP_CORPUS_WORK  scratch dir for the build and raw logs (default:
#                        $TRACELAB_CACHE or ~/.cache/tracelab, then
#                        corpus-go-nethttp); never inside the repository
#   COLLECTOR_PORT, PG_PORT, INVENTORY_PORT, STOCK_PORT
#                        default 18640, 18641, 18642, 18643
#   CASES                which cases to record (default: all four)
#   VUS, WARMUP, DURATION  the load (defaults below)
#   MAX_TRACES_NPLUS1, MAX_TRACES_CLEAN  traces kept per case (defaults below)
#
# What every recording script does alike (the scratch dir, process tracking,
# PostgreSQL, the load, the window, the summary) is in lib.sh.
set -euo pipefail
# shellcheck source=SCRIPTDIR/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# The load: VUS closed-loop clients back to back, a warm-up of WARMUP (not
# recorded), then the measured run of DURATION. Every process runs under
# nice 19. An N+1 trace is 40-65 spans, ~0.7 KB each in OTLP JSON: the N+1
# cases keep their 40 earliest traces (~1.5 MB), the clean ones 200.
VUS=${VUS:-4}
WARMUP=${WARMUP:-3s}
DURATION=${DURATION:-3s}
MAX_TRACES_NPLUS1=${MAX_TRACES_NPLUS1:-40}
MAX_TRACES_CLEAN=${MAX_TRACES_CLEAN:-200}

collector_port=${COLLECTOR_PORT:-18640}
pg_port=${PG_PORT:-18641}
inventory_port=${INVENTORY_PORT:-18642}
stock_port=${STOCK_PORT:-18643}
target=http://127.0.0.1:$inventory_port
niced=(nice -n 19)
ms_digits=1

use_work GO_NETHTTP_CORPUS_WORK corpus-go-nethttp
need curl jq go
pg_need

build_tracelab
say "building the application ($src, its own module)"
(cd "$src" && GOWORK=off GOFLAGS=-mod=readonly run "$work/logs/app-build.log" nice -n 19 go build -o "$work/bin/go-nethttp" .)
app=$work/bin/go-nethttp

# --- PostgreSQL: the database inventory, seeded by the app's seed role ----
pgtmp=$(mktemp -d "${TMPDIR:-/tmp}/go-nethttp-pg.XXXXXX")
say "PostgreSQL $("$pg_bin/postgres" --version | awk '{print $3}') on 127.0.0.1:$pg_port (cluster in $pgtmp)"
pg_start inventory inventory
dsn="postgres://inventory@127.0.0.1:$pg_port/inventory?sslmode=disable"
pg_wait "seed the database" "$work/logs/seed.log" "$app" -role seed -db "$dsn"

# --- one case ----------------------------------------------------------------
# load_case OUT DURATION: VUS clients on the case's endpoint.
load_case() { load "$1" ENDPOINT="$endpoint" VUS="$VUS" DURATION="$2"; }

record() { # ENDPOINT MAX_TRACES
  local endpoint=$1 max=$2 cpid spid ipid
  rm -f "$raw-spans.jsonl"
  say "$case: starting the collector, stock and inventory"
  spawn collector nice -n 19 "$app" -role collector -addr "127.0.0.1:$collector_port" -out "$raw-spans.jsonl"
  cpid=$!
  wait_ready "$collector_port" /health collector "$cpid" 20
  spawn stock nice -n 19 "$app" -role stock -addr "127.0.0.1:$stock_port" -otlp "127.0.0.1:$collector_port"
  spid=$!
  spawn inventory nice -n 19 "$app" -role inventory -addr "127.0.0.1:$inventory_port" -otlp "127.0.0.1:$collector_port" \
    -db "$dsn" -stock "http://127.0.0.1:$stock_port"
  ipid=$!
  wait_ready "$stock_port" /health stock "$spid" 20
  wait_ready "$inventory_port" /health inventory "$ipid" 20
  probe "$inventory_port" "$endpoint" inventory
  measure "$WARMUP" "$WARMUP of $VUS clients on /$endpoint" "$DURATION" "$DURATION of $VUS clients on /$endpoint"
  say "$case: stopping inventory and stock (they flush their spans), then the collector"
  stop "$ipid" "$spid"
  stop "$cpid"
  [ -s "$raw-spans.jsonl" ] || die "the collector wrote no spans ($raw-spans.jsonl)"
  keep_window "$raw-spans.jsonl" "$max"
  summarise 2200 "2.2 MB; lower MAX_TRACES_*" "$raw-window.json"
}

record_all 'case\trequests\treq/s\tp50_ms\tp95_ms\tfailed\ttraces_in_window\ttraces_kept\tspans_kept\tbytes' "
  go-nethttp-db-nplus1     products/nplus1  $MAX_TRACES_NPLUS1
  go-nethttp-db-joined     products/joined  $MAX_TRACES_CLEAN
  go-nethttp-http-nplus1   levels/nplus1    $MAX_TRACES_NPLUS1
  go-nethttp-http-batched  levels/batched   $MAX_TRACES_CLEAN"

#!/usr/bin/env bash
# Records the corpus cases go-grpc-nplus1, go-grpc-batched and
# go-grpc-parallel (see go-grpc/README.md).
#
# It builds the Go application in go-grpc/ (its own module: a gRPC server
# and client from google.golang.org/grpc with otelgrpc's stats handlers, a
# net/http frontend with otelhttp, otlptracehttp; versions pinned in its
# go.mod and go.sum, from the Go module proxy; no protoc: the service is
# described by hand, its messages are protobuf's well-known types), and for
# each case runs three processes of that binary: the collector (an OTLP/HTTP
# receiver that writes every export request as a JSON line), inventory (the
# gRPC server: GetItem, GetItems) and frontend (GET /cart/nplus1,
# /cart/batched, /cart/parallel, calling inventory). It warms frontend up,
# loads one endpoint with tracelab's load engine (closed model: VUS clients
# back to back, ITERATIONS requests), stops frontend and inventory (each
# flushes its spans on SIGTERM), then the collector, and writes
# <case>/traces.json: the traces whose root started inside the measured run,
# the MAX_TRACES earliest of them, as plain OTLP JSON (`tracelab convert
# --redact`).
#
# Needs: Go >= 1.26 (the application's go.mod), jq, curl. No database.
#
# Environment:
#   GO_GRPC_CORPUS_WORK  scratch dir for the build and raw logs (default:
#                        $TRACELAB_CACHE or ~/.cache/tracelab, then
#                        corpus-go-grpc); never inside the repository
#   COLLECTOR_PORT, INVENTORY_PORT, INVENTORY_HEALTH_PORT, FRONTEND_PORT
#                        default 18740, 18741 (gRPC), 18742 (inventory's
#                        plain HTTP /health), 18743
#   CASES                which cases to record (default: all three)
#   VUS, WARMUP_ITERATIONS, ITERATIONS, MAX_TRACES   the load (defaults below)
#
# What every recording script does alike (the scratch dir, process tracking,
# the load, the window, the summary) is in lib.sh.
set -euo pipefail
# shellcheck source=SCRIPTDIR/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# The load: VUS closed-loop clients, WARMUP_ITERATIONS requests not recorded,
# then ITERATIONS measured; the first MAX_TRACES of those go into the case.
# Every process runs under nice 19. An N+1 or parallel trace is 41 spans.
VUS=${VUS:-4}
WARMUP_ITERATIONS=${WARMUP_ITERATIONS:-40}
ITERATIONS=${ITERATIONS:-40}
MAX_TRACES=${MAX_TRACES:-20}

collector_port=${COLLECTOR_PORT:-18740}
inventory_port=${INVENTORY_PORT:-18741}
health_port=${INVENTORY_HEALTH_PORT:-18742}
frontend_port=${FRONTEND_PORT:-18743}
target=http://127.0.0.1:$frontend_port
niced=(nice -n 19)
ms_digits=1

use_work GO_GRPC_CORPUS_WORK corpus-go-grpc
need curl jq go

build_tracelab
say "building the application ($src, its own module)"
(cd "$src" && GOWORK=off GOFLAGS=-mod=readonly run "$work/logs/app-build.log" nice -n 19 go build -o "$work/bin/go-grpc" .)
app=$work/bin/go-grpc

# --- one case ----------------------------------------------------------------
# load_case OUT ITERATIONS: VUS clients on the case's endpoint.
load_case() { load "$1" ENDPOINT="$endpoint" VUS="$VUS" ITERATIONS="$2"; }

record() { # ENDPOINT
  local endpoint=$1 cpid ipid fpid
  rm -f "$raw"-*
  say "$case: starting the collector, inventory and frontend"
  spawn collector nice -n 19 "$app" -role collector -addr "127.0.0.1:$collector_port" -out "$raw-spans.jsonl"
  cpid=$!
  wait_ready "$collector_port" /health collector "$cpid" 20
  spawn inventory nice -n 19 "$app" -role inventory -addr "127.0.0.1:$inventory_port" \
    -health "127.0.0.1:$health_port" -otlp "127.0.0.1:$collector_port"
  ipid=$!
  spawn frontend nice -n 19 "$app" -role frontend -addr "127.0.0.1:$frontend_port" \
    -inventory "127.0.0.1:$inventory_port" -otlp "127.0.0.1:$collector_port"
  fpid=$!
  wait_ready "$health_port" /health inventory "$ipid" 20
  wait_ready "$frontend_port" /health frontend "$fpid" 20
  probe "$frontend_port" "$endpoint" frontend
  measure "$WARMUP_ITERATIONS" "$WARMUP_ITERATIONS requests by $VUS clients on /$endpoint" \
    "$ITERATIONS" "$ITERATIONS requests by $VUS clients on /$endpoint"
  say "$case: stopping frontend and inventory (they flush their spans), then the collector"
  stop "$fpid" "$ipid"
  stop "$cpid"
  [ -s "$raw-spans.jsonl" ] || die "the collector wrote no spans ($raw-spans.jsonl)"
  keep_window "$raw-spans.jsonl" "$MAX_TRACES"
  say_warmup
  summarise 2200 "2.2 MB; lower MAX_TRACES" "$raw-window.json"
}

record_all 'case\trequests\treq/s\tp50_ms\tp95_ms\tfailed\ttraces_in_window\ttraces_kept\tspans_kept\tbytes' "
  go-grpc-nplus1    cart/nplus1
  go-grpc-batched   cart/batched
  go-grpc-parallel  cart/parallel"

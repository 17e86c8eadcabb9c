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
set -euo pipefail

POSTGRESQL_VERSION=16.4.0

# The load: VUS closed-loop clients back to back, a warm-up of WARMUP (not
# recorded), then the measured run of DURATION. Every process runs under
# nice 19. An N+1 trace is 40-65 spans, ~0.7 KB each in OTLP JSON: the N+1
# cases keep their 40 earliest traces (~1.5 MB), the clean ones 200.
VUS=${VUS:-4}
WARMUP=${WARMUP:-3s}
DURATION=${DURATION:-3s}
MAX_TRACES_NPLUS1=${MAX_TRACES_NPLUS1:-40}
MAX_TRACES_CLEAN=${MAX_TRACES_CLEAN:-200}

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
src=$here/go-nethttp
corpus=$(dirname "$here")
tracelab_src=$(cd "$corpus/../.." && pwd)
cache=${TRACELAB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/tracelab}
work=${GO_NETHTTP_CORPUS_WORK:-$cache/corpus-go-nethttp}
pg_bin=${PG_BIN_DIR:-$cache/postgres/$POSTGRESQL_VERSION/linux-amd64/bin}
collector_port=${COLLECTOR_PORT:-18640}
pg_port=${PG_PORT:-18641}
inventory_port=${INVENTORY_PORT:-18642}
stock_port=${STOCK_PORT:-18643}
cases=${CASES:-go-nethttp-db-nplus1 go-nethttp-db-joined go-nethttp-http-nplus1 go-nethttp-http-batched}

say() { printf '==> %s\n' "$*" >&2; }
die() { printf 'go-nethttp.sh: %s\n' "$*" >&2; exit 1; }

work=$(realpath -m "$work")
case $work in "$tracelab_src"/*|"$(dirname "$tracelab_src")"/*) die "GO_NETHTTP_CORPUS_WORK=$work is inside the repository; pick a scratch dir outside it" ;; esac
mkdir -p "$work/bin" "$work/logs"

# Every process this script starts is in pids (PostgreSQL first); the trap
# stops them all, newest first, and removes the PostgreSQL cluster.
pids=()
pgtmp=
stop_pids() { # PID...: SIGTERM, then wait for each
  local p
  for p in "$@"; do kill "$p" 2>/dev/null || true; done
  for p in "$@"; do wait "$p" 2>/dev/null || true; done
}
cleanup() {
  local rev=() i
  for ((i = ${#pids[@]} - 1; i >= 0; i--)); do rev+=("${pids[i]}"); done
  [ ${#rev[@]} = 0 ] || stop_pids "${rev[@]}"
  pids=()
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

for c in curl jq go; do command -v "$c" >/dev/null || die "$c is required"; done
[ -x "$pg_bin/postgres" ] && [ -x "$pg_bin/initdb" ] ||
  die "no PostgreSQL binaries in $pg_bin (set PG_BIN_DIR, or run infra/local/tools.sh, which caches $POSTGRESQL_VERSION)"

say "building tracelab from $tracelab_src"
(cd "$tracelab_src" && run "$work/logs/tracelab-build.log" nice -n 19 go build -o "$work/bin/tracelab" .)
tracelab=$work/bin/tracelab
say "building the application ($src, its own module)"
(cd "$src" && GOWORK=off GOFLAGS=-mod=readonly run "$work/logs/app-build.log" nice -n 19 go build -o "$work/bin/go-nethttp" .)
app=$work/bin/go-nethttp

# --- PostgreSQL --------------------------------------------------------------
# A fresh cluster in a temporary directory for every run (the data is the
# seed only). PostgreSQL refuses to run as root: as root, the binaries are
# copied beside the cluster and both belong to an unprivileged account.
pgtmp=$(mktemp -d "${TMPDIR:-/tmp}/go-nethttp-pg.XXXXXX")
as_pg=()
if [ "$(id -u)" = 0 ]; then
  account=postgres; id "$account" >/dev/null 2>&1 || account=nobody
  as_pg=(setpriv --reuid="$account" --regid="$(id -g "$account")" --init-groups)
  cp -a "$(dirname "$pg_bin")" "$pgtmp/dist"
  pg_bin=$pgtmp/dist/bin
  chmod 755 "$pgtmp"; chown -R "$account:" "$pgtmp"
fi
say "PostgreSQL $("$pg_bin/postgres" --version | awk '{print $3}') on 127.0.0.1:$pg_port (cluster in $pgtmp)"
run "$work/logs/initdb.log" "${as_pg[@]}" "$pg_bin/initdb" -D "$pgtmp/data" -U inventory --auth=trust -E UTF8 --locale=C
echo 'CREATE DATABASE inventory' | "${as_pg[@]}" "$pg_bin/postgres" --single -D "$pgtmp/data" postgres >"$work/logs/createdb.log" 2>&1 ||
  die "could not create the database; log: $work/logs/createdb.log"
"${as_pg[@]}" "$pg_bin/postgres" -D "$pgtmp/data" -p "$pg_port" -h 127.0.0.1 -k "$pgtmp" >"$work/logs/postgres.log" 2>&1 &
pids+=($!)
dsn="postgres://inventory@127.0.0.1:$pg_port/inventory?sslmode=disable"
for i in $(seq 60); do
  "$app" -role seed -db "$dsn" >"$work/logs/seed.log" 2>&1 && break
  kill -0 "${pids[0]}" 2>/dev/null || die "PostgreSQL exited while starting; log: $work/logs/postgres.log"
  [ "$i" -lt 60 ] || die "could not seed the database within 30 s; logs: $work/logs/seed.log, $work/logs/postgres.log"
  sleep 0.5
done

# --- one case ----------------------------------------------------------------
wait_ready() { # PORT NAME PID
  local i
  for i in $(seq 100); do
    curl -sf -o /dev/null "http://127.0.0.1:$1/health" && return 0
    kill -0 "$3" 2>/dev/null || die "$2 exited while starting; log: $work/logs/$case-$2.log"
    sleep 0.2
  done
  die "$2 did not answer on port $1 within 20 s; log: $work/logs/$case-$2.log"
}

load() { # ENDPOINT DURATION OUT
  nice -n 19 "$tracelab" load run "$src/load.yaml" --target "http://127.0.0.1:$inventory_port" \
    --param ENDPOINT="$1" --param VUS="$VUS" --param DURATION="$2" --out "$3" >>"$work/logs/$case-load.log" 2>&1 ||
    die "the load failed; log: $work/logs/$case-load.log"
}

# The traces whose root (inventory's server span) started inside the
# measured run, every span of them; warm-up and readiness probes drop out.
# A root's parent is the load's traceparent, which no span in the file has.
window='
  ([.resourceSpans[].scopeSpans[].spans[].spanId | {key: ., value: true}] | from_entries) as $ids
  | ([.resourceSpans[].scopeSpans[].spans[]
    | select(($ids[.parentSpanId // ""] | not)
             and (.startTimeUnixNano | tonumber) >= $t0
             and (.startTimeUnixNano | tonumber) <= $t1)
    | {key: .traceId, value: true}] | from_entries) as $keep
  | .resourceSpans |= map(.scopeSpans |= map(.spans |= map(select($keep[.traceId])) | select(.spans | length > 0)))
  | .resourceSpans |= map(select(.scopeSpans | length > 0))'

record() { # CASE ENDPOINT MAX_TRACES
  case=$1; local endpoint=$2 max=$3 out=$corpus/$1 raw=$work/$1
  : >"$work/logs/$case-load.log"
  rm -f "$raw-spans.jsonl"
  say "$case: starting the collector, stock and inventory"
  nice -n 19 "$app" -role collector -addr "127.0.0.1:$collector_port" -out "$raw-spans.jsonl" >"$work/logs/$case-collector.log" 2>&1 &
  local cpid=$!; pids+=("$cpid")
  wait_ready "$collector_port" collector "$cpid"
  nice -n 19 "$app" -role stock -addr "127.0.0.1:$stock_port" -otlp "127.0.0.1:$collector_port" >"$work/logs/$case-stock.log" 2>&1 &
  local spid=$!; pids+=("$spid")
  nice -n 19 "$app" -role inventory -addr "127.0.0.1:$inventory_port" -otlp "127.0.0.1:$collector_port" \
    -db "$dsn" -stock "http://127.0.0.1:$stock_port" >"$work/logs/$case-inventory.log" 2>&1 &
  local ipid=$!; pids+=("$ipid")
  wait_ready "$stock_port" stock "$spid"
  wait_ready "$inventory_port" inventory "$ipid"
  curl -sf -o /dev/null "http://127.0.0.1:$inventory_port/$endpoint" || die "GET /$endpoint failed; log: $work/logs/$case-inventory.log"
  say "$case: warm-up, $WARMUP of $VUS clients on /$endpoint (not recorded)"
  load "$endpoint" "$WARMUP" "$raw-warmup.json"
  sleep 1
  say "$case: measured run, $DURATION of $VUS clients on /$endpoint"
  local t0 t1; t0=$(date +%s%N)
  load "$endpoint" "$DURATION" "$raw-load.json"
  t1=$(date +%s%N)
  sleep 1
  say "$case: stopping inventory and stock (they flush their spans), then the collector"
  stop_pids "$ipid" "$spid"
  stop_pids "$cpid"
  local keep=() p
  for p in "${pids[@]}"; do case " $ipid $spid $cpid " in *" $p "*) ;; *) keep+=("$p") ;; esac; done
  pids=("${keep[@]}")

  [ -s "$raw-spans.jsonl" ] || die "the collector wrote no spans ($raw-spans.jsonl)"
  # Run from $work so --redact also drops every value that names it.
  (cd "$work" && "$tracelab" convert --file "$raw-spans.jsonl" --to otlp --redact --out "$raw-all.json") ||
    die "tracelab convert failed on $raw-spans.jsonl"
  jq -c --argjson t0 "$t0" --argjson t1 "$t1" "$window" "$raw-all.json" >"$raw-window.json"
  mkdir -p "$out"
  (cd "$work" && "$tracelab" convert --file "$raw-window.json" --to otlp --redact --max-traces "$max" --out "$out/traces.json") ||
    die "tracelab convert --max-traces failed on $raw-window.json"
  if grep -qE "$work|$pgtmp|/root|/home/" "$out/traces.json"; then die "$out/traces.json still names a local path"; fi

  local reqs rate p50 p95 failed wtraces traces spans size
  numbers() { jq -r '.summary | [.requests, (.throughput_rps*10|round/10), (.p50_ms*10|round/10), (.p95_ms*10|round/10), .error_rate] | @tsv' "$1"; }
  read -r reqs rate p50 p95 failed < <(numbers "$raw-load.json")
  wtraces=$(jq '[.resourceSpans[].scopeSpans[].spans[].traceId] | unique | length' "$raw-window.json")
  traces=$(jq '[.resourceSpans[].scopeSpans[].spans[].traceId] | unique | length' "$out/traces.json")
  spans=$(jq '[.resourceSpans[].scopeSpans[].spans[]] | length' "$out/traces.json")
  size=$(stat -c %s "$out/traces.json")
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$case" "$reqs" "$rate" "$p50" "$p95" "$failed" "$wtraces" "$traces" "$spans" "$size" >>"$work/summary.tsv"
  say "$case: measured: $reqs requests, $rate req/s, p50 ${p50} ms, p95 ${p95} ms, failed $failed; $wtraces traces in the window, $traces kept, $spans spans, $((size / 1024)) KiB"
  [ "$wtraces" = "$reqs" ] || say "$case: WARNING: $reqs requests but $wtraces traces in the window"
  [ "$size" -le $((2200 * 1024)) ] || say "$case: WARNING: traces.json is over 2.2 MB; lower MAX_TRACES_*"
}

printf 'case\trequests\treq/s\tp50_ms\tp95_ms\tfailed\ttraces_in_window\ttraces_kept\tspans_kept\tbytes\n' >"$work/summary.tsv"
for c in $cases; do
  case $c in
    go-nethttp-db-nplus1) record "$c" products/nplus1 "$MAX_TRACES_NPLUS1" ;;
    go-nethttp-db-joined) record "$c" products/joined "$MAX_TRACES_CLEAN" ;;
    go-nethttp-http-nplus1) record "$c" levels/nplus1 "$MAX_TRACES_NPLUS1" ;;
    go-nethttp-http-batched) record "$c" levels/batched "$MAX_TRACES_CLEAN" ;;
    *) die "unknown case $c (CASES)" ;;
  esac
done
say "done; summary:"
column -t -s $'\t' "$work/summary.tsv" >&2
say "traces written under $corpus; raw logs under $work/logs"

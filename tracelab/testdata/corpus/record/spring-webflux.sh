#!/usr/bin/env bash
# Records the corpus cases spring-webflux-blocking-8vus,
# spring-webflux-reactive-8vus, spring-webflux-blocking-32vus and
# spring-webflux-reactive-32vus (see spring-webflux/README.md).
#
# It builds the Spring Boot 4.0.7 WebFlux application in spring-webflux/
# (pom.xml, one class, application.properties) from Maven Central and runs
# the jar twice with the OpenTelemetry Java agent on Reactor Netty's default
# event loops, 2 of them (-Dreactor.netty.ioWorkerCount=2): webflux-backend
# serves GET /slow (60 ms, Mono.delay), webflux-frontend serves GET /blocking
# (a RestTemplate call to /slow inside a synchronous handler, so on the event
# loop) and GET /reactive (the same call with WebClient). For each case it
# starts both fresh, warms them up, loads them with tracelab's load engine
# (closed model), stops them (the agent flushes its spans on exit), and
# writes <case>/traces.json: the traces of the measured run only, converted
# to plain OTLP JSON by `tracelab convert --redact`. Then it prints what the
# traces show per event loop (spring-webflux/loops.py).
#
# Needs: a JDK >= 21 (25 was used), Maven >= 3.6.3, Go (builds tracelab),
# jq, curl, python3 (the per-loop numbers only). Everything else comes from
# Maven Central and the Go module proxy at the versions pinned below and in
# spring-webflux/pom.xml.
#
# Environment:
#   WEBFLUX_CORPUS_WORK  scratch dir for the app, tools and raw logs
#                        (default: $TRACELAB_CACHE or ~/.cache/tracelab, then
#                        corpus-spring-webflux); never inside the repository
#   FRONTEND_PORT, BACKEND_PORT   default 18660, 18661
#   CASES                which cases to record (default: all four)
#   WARMUP, BLOCKING_DURATION, REACTIVE_8_DURATION, REACTIVE_32_DURATION
#                        the load (defaults below)
#   MAX_TRACES           keep at most this many traces of a run (default 600)
set -euo pipefail

# Spring Boot itself is pinned in spring-webflux/pom.xml (parent 4.0.7).
DEPENDENCY_PLUGIN_VERSION=3.8.1
OTEL_JAVAAGENT_VERSION=2.33.1

# The load: closed-loop clients (8 or 32, per case), each measured run after
# a warm-up of WARMUP with the same load. The agent's spans come out at
# ~1 KB each in OTLP JSON, 3 per request, and a case's traces.json should
# stay under ~2 MB: /blocking serves ~30 req/s whatever the clients (2
# loops, each held ~62 ms per call), /reactive as much as the CPU allows
# (50-60 req/s on the shared 2-core machine of the committed recording,
# several times that on an idle one), hence its shorter runs, and a cap of
# MAX_TRACES: only the earliest MAX_TRACES traces of the run (by root start)
# are kept, a contiguous stretch of every loop's timeline.
WARMUP=${WARMUP:-10s}
BLOCKING_DURATION=${BLOCKING_DURATION:-12s}
REACTIVE_8_DURATION=${REACTIVE_8_DURATION:-10s}
REACTIVE_32_DURATION=${REACTIVE_32_DURATION:-5s}
MAX_TRACES=${MAX_TRACES:-600}

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
src=$here/spring-webflux
corpus=$(dirname "$here")
tracelab_src=$(cd "$corpus/../.." && pwd)
cache=${TRACELAB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/tracelab}
work=${WEBFLUX_CORPUS_WORK:-$cache/corpus-spring-webflux}
frontend_port=${FRONTEND_PORT:-18660}
backend_port=${BACKEND_PORT:-18661}
cases=${CASES:-spring-webflux-blocking-8vus spring-webflux-reactive-8vus spring-webflux-blocking-32vus spring-webflux-reactive-32vus}

say() { printf '==> %s\n' "$*" >&2; }
die() { printf 'spring-webflux.sh: %s\n' "$*" >&2; exit 1; }

work=$(realpath -m "$work")
case $work in "$tracelab_src"/*|"$(dirname "$tracelab_src")"/*) die "WEBFLUX_CORPUS_WORK=$work is inside the repository; pick a scratch dir outside it" ;; esac
mkdir -p "$work/dl" "$work/bin" "$work/logs"

# Every process this script starts is in pids; the trap stops them all.
pids=()
stop_all() {
  local p
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  pids=()
}
trap stop_all EXIT
trap 'exit 130' INT TERM

# run LOG CMD...: a build step, its output in LOG, the tail shown on failure.
run() {
  local log=$1; shift
  if ! "$@" >"$log" 2>&1; then
    tail -n 20 "$log" >&2
    die "failed: $*; full log: $log"
  fi
}

for c in curl jq go mvn python3; do
  command -v "$c" >/dev/null || die "$c is required (Debian: apt-get install -y curl jq maven python3; Go from https://go.dev/dl/)"
done

# --- a JDK >= 21 -------------------------------------------------------------
java_major() { "$1" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.specification.version = //p'; }
java=
for j in ${JAVA_HOME:+"$JAVA_HOME/bin/java"} /usr/lib/jvm/*/bin/java; do
  [ -x "$j" ] || continue
  m=$(java_major "$j"); [ "${m:-0}" -ge 21 ] 2>/dev/null || continue
  java=$j; break
done
[ -n "$java" ] || die "no JDK >= 21 found (JAVA_HOME or /usr/lib/jvm); install one, e.g. Temurin 21"
export JAVA_HOME; JAVA_HOME=$(dirname "$(dirname "$java")")
say "JDK: $JAVA_HOME ($(java_major "$java"))"

# --- tools: the Java agent, tracelab -----------------------------------------
agent=$cache/otel-javaagent/$OTEL_JAVAAGENT_VERSION/opentelemetry-javaagent.jar
if [ ! -f "$agent" ]; then
  agent=$work/dl/opentelemetry-javaagent-$OTEL_JAVAAGENT_VERSION.jar
  if [ ! -f "$agent" ]; then
    say "fetching the OpenTelemetry Java agent $OTEL_JAVAAGENT_VERSION from Maven Central"
    run "$work/logs/fetch.log" mvn -B -ntp -q \
      "org.apache.maven.plugins:maven-dependency-plugin:$DEPENDENCY_PLUGIN_VERSION:copy" \
      -Dartifact="io.opentelemetry.javaagent:opentelemetry-javaagent:$OTEL_JAVAAGENT_VERSION" -DoutputDirectory="$work/dl"
  fi
fi
say "Java agent: $agent"

say "building tracelab from $tracelab_src"
(cd "$tracelab_src" && run "$work/logs/tracelab-build.log" go build -o "$work/bin/tracelab" .)
tracelab=$work/bin/tracelab

# --- the application ---------------------------------------------------------
app=$work/app
jar=$app/target/spring-webflux.jar
say "building the Spring Boot WebFlux application (mvn package; a minute or two)"
rm -rf "$app"; mkdir -p "$app/src/main/java/dev/tracelab/corpus" "$app/src/main/resources"
cp "$src/pom.xml" "$app/"
cp "$src"/*.java "$app/src/main/java/dev/tracelab/corpus/"
cp "$src/application.properties" "$app/src/main/resources/"
(cd "$app" && run "$work/logs/build.log" mvn -B -ntp -DskipTests package)
[ -f "$jar" ] || die "the build did not produce $jar; log: $work/logs/build.log"

# --- one case ----------------------------------------------------------------
# start NAME PORT [ENV=VALUE...]: the jar with the agent, spans to its log.
# Agent defaults (thread.name and thread.id on every span are among them),
# but for a larger span queue: a dropped span would leave a hole in a
# thread's timeline. Reactor Netty's transport is its default (native epoll
# on Linux, so the loops are reactor-http-epoll-N), with 2 loops, shared by
# the server and WebClient (Reactor Netty's global resources).
start() {
  local name=$1 port=$2 log=$work/logs/$case-$1.log; shift 2
  env "$@" "$java" -javaagent:"$agent" \
    -Dotel.service.name="$name" \
    -Dotel.traces.exporter=logging-otlp -Dotel.metrics.exporter=none -Dotel.logs.exporter=none \
    -Dotel.bsp.max.queue.size=200000 \
    -Dreactor.netty.ioWorkerCount=2 \
    -Dserver.port="$port" -jar "$jar" >"$log" 2>&1 &
  pids+=($!)
}

wait_ready() { # PORT NAME PID
  local i
  for i in $(seq 480); do
    curl -sf -o /dev/null "http://127.0.0.1:$1/slow?from=ready" && return 0
    kill -0 "$3" 2>/dev/null || die "$2 exited while starting; log: $work/logs/$case-$2.log"
    sleep 0.5
  done
  die "$2 did not answer on port $1 within 240 s; log: $work/logs/$case-$2.log"
}

load() { # ENDPOINT VUS DURATION RUN
  "$tracelab" load run "$src/load.yaml" --target "http://127.0.0.1:$frontend_port" \
    --param ENDPOINT="$1" --param VUS="$2" --param DURATION="$3" --out "$4" >>"$work/logs/$case-load.log" 2>&1 ||
    die "the load failed; log: $work/logs/$case-load.log"
}

# The traces whose root (the frontend's server span) started inside the
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

record() { # CASE ENDPOINT VUS DURATION
  case=$1; local endpoint=$2 vus=$3 duration=$4 out=$corpus/$1 raw=$work/$1
  say "$case: starting webflux-backend and webflux-frontend with the agent"
  : >"$work/logs/$case-load.log"
  start webflux-backend "$backend_port"; local bpid=$!
  start webflux-frontend "$frontend_port" BACKEND_URL="http://127.0.0.1:$backend_port"; local fpid=$!
  wait_ready "$backend_port" webflux-backend "$bpid"
  wait_ready "$frontend_port" webflux-frontend "$fpid"
  curl -sf -o /dev/null "http://127.0.0.1:$frontend_port/$endpoint" || die "GET /$endpoint failed; log: $work/logs/$case-webflux-frontend.log"
  say "$case: warm-up, $WARMUP of the same load on /$endpoint (not recorded)"
  load "$endpoint" "$vus" "$WARMUP" "$raw-warmup.json"
  sleep 1
  say "$case: measured run, $duration on /$endpoint, $vus clients"
  local t0 t1; t0=$(date +%s%N)
  load "$endpoint" "$vus" "$duration" "$raw-load.json"
  t1=$(date +%s%N)
  sleep 1
  say "$case: stopping both (the agent exports its last spans on exit)"
  stop_all

  sed -n 's/^.*OtlpJsonLoggingSpanExporter - //p' "$work/logs/$case-webflux-frontend.log" "$work/logs/$case-webflux-backend.log" >"$raw-spans.jsonl"
  [ -s "$raw-spans.jsonl" ] || die "no spans in the logs ($work/logs/$case-*.log)"
  # Run from $work so --redact also drops every value that names it.
  (cd "$work" && "$tracelab" convert --file "$raw-spans.jsonl" --to otlp --redact --out "$raw-all.json") ||
    die "tracelab convert failed on $raw-spans.jsonl"
  mkdir -p "$out"
  jq -c --argjson t0 "$t0" --argjson t1 "$t1" "$window" "$raw-all.json" >"$raw-window.json"
  "$tracelab" convert --file "$raw-window.json" --to otlp --max-traces "$MAX_TRACES" --out "$out/traces.json" ||
    die "tracelab convert --max-traces failed on $raw-window.json"
  if grep -qE "$work|/root|/home/" "$out/traces.json"; then die "$out/traces.json still names a local path"; fi

  # What the load measured and what the traces hold must agree: one trace
  # per request, three spans each (frontend server, client, backend server).
  local reqs rate p50 p95 failed traces spans size
  numbers() { jq -r '.summary | [.requests, (.throughput_rps*10|round/10), (.p50_ms|round), (.p95_ms|round), .error_rate] | @tsv' "$1"; }
  read -r reqs rate p50 p95 failed < <(numbers "$raw-warmup.json")
  say "$case: warm-up (not recorded): $reqs requests, $rate req/s, p50 ${p50} ms, p95 ${p95} ms, failed $failed"
  read -r reqs rate p50 p95 failed < <(numbers "$raw-load.json")
  traces=$(jq '[.resourceSpans[].scopeSpans[].spans[].traceId] | unique | length' "$out/traces.json")
  spans=$(jq '[.resourceSpans[].scopeSpans[].spans[]] | length' "$out/traces.json")
  size=$(stat -c %s "$out/traces.json")
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$case" "$reqs" "$rate" "$p50" "$p95" "$failed" "$traces" "$spans" "$size" >>"$work/summary.tsv"
  say "$case: measured: $reqs requests, $rate req/s, p50 ${p50} ms, p95 ${p95} ms, failed $failed; $traces traces, $spans spans, $((size / 1024)) KiB"
  [ "$size" -le $((2200 * 1024)) ] || say "$case: WARNING: traces.json is over ~2 MB; record a shorter run (the *_DURATION variables)"
  local want=$reqs; [ "$want" -le "$MAX_TRACES" ] || want=$MAX_TRACES
  [ "$traces" = "$want" ] || say "$case: WARNING: $reqs requests (cap $MAX_TRACES) but $traces traces in the window"
  [ "$spans" = $((3 * traces)) ] || say "$case: WARNING: $spans spans for $traces traces (expected 3 each)"
  python3 "$src/loops.py" "$out/traces.json" "$raw-load.json" | tee "$work/logs/$case-loops.txt" >&2
}

printf 'case\trequests\treq/s\tp50_ms\tp95_ms\tfailed\ttraces\tspans\tbytes\n' >"$work/summary.tsv"
for c in $cases; do
  case $c in
    spring-webflux-blocking-8vus) record "$c" blocking 8 "$BLOCKING_DURATION" ;;
    spring-webflux-reactive-8vus) record "$c" reactive 8 "$REACTIVE_8_DURATION" ;;
    spring-webflux-blocking-32vus) record "$c" blocking 32 "$BLOCKING_DURATION" ;;
    spring-webflux-reactive-32vus) record "$c" reactive 32 "$REACTIVE_32_DURATION" ;;
    *) die "unknown case $c (CASES)" ;;
  esac
done
say "done; summary:"
column -t -s $'\t' "$work/summary.tsv" >&2
say "traces written under $corpus; raw logs under $work/logs"

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
# Maven Central and the Go module proxy at the versions pinned in
# spring-webflux/pom.xml and, for the Java agent, in lib.sh.
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
#
# What every recording script does alike (the scratch dir, process tracking,
# the JDK and the agent, the load, the window, the summary) is in lib.sh.
set -euo pipefail
# shellcheck source=SCRIPTDIR/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# Spring Boot itself is pinned in spring-webflux/pom.xml (parent 4.0.7).

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

frontend_port=${FRONTEND_PORT:-18660}
backend_port=${BACKEND_PORT:-18661}
target=http://127.0.0.1:$frontend_port
# Reactor Netty's transport is its default (native epoll on Linux, so the
# loops are reactor-http-epoll-N), with 2 loops, shared by the server and
# WebClient (Reactor Netty's global resources). The agent's defaults put
# thread.name and thread.id on every span.
jvm_flags=(-Dreactor.netty.ioWorkerCount=2)
port_property=server.port
ready_seconds=240

use_work WEBFLUX_CORPUS_WORK corpus-spring-webflux dl
need_hint="Debian: apt-get install -y curl jq maven python3; Go from https://go.dev/dl/"
need curl jq go mvn python3
find_jdk

# --- tools: the Java agent, tracelab -----------------------------------------
find_agent
build_tracelab

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
# load_case OUT DURATION: the case's clients on its endpoint.
load_case() { load "$1" ENDPOINT="$endpoint" VUS="$vus" DURATION="$2"; }

record() { # ENDPOINT VUS DURATION
  local endpoint=$1 vus=$2
  record_pair webflux "$endpoint" "$3" "$3 on /$endpoint, $vus clients" "$MAX_TRACES"
  # What the load measured and what the traces hold must agree: one trace
  # per request, three spans each (frontend server, client, backend server).
  say_warmup
  summarise 2200 "~2 MB; record a shorter run (the *_DURATION variables)"
  local want=$reqs; [ "$want" -le "$MAX_TRACES" ] || want=$MAX_TRACES
  [ "$traces" = "$want" ] || say "$case: WARNING: $reqs requests (cap $MAX_TRACES) but $traces traces in the window"
  [ "$spans" = $((3 * traces)) ] || say "$case: WARNING: $spans spans for $traces traces (expected 3 each)"
  python3 "$src/loops.py" "$out/traces.json" "$raw-load.json" | tee "$work/logs/$case-loops.txt" >&2
}

record_all 'case\trequests\treq/s\tp50_ms\tp95_ms\tfailed\ttraces\tspans\tbytes' "
  spring-webflux-blocking-8vus   blocking  8   $BLOCKING_DURATION
  spring-webflux-reactive-8vus   reactive  8   $REACTIVE_8_DURATION
  spring-webflux-blocking-32vus  blocking  32  $BLOCKING_DURATION
  spring-webflux-reactive-32vus  reactive  32  $REACTIVE_32_DURATION"

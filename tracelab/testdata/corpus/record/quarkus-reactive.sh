#!/usr/bin/env bash
# Records the corpus cases quarkus-blocking-20vus, quarkus-reactive-20vus,
# quarkus-reactive-low and quarkus-blocking-low (see ../README.md, section
# "Quarkus reactive application").
#
# It generates a Quarkus REST application from Maven Central with the Quarkus
# Maven plugin's create goal, adds the endpoints in quarkus-reactive/ (GET
# /blocking: a JDK HttpClient.send on the Vert.x event loop; GET /reactive:
# the same call with the reactive REST client; GET /slow: the downstream,
# 20 ms), builds it, and runs the jar twice with the OpenTelemetry Java agent:
# quarkus-backend serves /slow, quarkus-frontend serves /blocking and
# /reactive and calls the backend. For each case it starts both fresh, warms
# them up, loads them with tracelab's load engine, stops them (the agent flushes its spans on
# exit), and writes <case>/traces.json: the traces of the measured run only,
# converted to plain OTLP JSON by `tracelab convert --redact`.
#
# Needs: a JDK >= 21, Maven (any version: it only fetches Maven 3.9, which
# the create goal requires), Go (builds tracelab), jq, curl. Everything else comes from Maven Central and the Go
# module proxy at the versions pinned below.
#
# Environment:
#   QUARKUS_CORPUS_WORK  scratch dir for the app, tools and raw logs
#                        (default: $TRACELAB_CACHE or ~/.cache/tracelab, then
#                        corpus-quarkus); never inside the repository
#   FRONTEND_PORT, BACKEND_PORT   default 18411, 18412
#   CASES                which cases to record (default: all four)
#   VUS, WARMUP, BLOCKING_DURATION, REACTIVE_DURATION, LOW_RATE, LOW_VUS,
#   LOW_DURATION         the load (defaults below)
set -euo pipefail

QUARKUS_VERSION=3.31.4
# The create goal reads the extension catalog from
# io.quarkus:quarkus-bom-quarkus-platform-descriptor, which the Maven mirrors
# of the lab's machines hold for 3.31.1 but not for 3.31.4. The catalog only
# names the extensions (the same in both); the generated pom is then pinned
# to QUARKUS_VERSION below, and that is what the build uses.
QUARKUS_CATALOG_VERSION=3.31.1
# The create goal refuses Maven < 3.9 (Debian 12 ships 3.8.7).
MAVEN_VERSION=3.9.11
DEPENDENCY_PLUGIN_VERSION=3.8.1
OTEL_JAVAAGENT_VERSION=2.33.1

# The load. 20 closed-loop clients for the contended runs (orders, the
# lab's own case-000 service, sees 24). The low-load runs send LOW_RATE
# requests per second at even spacing, so requests on one event loop never
# overlap. Each duration is the measured run only; a warm-up of WARMUP with
# the same load comes before it. The agent's spans come out at ~0.95 KB each
# in OTLP JSON, 3 per request, and a case's traces.json should stay under
# ~3 MB with every request of the run in it: hence the short 20-client runs,
# shorter still for /reactive, which serves ~8x the requests. Each can be
# overridden from the environment.
VUS=${VUS:-20}
WARMUP=${WARMUP:-5s}
BLOCKING_DURATION=${BLOCKING_DURATION:-12s}
REACTIVE_DURATION=${REACTIVE_DURATION:-1200ms}
LOW_RATE=${LOW_RATE:-5}
LOW_VUS=${LOW_VUS:-5}
LOW_DURATION=${LOW_DURATION:-20s}

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
src=$here/quarkus-reactive
corpus=$(dirname "$here")
tracelab_src=$(cd "$corpus/../.." && pwd)
cache=${TRACELAB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/tracelab}
work=${QUARKUS_CORPUS_WORK:-$cache/corpus-quarkus}
frontend_port=${FRONTEND_PORT:-18411}
backend_port=${BACKEND_PORT:-18412}
cases=${CASES:-quarkus-blocking-20vus quarkus-reactive-20vus quarkus-reactive-low quarkus-blocking-low}

say() { printf '==> %s\n' "$*" >&2; }
die() { printf 'quarkus-reactive.sh: %s\n' "$*" >&2; exit 1; }

work=$(realpath -m "$work")
case $work in "$tracelab_src"/*|"$(dirname "$tracelab_src")"/*) die "QUARKUS_CORPUS_WORK=$work is inside the repository; pick a scratch dir outside it" ;; esac
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

for c in curl jq go mvn; do
  command -v "$c" >/dev/null || die "$c is required (Debian: apt-get install -y curl jq maven; Go from https://go.dev/dl/)"
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

# --- tools: Maven 3.9, the Java agent, tracelab ---------------------------
mvn_fetch() { # ARTIFACT: copies one artifact from Maven Central into $work/dl
  run "$work/logs/fetch.log" mvn -B -ntp -q \
    "org.apache.maven.plugins:maven-dependency-plugin:$DEPENDENCY_PLUGIN_VERSION:copy" \
    -Dartifact="$1" -DoutputDirectory="$work/dl"
}
mvn39=$work/dl/apache-maven-$MAVEN_VERSION/bin/mvn
if [ ! -x "$mvn39" ]; then
  say "fetching Maven $MAVEN_VERSION from Maven Central"
  mvn_fetch "org.apache.maven:apache-maven:$MAVEN_VERSION:tar.gz:bin"
  tar -xzf "$work/dl/apache-maven-$MAVEN_VERSION-bin.tar.gz" -C "$work/dl"
fi

agent=$cache/otel-javaagent/$OTEL_JAVAAGENT_VERSION/opentelemetry-javaagent.jar
if [ ! -f "$agent" ]; then
  agent=$work/dl/opentelemetry-javaagent-$OTEL_JAVAAGENT_VERSION.jar
  if [ ! -f "$agent" ]; then
    say "fetching the OpenTelemetry Java agent $OTEL_JAVAAGENT_VERSION from Maven Central"
    mvn_fetch "io.opentelemetry.javaagent:opentelemetry-javaagent:$OTEL_JAVAAGENT_VERSION"
  fi
fi
say "Java agent: $agent"


say "building tracelab from $tracelab_src"
(cd "$tracelab_src" && run "$work/logs/tracelab-build.log" go build -o "$work/bin/tracelab" .)
tracelab=$work/bin/tracelab

# --- the application ---------------------------------------------------------
app=$work/app/quarkus-reactive
jar=$app/target/quarkus-app/quarkus-run.jar
say "generating the Quarkus $QUARKUS_VERSION application (create goal, extensions rest, rest-client)"
rm -rf "$work/app"; mkdir -p "$work/app"
(cd "$work/app" && run "$work/logs/create.log" "$mvn39" -B -ntp \
  "io.quarkus:quarkus-maven-plugin:$QUARKUS_VERSION:create" \
  -DquarkusRegistryClient=false \
  -DplatformGroupId=io.quarkus -DplatformArtifactId=quarkus-bom -DplatformVersion="$QUARKUS_CATALOG_VERSION" \
  -DprojectGroupId=dev.tracelab.corpus -DprojectArtifactId=quarkus-reactive \
  -Dextensions=rest,rest-client -DjavaVersion=21 -DnoCode)
sed -i "s|<quarkus.platform.version>$QUARKUS_CATALOG_VERSION</quarkus.platform.version>|<quarkus.platform.version>$QUARKUS_VERSION</quarkus.platform.version>|" "$app/pom.xml"
grep -q "<quarkus.platform.version>$QUARKUS_VERSION</quarkus.platform.version>" "$app/pom.xml" ||
  die "could not pin the generated pom to Quarkus $QUARKUS_VERSION ($app/pom.xml)"
grep -q '<quarkus.platform.group-id>io.quarkus</quarkus.platform.group-id>' "$app/pom.xml" ||
  die "the generated pom does not use io.quarkus:quarkus-bom ($app/pom.xml)"
mkdir -p "$app/src/main/java/dev/tracelab/corpus"
cp "$src"/*.java "$app/src/main/java/dev/tracelab/corpus/"
cp "$src/application.properties" "$app/src/main/resources/application.properties"
say "building it (mvn package; a minute or two)"
(cd "$app" && run "$work/logs/build.log" "$mvn39" -B -ntp -DskipTests package)
[ -f "$jar" ] || die "the build did not produce $jar; log: $work/logs/build.log"

# --- one case ----------------------------------------------------------------
# start NAME PORT [ENV=VALUE...]: the jar with the agent, spans to its log.
# Agent defaults, but for a larger span queue: a dropped span would leave a
# hole in a thread's timeline, and the default queue (2048) can overflow
# under the 20-client load.
start() {
  local name=$1 port=$2 log=$work/logs/$case-$1.log; shift 2
  env "$@" "$java" -javaagent:"$agent" \
    -Dotel.service.name="$name" \
    -Dotel.traces.exporter=logging-otlp -Dotel.metrics.exporter=none -Dotel.logs.exporter=none \
    -Dotel.bsp.max.queue.size=200000 \
    -Dquarkus.http.port="$port" -jar "$jar" >"$log" 2>&1 &
  pids+=($!)
}

wait_ready() { # PORT NAME PID
  local i
  for i in $(seq 240); do
    curl -sf -o /dev/null "http://127.0.0.1:$1/slow?from=ready" && return 0
    kill -0 "$3" 2>/dev/null || die "$2 exited while starting; log: $work/logs/$case-$2.log"
    sleep 0.5
  done
  die "$2 did not answer on port $1 within 120 s; log: $work/logs/$case-$2.log"
}

load() { # ENDPOINT MODE DURATION RUN
  local args=(--param ENDPOINT="$1" --param DURATION="$3" --out "$4")
  if [ "$2" = closed ]; then args+=(--param VUS="$VUS"); else args+=(--param VUS="$LOW_VUS" --param RATE="$LOW_RATE"); fi
  "$tracelab" load run "$src/load.yaml" --target "http://127.0.0.1:$frontend_port" "${args[@]}" >>"$work/logs/$case-load.log" 2>&1 ||
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

record() { # CASE ENDPOINT MODE DURATION
  case=$1; local endpoint=$2 mode=$3 duration=$4 out=$corpus/$1 raw=$work/$1
  say "$case: starting quarkus-backend and quarkus-frontend with the agent"
  : >"$work/logs/$case-load.log"
  start quarkus-backend "$backend_port"; local bpid=$!
  start quarkus-frontend "$frontend_port" BACKEND_URL="http://127.0.0.1:$backend_port"; local fpid=$!
  wait_ready "$backend_port" quarkus-backend "$bpid"
  wait_ready "$frontend_port" quarkus-frontend "$fpid"
  curl -sf -o /dev/null "http://127.0.0.1:$frontend_port/$endpoint" || die "GET /$endpoint failed; log: $work/logs/$case-quarkus-frontend.log"
  say "$case: warm-up, $WARMUP of the same load on /$endpoint (not recorded)"
  load "$endpoint" "$mode" "$WARMUP" "$raw-warmup.json"
  sleep 1
  say "$case: measured run, $duration on /$endpoint ($mode)"
  local t0 t1; t0=$(date +%s%N)
  load "$endpoint" "$mode" "$duration" "$raw-load.json"
  t1=$(date +%s%N)
  sleep 1
  say "$case: stopping both (the agent exports its last spans on exit)"
  stop_all

  sed -n 's/^.*OtlpJsonLoggingSpanExporter - //p' "$work/logs/$case-quarkus-frontend.log" "$work/logs/$case-quarkus-backend.log" >"$raw-spans.jsonl"
  [ -s "$raw-spans.jsonl" ] || die "no spans in the logs ($work/logs/$case-*.log)"
  # Run from $work so --redact also drops every value that names it.
  (cd "$work" && "$tracelab" convert --file "$raw-spans.jsonl" --to otlp --redact --out "$raw-all.json") ||
    die "tracelab convert failed on $raw-spans.jsonl"
  mkdir -p "$out"
  jq -c --argjson t0 "$t0" --argjson t1 "$t1" "$window" "$raw-all.json" >"$out/traces.json"
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
  [ "$size" -le $((3500 * 1024)) ] || say "$case: WARNING: traces.json is over 3.5 MB; record a shorter run (the *_DURATION variables)"
  [ "$traces" = "$reqs" ] || say "$case: WARNING: $reqs requests but $traces traces in the window"
  [ "$spans" = $((3 * traces)) ] || say "$case: WARNING: $spans spans for $traces traces (expected 3 each)"
}

printf 'case\trequests\treq/s\tp50_ms\tp95_ms\tfailed\ttraces\tspans\tbytes\n' >"$work/summary.tsv"
for c in $cases; do
  case $c in
    quarkus-blocking-20vus) record "$c" blocking closed "$BLOCKING_DURATION" ;;
    quarkus-reactive-20vus) record "$c" reactive closed "$REACTIVE_DURATION" ;;
    quarkus-reactive-low) record "$c" reactive open "$LOW_DURATION" ;;
    quarkus-blocking-low) record "$c" blocking open "$LOW_DURATION" ;;
    *) die "unknown case $c (CASES)" ;;
  esac
done
say "done; summary:"
column -t -s $'\t' "$work/summary.tsv" >&2
say "traces written under $corpus; raw logs under $work/logs"

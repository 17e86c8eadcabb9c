# shellcheck shell=bash
# lib.sh: what the corpus recording scripts share (go-grpc.sh, go-nethttp.sh,
# node-express.sh, python-django.sh, python-fastapi.sh, python-flask.sh,
# quarkus-reactive.sh, spring-webflux.sh).
# Each script sources it after `set -euo pipefail` and keeps what is its
# framework's own: how it builds and starts its services, its ports, its load
# and its cases.
#
# Sourcing it sets
#   prog          the script's file name: the prefix of its error messages
#   here, src     this folder, and the script's application folder (NAME.sh: NAME/)
#   corpus        tracelab/testdata/corpus, where <case>/traces.json are written
#   tracelab_src  the tracelab module that build_tracelab builds
#   cache         $TRACELAB_CACHE, else $XDG_CACHE_HOME/tracelab, else ~/.cache/tracelab
# and a trap that, on exit, stops every process in pids (newest first) and
# removes pgtmp.
#
# A script then calls use_work, need, build_tracelab, whatever it needs to
# build and start, and last record_all with its table of cases. record_all
# calls the script's `record ARG...` once per case, with case, out (the case's
# folder) and raw (the prefix of its raw files in the scratch dir) set; the
# script's record calls measure, which calls the script's `load_case OUT
# AMOUNT` for the warm-up and for the measured run.
#
# Settings a script may change after sourcing (defaults in brackets):
#   niced          a prefix for the tracelab build and the load, e.g. (nice -n 19) [none]
#   ms_digits      decimals of p50 and p95 in the summary [0]
#   need_hint      how to install a missing command, added to its error [none]
#   target         the URL the load is sent to
#   pg_port        PostgreSQL's port (pg_start)
#   frontend_port, backend_port, port_property, jvm_flags, ready_seconds
#                  the Java pair (record_pair)

prog=${0##*/}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
src=$here/${prog%.sh}
corpus=$(dirname "$here")
tracelab_src=$(cd "$corpus/../.." && pwd)
cache=${TRACELAB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/tracelab}

niced=()
ms_digits=0
need_hint=
target=
work=
tracelab=
case=
out=
raw=
t0=
t1=
pids=()
pgtmp=
pg_pid=
as_pg=()
pg_port=
frontend_port=
backend_port=
port_property=
jvm_flags=()
ready_seconds=
jar=

# PostgreSQL's server binaries as the lab's infra/local/tools.sh caches them
# (io.zonky.test.postgres from Maven Central).
POSTGRES_VERSION=16.4.0
# Both Java scripts: the OpenTelemetry Java agent, and the plugin that copies
# an artifact from Maven Central.
OTEL_JAVAAGENT_VERSION=2.33.1
DEPENDENCY_PLUGIN_VERSION=3.8.1

# Progress goes to stderr, marked, so that it stands apart from what the tools print.
say() { printf '==> %s\n' "$*" >&2; }

# Every failure names the script and exits 1, whatever step it came from.
die() { printf '%s: %s\n' "$prog" "$*" >&2; exit 1; }

# use_work VAR DEFAULT [DIR...]: builds, node_modules and raw logs are large
# and machine-specific, so they go to a scratch dir that is never inside the repository.
use_work() {
  local var=$1 d
  work=${!var:-$cache/$2}
  shift 2
  work=$(realpath -m "$work")
  case $work in "$tracelab_src"/*|"$(dirname "$tracelab_src")"/*) die "$var=$work is inside the repository; pick a scratch dir outside it" ;; esac
  mkdir -p "$work/bin" "$work/logs"
  for d; do mkdir -p "$work/$d"; done
}

# need CMD...: a missing tool fails before any build or download, not halfway through a case.
need() {
  local c
  for c; do command -v "$c" >/dev/null || die "$c is required${need_hint:+ ($need_hint)}"; done
}

# run LOG CMD...: a build step's output is long and matters only when it
# fails: it goes to LOG, and its tail to the terminal on failure.
run() {
  local log=$1; shift
  if ! "$@" >"$log" 2>&1; then
    tail -n 20 "$log" >&2
    die "failed: $*; full log: $log"
  fi
}

# The load and every conversion use this checkout's tracelab, not whatever else is installed.
build_tracelab() {
  say "building tracelab from $tracelab_src"
  (cd "$tracelab_src" && run "$work/logs/tracelab-build.log" "${niced[@]}" go build -o "$work/bin/tracelab" .)
  tracelab=$work/bin/tracelab
}

# spawn NAME CMD...: every process goes into pids, so that the exit trap
# stops it whatever fails; its output is logs/CASE-NAME.log (logs/NAME.log outside a case).
spawn() {
  local name=$1; shift
  "$@" >"$work/logs/${case:+$case-}$name.log" 2>&1 &
  pids+=($!)
}

# stop PID...: SIGTERM, on which the services flush their last spans, and
# a wait, so that nothing reads their output before they are done.
stop() {
  local p keep=()
  for p; do kill "$p" 2>/dev/null || true; done
  for p; do wait "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do [[ " $* " == *" $p "* ]] || keep+=("$p"); done
  pids=("${keep[@]}")
}

# Newest first, one at a time: a service still exporting spans stops before
# the collector, Jaeger or PostgreSQL it talks to.
cleanup() {
  while [ ${#pids[@]} -gt 0 ]; do stop "${pids[-1]}"; done
  [ -z "$pgtmp" ] || rm -rf "$pgtmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# wait_ready PORT PATH NAME PID SECONDS: a service that dies while starting
# fails at once with its log named, instead of after the whole timeout.
wait_ready() {
  local i log=$work/logs/${case:+$case-}$3.log
  for ((i = 0; i < $5 * 5; i++)); do
    curl -sf -o /dev/null "http://127.0.0.1:$1$2" && return 0
    kill -0 "$4" 2>/dev/null || die "$3 exited while starting; log: $log"
    sleep 0.2
  done
  die "$3 did not answer on port $1 within $5 s; log: $log"
}

# probe PORT PATH NAME: one request before the warm-up, so that a broken
# endpoint fails with its service's log named, not as a load full of errors.
probe() {
  curl -sf -o /dev/null "http://127.0.0.1:$1/$2" || die "GET /$2 failed; log: $work/logs/$case-$3.log"
}

# load OUT PARAM=VALUE...: every case is driven by the same engine (tracelab
# load run, since the lab dropped k6) from the script's load.yaml; the warm-up
# and the measured run share one log per case, so a failure shows both.
load() {
  local out=$1 p args=()
  shift
  for p; do args+=(--param "$p"); done
  "${niced[@]}" "$tracelab" load run "$src/load.yaml" --target "$target" "${args[@]}" --out "$out" >>"$work/logs/$case-load.log" 2>&1 ||
    die "the load failed; log: $work/logs/$case-load.log"
}

# measure WARMUP_AMOUNT WARMUP_TEXT RUN_AMOUNT RUN_TEXT [SETTLE]: the
# measured run comes after a warm-up on a settled service, and t0..t1, its
# start and end in ns, decide which traces the case keeps.
measure() {
  say "$case: warm-up, $2 (not recorded)"
  load_case "$raw-warmup.json" "$1"
  sleep 1
  say "$case: measured run, $4"
  t0=$(date +%s%N)
  load_case "$raw-load.json" "$3"
  t1=$(date +%s%N)
  sleep "${5:-1}"
}

# The traces whose root started inside the measured run, every span of them;
# warm-up and readiness probes drop out. A root is a span whose parent is not
# in the file: the load sends a traceparent, which no span in the file has.
# shellcheck disable=SC2016 # jq's variables, not the shell's
window='
  ([.resourceSpans[].scopeSpans[].spans[].spanId | {key: ., value: true}] | from_entries) as $ids
  | ([.resourceSpans[].scopeSpans[].spans[]
    | select(($ids[.parentSpanId // ""] | not)
             and (.startTimeUnixNano | tonumber) >= $t0
             and (.startTimeUnixNano | tonumber) <= $t1)
    | {key: .traceId, value: true}] | from_entries) as $keep
  | .resourceSpans |= map(.scopeSpans |= map(.spans |= map(select($keep[.traceId])) | select(.spans | length > 0)))
  | .resourceSpans |= map(select(.scopeSpans | length > 0))'

# cut_window [FILE]: the run's time, not a count of requests, decides what a
# case holds, whatever way its spans were collected.
cut_window() { jq -c --argjson t0 "$t0" --argjson t1 "$t1" "$window" "$@"; }

# keep_sdk_json MAX_TRACES: for the scripts whose receiver appends each OTLP
# JSON export request of the SDK to $raw-otlp.jsonl, and which keep the SDK's
# own JSON (intValue numbers, arrayValue lists such as db.postgresql.values,
# scope versions), which `tracelab convert` would rewrite. It merges the
# requests into one document in $raw-window.json, cut to the measured run,
# and writes to $out/traces.json its MAX_TRACES traces whose roots start
# first, with the machine's attributes dropped as `tracelab convert --redact`
# drops them (pkg/redact's machineKeys, and every value that names the home,
# temporary or scratch dir); then checks that nothing is left to drop.
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
keep_sdk_json() {
  [ -s "$raw-otlp.jsonl" ] || die "no spans received ($raw-otlp.jsonl)"
  jq -c -s '{resourceSpans: [.[].resourceSpans[]]}' "$raw-otlp.jsonl" | cut_window >"$raw-window.json"
  mkdir -p "$out"
  jq -c --argjson n "$1" --arg home "$HOME" --arg tmp "${TMPDIR:-/tmp}" --arg work "$work" "$redact_trim" \
    "$raw-window.json" >"$out/traces.json"
  check_paths
  (cd "$work" && cmp -s <("$tracelab" convert --file "$out/traces.json" --to otlp) \
    <("$tracelab" convert --file "$out/traces.json" --to otlp --redact)) ||
    die "$out/traces.json holds something tracelab convert --redact drops"
}

# keep_window SPANS MAX_TRACES: a committed case is plain OTLP JSON that
# names no machine, holds the measured run only and stays small enough to
# commit: $out/traces.json keeps the MAX_TRACES earliest traces of the window
# (empty: the window as jq wrote it). convert runs from $work so that
# --redact also drops every value that names it.
keep_window() {
  (cd "$work" && "$tracelab" convert --file "$1" --to otlp --redact --out "$raw-all.json") ||
    die "tracelab convert failed on $1"
  cut_window "$raw-all.json" >"$raw-window.json"
  mkdir -p "$out"
  if [ -n "$2" ]; then
    (cd "$work" && "$tracelab" convert --file "$raw-window.json" --to otlp --redact --max-traces "$2" --out "$out/traces.json") ||
      die "tracelab convert --max-traces failed on $raw-window.json"
  else
    cp "$raw-window.json" "$out/traces.json"
  fi
  check_paths
}

# A committed case must not tell where or by whom it was recorded.
check_paths() {
  local re="$work|/root|/home/"
  [ -z "$pgtmp" ] || re+="|$pgtmp"
  [ -z "${HOME:-}" ] || [ "$HOME" = / ] || re+="|$HOME"
  if grep -qE "$re" "$out/traces.json"; then die "$out/traces.json still names a local path"; fi
}

# numbers FILE: the load's own summary, rounded alike in every script's table.
numbers() {
  jq -r --argjson d "$ms_digits" 'def ms: (. * pow(10; $d) | round) / pow(10; $d);
    .summary | [.requests, (.throughput_rps*10|round/10), (.p50_ms|ms), (.p95_ms|ms), .error_rate] | @tsv' "$1"
}

# trace_count FILE: one trace per request is what every case is checked against.
trace_count() { jq '[.resourceSpans[].scopeSpans[].spans[].traceId] | unique | length' "$1"; }

# The warm-up's numbers show whether the measured run started on a warm service.
say_warmup() {
  read -r reqs rate p50 p95 failed < <(numbers "$raw-warmup.json")
  say "$case: warm-up (not recorded): $reqs requests, $rate req/s, p50 ${p50} ms, p95 ${p95} ms, failed $failed"
}

# row FIELD...: summary.tsv is tab-separated so that `column` can align it at the end.
row() { local IFS=$'\t'; printf '%s\n' "$*" >>"$work/summary.tsv"; }

# summarise LIMIT_KIB OVER_TEXT [WINDOW]: what the load measured beside what
# the case holds, so that a lost trace or an oversized file shows at once;
# sets reqs, rate, p50, p95, failed, traces, spans and size for the script's
# own checks. With WINDOW (the traces of the whole run, before MAX_TRACES),
# the row and the line count them too.
summarise() {
  local limit=$1 over=$2 wtraces
  shift 2
  read -r reqs rate p50 p95 failed < <(numbers "$raw-load.json")
  traces=$(trace_count "$out/traces.json")
  spans=$(jq '[.resourceSpans[].scopeSpans[].spans[]] | length' "$out/traces.json")
  size=$(stat -c %s "$out/traces.json")
  local measured="$case: measured: $reqs requests, $rate req/s, p50 ${p50} ms, p95 ${p95} ms, failed $failed"
  if [ $# -gt 0 ]; then
    wtraces=$(trace_count "$1")
    row "$case" "$reqs" "$rate" "$p50" "$p95" "$failed" "$wtraces" "$traces" "$spans" "$size"
    say "$measured; $wtraces traces in the window, $traces kept, $spans spans, $((size / 1024)) KiB"
    [ "$wtraces" = "$reqs" ] || say "$case: WARNING: $reqs requests but $wtraces traces in the window"
  else
    row "$case" "$reqs" "$rate" "$p50" "$p95" "$failed" "$traces" "$spans" "$size"
    say "$measured; $traces traces, $spans spans, $((size / 1024)) KiB"
  fi
  [ "$size" -le $((limit * 1024)) ] || say "$case: WARNING: traces.json is over $over"
}

# record_all HEADER TABLE: the cases are one table (a line: CASE ARG...), so
# CASES defaults to all of them, in order, and an unknown name fails.
record_all() {
  local -A case_args=()
  local order=() c rest words
  while read -r c rest; do
    [ -n "$c" ] || continue
    order+=("$c"); case_args[$c]=$rest
  done <<<"$2"
  printf '%b\n' "$1" >"$work/summary.tsv"
  for c in ${CASES:-${order[*]}}; do
    [[ -v case_args[$c] ]] || die "unknown case $c (CASES)"
    read -ra words <<<"${case_args[$c]}"
    case=$c out=$corpus/$c raw=$work/$c
    : >"$work/logs/$case-load.log"
    record "${words[@]}"
  done
  say "done; summary:"
  column -t -s $'\t' "$work/summary.tsv" >&2
  say "traces written under $corpus; raw logs under $work/logs"
}

# --- PostgreSQL (go-nethttp, node-express, python-django) ---------------------

# A missing binary cache fails before any build, with where to get it.
pg_need() {
  pg_bin=${PG_BIN_DIR:-$cache/postgres/$POSTGRES_VERSION/linux-amd64/bin}
  if [ ! -x "$pg_bin/postgres" ] || [ ! -x "$pg_bin/initdb" ]; then
    die "no PostgreSQL binaries in $pg_bin (set PG_BIN_DIR, or run infra/local/tools.sh, which caches $POSTGRES_VERSION)"
  fi
}

# pg_start USER DB [OPTION...]: a fresh cluster in pgtmp (made by the
# script, removed by the trap) for every run, so every run starts from its
# seed. PostgreSQL refuses to run as root: as root, it runs as the postgres
# account (else nobody) from a copy of the binaries in pgtmp, which that
# account can reach where root's home is closed to it.
pg_start() {
  local user=$1 db=$2 account
  shift 2
  if [ "$(id -u)" = 0 ]; then
    account=postgres
    id "$account" >/dev/null 2>&1 || account=nobody
    as_pg=(setpriv --reuid="$account" --regid="$(id -g "$account")" --init-groups)
    cp -a "$(dirname "$pg_bin")" "$pgtmp/dist"
    chmod -R a+rX "$pgtmp"; chown "$account:" "$pgtmp"
    pg_bin=$pgtmp/dist/bin
  fi
  run "$work/logs/initdb.log" "${as_pg[@]}" "$pg_bin/initdb" -D "$pgtmp/data" -U "$user" --auth=trust -E UTF8 --locale=C
  echo "CREATE DATABASE $db" | "${as_pg[@]}" "$pg_bin/postgres" --single -D "$pgtmp/data" postgres >"$work/logs/createdb.log" 2>&1 ||
    die "could not create the database $db; log: $work/logs/createdb.log"
  "${as_pg[@]}" "$pg_bin/postgres" -D "$pgtmp/data" -c listen_addresses=127.0.0.1 -p "$pg_port" \
    -c unix_socket_directories="$pgtmp" "$@" >"$work/logs/postgres.log" 2>&1 &
  pids+=($!)
  pg_pid=$!
}

# pg_wait WHAT LOG CMD...: the first command that needs the database retries
# until PostgreSQL accepts connections (up to 30 s), and fails at once if it died.
pg_wait() {
  local what=$1 log=$2 i
  shift 2
  for i in $(seq 60); do
    "$@" >"$log" 2>&1 && return 0
    kill -0 "$pg_pid" 2>/dev/null || die "PostgreSQL exited while starting; log: $work/logs/postgres.log"
    [ "$i" -lt 60 ] || die "could not $what within 30 s; logs: $log, $work/logs/postgres.log"
    sleep 0.5
  done
}

# --- Java (quarkus-reactive, spring-webflux) ---------------------------------

# java_major JAVA: the feature version, from the JDK's properties, whose
# format has not changed across releases as the version string's has.
java_major() { "$1" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.specification.version = //p'; }

# The builds and the agent need a JDK >= 21, and a machine's default java is often older.
find_jdk() {
  local j m
  java=
  for j in ${JAVA_HOME:+"$JAVA_HOME/bin/java"} /usr/lib/jvm/*/bin/java; do
    [ -x "$j" ] || continue
    m=$(java_major "$j"); [ "${m:-0}" -ge 21 ] 2>/dev/null || continue
    java=$j; break
  done
  [ -n "$java" ] || die "no JDK >= 21 found (JAVA_HOME or /usr/lib/jvm); install one, e.g. Temurin 21"
  export JAVA_HOME; JAVA_HOME=$(dirname "$(dirname "$java")")
  say "JDK: $JAVA_HOME ($(java_major "$java"))"
}

# mvn_fetch ARTIFACT: Maven Central is the one registry these machines reach
# for Java artifacts, so tools come from it too, into $work/dl.
mvn_fetch() {
  run "$work/logs/fetch.log" mvn -B -ntp -q \
    "org.apache.maven.plugins:maven-dependency-plugin:$DEPENDENCY_PLUGIN_VERSION:copy" \
    -Dartifact="$1" -DoutputDirectory="$work/dl"
}

# The agent `make tools` cached is reused; else it is fetched once into $work/dl.
find_agent() {
  agent=$cache/otel-javaagent/$OTEL_JAVAAGENT_VERSION/opentelemetry-javaagent.jar
  if [ ! -f "$agent" ]; then
    agent=$work/dl/opentelemetry-javaagent-$OTEL_JAVAAGENT_VERSION.jar
    if [ ! -f "$agent" ]; then
      say "fetching the OpenTelemetry Java agent $OTEL_JAVAAGENT_VERSION from Maven Central"
      mvn_fetch "io.opentelemetry.javaagent:opentelemetry-javaagent:$OTEL_JAVAAGENT_VERSION"
    fi
  fi
  say "Java agent: $agent"
}

# start_jar NAME PORT [ENV=VALUE...]: $jar with the agent, spans to its log.
# The agent's defaults but for a larger span queue: a dropped span would
# leave a hole in a thread's timeline, and the default queue (2048) can
# overflow under the load. The port goes to -D$port_property, after jvm_flags.
start_jar() {
  local name=$1 port=$2
  shift 2
  spawn "$name" env "$@" "$java" -javaagent:"$agent" \
    -Dotel.service.name="$name" \
    -Dotel.traces.exporter=logging-otlp -Dotel.metrics.exporter=none -Dotel.logs.exporter=none \
    -Dotel.bsp.max.queue.size=200000 \
    "${jvm_flags[@]}" -D"$port_property=$port" -jar "$jar"
}

# record_pair PREFIX ENDPOINT RUN_AMOUNT RUN_TEXT MAX_TRACES: both Java
# cases are a PREFIX-frontend calling a PREFIX-backend's GET /slow, started
# fresh per case so that no case inherits another's JIT or queues; the agent
# prints the spans into their logs, and exports its last ones on exit.
record_pair() {
  local endpoint=$2 bpid fpid
  say "$case: starting $1-backend and $1-frontend with the agent"
  start_jar "$1-backend" "$backend_port"; bpid=$!
  start_jar "$1-frontend" "$frontend_port" BACKEND_URL="http://127.0.0.1:$backend_port"; fpid=$!
  wait_ready "$backend_port" "/slow?from=ready" "$1-backend" "$bpid" "$ready_seconds"
  wait_ready "$frontend_port" "/slow?from=ready" "$1-frontend" "$fpid" "$ready_seconds"
  probe "$frontend_port" "$endpoint" "$1-frontend"
  measure "$WARMUP" "$WARMUP of the same load on /$endpoint" "$3" "$4"
  say "$case: stopping both (the agent exports its last spans on exit)"
  stop "$fpid" "$bpid"
  sed -n 's/^.*OtlpJsonLoggingSpanExporter - //p' "$work/logs/$case-$1-frontend.log" "$work/logs/$case-$1-backend.log" >"$raw-spans.jsonl"
  [ -s "$raw-spans.jsonl" ] || die "no spans in the logs ($work/logs/$case-*.log)"
  keep_window "$raw-spans.jsonl" "$5"
}

#!/usr/bin/env bash
# Profiles the gateway alone, once per matcher, and prints how much of its CPU
# samples go to path matching: the case's evidence (a JFR profile in which the
# filter chain, matching included, took about 40% of the samples), measured
# here with the same tool. The lab's stack is not needed and not touched: the
# gateway runs from its jar on a free port outside the lab's, without the Java
# agent, and tracelab's load engine drives it directly.
#
#   services/gateway/profile-matching.sh            # or: make profile-antpath
#
# Environment: MATCHERS (default "ant path-pattern"), VUS (8), WARMUP
# (requests before recording, 6000), DURATION (load duration while recording,
# 20s), CPUS (taskset CPU list for the gateway, 1; empty: not pinned),
# LOAD_CPUS (the same for the load, 0), TRACELAB_BIN (.state/bin/tracelab), KEEP_DIR (keep the recordings there). The
# gateway's own settings pass through, e.g.
# GATEWAY_COMMON_POOL_PARALLELISM=8 MATCHERS=ant for the common-pool variant.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
matchers=${MATCHERS:-ant path-pattern}
vus=${VUS:-8}
warmup=${WARMUP:-6000}
duration=${DURATION:-20s}
cpus=${CPUS-1}
load_cpus=${LOAD_CPUS-0}

jdk=$("$root/infra/local/find-jdk.sh")
jar=$root/services/gateway/target/gateway.jar
[ -f "$jar" ] || { echo "profile-matching: $jar is missing; run 'make build'" >&2; exit 1; }
tracelab=${TRACELAB_BIN:-$root/.state/bin/tracelab}
[ -x "$tracelab" ] || { echo "profile-matching: $tracelab is missing; run 'make build'" >&2; exit 1; }

work=${KEEP_DIR:-$(mktemp -d)}
mkdir -p "$work"
pid=
cleanup() {
  [ -z "$pid" ] || kill "$pid" 2>/dev/null || true
  [ -n "${KEEP_DIR:-}" ] || rm -rf "$work"
}
trap cleanup EXIT

# The lab's services use 18000-19999; the kernel's ephemeral range is above.
free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

pin() {
  if [ -n "$1" ]; then echo taskset -c "$1"; fi
}

load() {
  # shellcheck disable=SC2046 # pin is a command prefix or nothing
  $(pin "$load_cpus") "$tracelab" load run "$root/loadtests/antpath.yaml" --target "http://127.0.0.1:$port" \
    --out "$work/run.json" "$@" 2>>"$work/load.log"
}

cpu_ticks() {
  # utime + stime of the whole JVM (fields 14 and 15 of /proc/<pid>/stat).
  awk '{print $14 + $15}' "/proc/$pid/stat"
}

# jdk.ExecutionSample sees only threads running Java code at the tick;
# socket I/O, in native code, is missed. JDK 25's jdk.CPUTimeSample (JEP 509,
# Linux) samples every thread per 10 ms of its own CPU time, native code
# included: the closer match to a CPU profile.
cpu_time=()
events=jdk.ExecutionSample
if [ "$("$jdk/bin/java" -XshowSettings:properties -version 2>&1 | awk -F'= ' '/java.specification.version/ {print $2}')" -ge 25 ]; then
  cpu_time=("jdk.CPUTimeSample#enabled=true" "jdk.CPUTimeSample#throttle=10ms")
  events=jdk.ExecutionSample,jdk.CPUTimeSample
fi

printf '%-13s %-10s %6s %8s %9s %9s %9s %9s %12s %12s\n' matcher samples req/s count matcher lookup dispatch request "common pool" "CPU/request"
for matcher in $matchers; do
  port=$(free_port)
  # shellcheck disable=SC2046
  GATEWAY_PORT=$port GATEWAY_PATH_MATCHING=$matcher $(pin "$cpus") "$jdk/bin/java" \
    -Xms128m -Xmx512m -XX:+UseSerialGC -XX:FlightRecorderOptions:stackdepth=256 \
    -jar "$jar" >"$work/gateway-$matcher.log" 2>&1 &
  pid=$!
  for _ in $(seq 120); do
    curl -fs "http://127.0.0.1:$port/api/status" >/dev/null 2>&1 && break
    kill -0 "$pid" 2>/dev/null || { cat "$work/gateway-$matcher.log" >&2; exit 1; }
    sleep 0.5
  done
  curl -fs "http://127.0.0.1:$port/api/status" >/dev/null || { echo "profile-matching: the gateway did not answer within 60 s" >&2; exit 1; }
  # The JIT compiles the matching code first; the recording starts after.
  load --param VUS="$vus" --param ITERATIONS="$warmup" >/dev/null
  # The profile settings sample Java threads every 10 ms (default: 20 ms).
  "$jdk/bin/jcmd" "$pid" JFR.start name=matching settings=profile filename="$work/$matcher.jfr" "${cpu_time[@]}" >/dev/null
  before=$(cpu_ticks)
  load --param VUS="$vus" --param DURATION="$duration" >"$work/load-$matcher.txt"
  after=$(cpu_ticks)
  "$jdk/bin/jcmd" "$pid" JFR.stop name=matching >/dev/null
  kill "$pid"
  wait "$pid" 2>/dev/null || true
  pid=

  requests=$(jq '.summary.requests' "$work/run.json")
  rate=$(jq '.summary.throughput_rps' "$work/run.json")
  cpu_ms=$(awk -v t=$((after - before)) -v n="$requests" -v hz="$(getconf CLK_TCK)" 'BEGIN {printf "%.2f ms", t * 1000 / hz / n}')
  "$jdk/bin/jfr" print --json --stack-depth 256 --events "$events" "$work/$matcher.jfr" >"$work/$matcher.json"
  python3 - "$work/$matcher.json" "$matcher" "$rate" "$cpu_ms" <<'EOF'
import json, sys

path, matcher, rate, cpu_ms = sys.argv[1:]
events = json.load(open(path))["recording"]["events"]

def frames(event):
    for f in (event["values"]["stackTrace"] or {"frames": []})["frames"]:
        m = f["method"]
        # JFR writes class names with slashes: org/springframework/util/AntPathMatcher.
        yield m["type"]["name"].replace("/", ".") + "." + m["name"]

# A sample counts for a group when any of its frames belongs to it; regex
# frames count for the matcher because AntPathStringMatcher calls them.
matching = {
    "ant": ("org.springframework.util.AntPathMatcher",),
    "path-pattern": ("org.springframework.web.util.pattern.",),
}[matcher]
# The whole handler lookup: the matcher, plus what Spring MVC does around each
# try (the HTTP method and other conditions, sorting the matches) and parsing
# the request path.
lookup = ("org.springframework.web.servlet.handler.AbstractHandlerMethodMapping.getHandlerInternal",
          "org.springframework.web.servlet.handler.AbstractHandlerMethodMapping.lookupHandlerMethod",
          "org.springframework.web.servlet.mvc.method.RequestMappingInfoHandlerMapping.getHandlerInternal")
# Every handler mapping DispatcherServlet asks: the part of the trace's
# dispatch gap that grows with the route table.
dispatch = ("org.springframework.web.servlet.DispatcherServlet.getHandler",)
# The whole request inside Tomcat's filter chain, handler included.
request = ("org.apache.catalina.core.ApplicationFilterChain.doFilter",)

groups = (("matcher", matching), ("lookup", lookup), ("dispatch", dispatch), ("request", request))
for kind, label in (("jdk.ExecutionSample", "execution"), ("jdk.CPUTimeSample", "cpu-time")):
    samples = [e for e in events if e["type"] == kind]
    if not samples:
        continue
    counts = {name: 0 for name, _ in groups}
    for e in samples:
        fs = list(frames(e))
        for name, prefixes in groups:
            if any(f.startswith(p) for f in fs for p in prefixes):
                counts[name] += 1
    # The ForkJoinPool common pool's threads (GATEWAY_COMMON_POOL_PARALLELISM).
    pool = sum(1 for e in samples
               if ((e["values"].get("sampledThread") or e["values"].get("eventThread") or {}).get("javaName") or "")
               .startswith("ForkJoinPool.commonPool"))
    total = len(samples)
    cols = " ".join(f"{100 * n / total:8.0f}%" for n in counts.values()) + f" {100 * pool / total:11.0f}%"
    print(f"{matcher:<13} {label:<10} {float(rate):6.0f} {total:8d} {cols} {cpu_ms:>12}")
EOF
done
cat <<EOF

Shares of the gateway's JFR samples (execution: jdk.ExecutionSample, Java
code only; cpu-time: jdk.CPUTimeSample, JDK 25 and later, native code
included) while $vus closed-model users ran for $duration after $warmup warm-up
requests spread over the whole route table (loadtests/antpath.yaml):
  matcher   frames of AntPathMatcher (its regex included) or of PathPattern
  lookup    the handler mapping's lookup (getHandlerInternal), matcher included
  dispatch  DispatcherServlet.getHandler: lookup plus the other handler mappings
  request   the whole request under Tomcat's filter chain
  common pool  samples on the ForkJoinPool common pool's threads
CPU/request is the JVM's CPU time (/proc, user + system, every thread) per request.
EOF

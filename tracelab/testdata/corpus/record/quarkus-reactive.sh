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
# module proxy at the versions pinned below and, for the Java agent, in lib.sh.
#
# Environment:
#   QUARKUS_CORPUS_WORK  scratch dir for the app, tools and raw logs
#                        (default: $TRACELAB_CACHE or ~/.cache/tracelab, then
#                        corpus-quarkus); never inside the repository
#   FRONTEND_PORT, BACKEND_PORT   default 18411, 18412
#   CASES                which cases to record (default: all four)
#   VUS, WARMUP, BLOCKING_DURATION, REACTIVE_DURATION, LOW_RATE, LOW_VUS,
#   LOW_DURATION         the load (defaults below)
#
# What every recording script does alike (the scratch dir, process tracking,
# the JDK and the agent, the load, the window, the summary) is in lib.sh.
set -euo pipefail
# shellcheck source=SCRIPTDIR/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

QUARKUS_VERSION=3.31.4
# The create goal reads the extension catalog from
# io.quarkus:quarkus-bom-quarkus-platform-descriptor, which the Maven mirrors
# of the lab's machines hold for 3.31.1 but not for 3.31.4. The catalog only
# names the extensions (the same in both); the generated pom is then pinned
# to QUARKUS_VERSION below, and that is what the build uses.
QUARKUS_CATALOG_VERSION=3.31.1
# The create goal refuses Maven < 3.9 (Debian 12 ships 3.8.7).
MAVEN_VERSION=3.9.11

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

frontend_port=${FRONTEND_PORT:-18411}
backend_port=${BACKEND_PORT:-18412}
target=http://127.0.0.1:$frontend_port
port_property=quarkus.http.port
ready_seconds=120

use_work QUARKUS_CORPUS_WORK corpus-quarkus dl
need_hint="Debian: apt-get install -y curl jq maven; Go from https://go.dev/dl/"
need curl jq go mvn
find_jdk

# --- tools: Maven 3.9, the Java agent, tracelab ---------------------------
mvn39=$work/dl/apache-maven-$MAVEN_VERSION/bin/mvn
if [ ! -x "$mvn39" ]; then
  say "fetching Maven $MAVEN_VERSION from Maven Central"
  mvn_fetch "org.apache.maven:apache-maven:$MAVEN_VERSION:tar.gz:bin"
  tar -xzf "$work/dl/apache-maven-$MAVEN_VERSION-bin.tar.gz" -C "$work/dl"
fi
find_agent
build_tracelab

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
# load_case OUT DURATION: closed, VUS clients back to back; open, LOW_RATE
# requests a second from up to LOW_VUS clients.
load_case() {
  local args=(ENDPOINT="$endpoint" DURATION="$2")
  if [ "$mode" = closed ]; then args+=(VUS="$VUS"); else args+=(VUS="$LOW_VUS" RATE="$LOW_RATE"); fi
  load "$1" "${args[@]}"
}

record() { # ENDPOINT MODE DURATION
  local endpoint=$1 mode=$2
  record_pair quarkus "$endpoint" "$3" "$3 on /$endpoint ($mode)" ""
  # What the load measured and what the traces hold must agree: one trace
  # per request, three spans each (frontend server, client, backend server).
  say_warmup
  summarise 3500 "3.5 MB; record a shorter run (the *_DURATION variables)"
  [ "$traces" = "$reqs" ] || say "$case: WARNING: $reqs requests but $traces traces in the window"
  [ "$spans" = $((3 * traces)) ] || say "$case: WARNING: $spans spans for $traces traces (expected 3 each)"
}

record_all 'case\trequests\treq/s\tp50_ms\tp95_ms\tfailed\ttraces\tspans\tbytes' "
  quarkus-blocking-20vus  blocking  closed  $BLOCKING_DURATION
  quarkus-reactive-20vus  reactive  closed  $REACTIVE_DURATION
  quarkus-reactive-low    reactive  open    $LOW_DURATION
  quarkus-blocking-low    blocking  open    $LOW_DURATION"

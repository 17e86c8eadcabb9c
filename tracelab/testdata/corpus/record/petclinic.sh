#!/usr/bin/env bash
# Records a corpus case from a running Spring PetClinic (commit edf4db28)
# started with the OpenTelemetry Java agent and its logging-otlp exporter.
#
#   petclinic.sh URL AGENT_LOG CASE_DIR
#
# URL        where PetClinic answers, e.g. http://127.0.0.1:18980
# AGENT_LOG  the file that receives PetClinic's stdout and stderr (the agent's
#            logging-otlp exporter writes one ResourceSpans JSON object a line)
# CASE_DIR   where traces.json is written
#
# It sends the fixed request sequence below with curl, waits until the agent
# has exported the trace of the last request, then turns every span line of
# AGENT_LOG (the startup traces too) into CASE_DIR/traces.json, plain OTLP
# JSON {"resourceSpans":[...]} without machine paths. How to start PetClinic:
# ../README.md, section "Spring PetClinic (JPA/Hibernate)". Start it fresh for
# each recording: the sequence adds a pet and a visit.
#
# Needs curl, and tracelab (for tracelab convert).
set -euo pipefail

die() { echo "petclinic.sh: $*" >&2; exit 1; }
log() { echo "petclinic.sh: $*" >&2; }

[ $# -eq 3 ] || die "usage: petclinic.sh URL AGENT_LOG CASE_DIR"
url=${1%/}
agent_log=$2
case_dir=$3
command -v curl >/dev/null || die "curl is missing: apt-get install -y curl"
# tracelab: $TRACELAB, else the lab's build (.state/bin/tracelab), else PATH.
root=$(cd "$(dirname "$0")/../../../.." && pwd)
tracelab=${TRACELAB:-}
[ -n "$tracelab" ] || { [ -x "$root/.state/bin/tracelab" ] && tracelab=$root/.state/bin/tracelab; } || true
[ -n "$tracelab" ] || tracelab=$(command -v tracelab) ||
  die "no tracelab binary: run 'make build' at the repository root, or set TRACELAB=/path/to/tracelab"
[ -r "$agent_log" ] || die "cannot read agent log $agent_log: pass the file PetClinic's stdout and stderr go to"
mkdir -p "$case_dir" || die "cannot create $case_dir"

# A unique marker in the last request's query string: once a span line with it
# is in the log, every earlier trace has been exported too (the requests run
# one after another and the batch span processor exports in order).
marker="recording-done-$(date +%s)-$$"

n=0
# req METHOD PATH [curl form args...]: one request, fails on a status >= 400.
req() {
  local method=$1 path=$2
  shift 2
  local code
  code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 30 -X "$method" "$@" "$url$path") ||
    die "$method $path failed: is PetClinic running at $url? (start it as tracelab/testdata/corpus/README.md says)"
  [ "$code" -lt 400 ] || die "$method $path answered HTTP $code: expected a fresh PetClinic edf4db28 with its H2 sample data"
  n=$((n + 1))
  log "$(printf '%2d' "$n") $method $path -> $code"
}

# The sequence. Owner, pet and type ids are those of PetClinic's H2 sample data
# (src/main/resources/db/h2/data.sql): owners 1-10; owner 6 has pets 7 and 8.
req GET /                                    # welcome page; also checks that PetClinic answers
req GET /owners/find
req GET '/owners?lastName='                  # all owners, page 1 (owners 1-5)
req GET '/owners?lastName=&page=2'           # page 2 (owners 6-10)
req GET '/owners?lastName=Davis'             # two owners with that name
for id in 1 2 3 6 10; do
  req GET "/owners/$id"                      # owner details, pets and their visits
done
req GET /vets.html                           # page 1 (5 vets): from the database
req GET '/vets.html?page=2'                  # page 2 (1 vet): from the database
req GET /vets.html                           # page 1 again: from the "vets" cache
req GET /vets                                # every vet as JSON: findAll(), its own cache entry
req GET /owners/6/pets/new                   # new-pet form
req GET /owners/6/pets/7/edit                # edit-pet form
req GET /owners/6/pets/7/visits/new          # new-visit form
req POST /owners/6/pets/7/visits/new --data-urlencode "date=2024-05-01" --data-urlencode "description=corpus check-up"
req GET /owners/6
req POST /owners/10/pets/new --data-urlencode "name=Corpus $(date +%s)" --data-urlencode "birthDate=2020-02-02" --data-urlencode "type=hamster"
req GET /owners/10
req GET "/?$marker"                          # end marker, no database access

log "waiting for the agent to export the last trace (up to 60 s)"
for _ in $(seq 120); do
  grep -q "$marker" "$agent_log" && break
  sleep 0.5
done
grep -q "$marker" "$agent_log" ||
  die "the last request's trace is not in $agent_log after 60 s: was PetClinic started with -Dotel.traces.exporter=logging-otlp and its output sent to that file?"

log "converting $agent_log to $case_dir/traces.json"
# The agent prefixes each span line with its logger's header; tracelab
# convert reads the bare ResourceSpans objects that follow it.
spans=$(mktemp)
trap 'rm -f "$spans"' EXIT
sed -n 's/^.*OtlpJsonLoggingSpanExporter - //p' "$agent_log" >"$spans"
[ -s "$spans" ] || die "no OtlpJsonLoggingSpanExporter lines in $agent_log: start PetClinic with -Dotel.traces.exporter=logging-otlp"
"$tracelab" convert --file "$spans" --to otlp --redact --out "$case_dir/traces.json" ||
  die "tracelab convert failed on the span lines of $agent_log"
log "wrote $case_dir/traces.json ($(grep -o '"spanId"' "$case_dir/traces.json" | wc -l) spans)"

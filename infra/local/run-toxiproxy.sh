#!/usr/bin/env bash
# Runs toxiproxy, the lab's network hops, each with a fixed latency added to
# every round trip (on loopback one takes about 0.1 ms, which hides what a
# round trip costs anywhere else):
# - postgres: 127.0.0.1:POSTGRES_PROXY_PORT -> 127.0.0.1:POSTGRES_PORT, DB_LATENCY_MS;
# - kafka: 127.0.0.1:KAFKA_PROXY_PORT -> 127.0.0.1:KAFKA_PROXIED_PORT (the
#   broker's PROXIED listener, which advertises the proxy), KAFKA_LATENCY_MS.
# Each proxy is switched on only once its latency is in place, and the
# readiness probe waits for exactly that, on both.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
state=${LAB_STATE:-$root/.state}
if [ -z "${TOXIPROXY_BIN:-}" ] && [ -f "$state/tools.env" ]; then . "$state/tools.env"; fi
: "${TOXIPROXY_BIN:?TOXIPROXY_BIN is not set; run infra/local/tools.sh}"
# A scenario sets DB_LATENCY_MS and KAFKA_LATENCY_MS through .state/env/toxiproxy.env.
if [ -f "$state/env/toxiproxy.env" ]; then set -a; . "$state/env/toxiproxy.env"; set +a; fi
milliseconds() { # name value
  [[ $2 =~ ^[0-9]+$ ]] && [ "$2" -le 10000 ] ||
    { echo "run-toxiproxy: $1 must be a whole number of milliseconds from 0 to 10000, got '$2'" >&2; exit 1; }
}
# 2 ms: a round trip to a database in another availability zone of the same
# region, and about what one of the case's 7 visits took when the database
# was not loaded (7 visits, 15.2 ms in its single-request strace).
db_latency=${DB_LATENCY_MS:-2}
milliseconds DB_LATENCY_MS "$db_latency"
# 20 ms: what kafka-batching sets, so `make up` with ingest behaves like the
# scenario. The small-batch producer's capacity (one event per round trip,
# one in flight) is then about 1000 / (20 + the CPU's few ms) events/s, and
# the machine's load moves it little; see scenarios/kafka-batching/README.md.
kafka_latency=${KAFKA_LATENCY_MS:-20}
milliseconds KAFKA_LATENCY_MS "$kafka_latency"

api=http://127.0.0.1:$TOXIPROXY_PORT
# At debug (its default) it logs every API call, the readiness probe's too.
LOG_LEVEL=${LOG_LEVEL:-info} "$TOXIPROXY_BIN" -host 127.0.0.1 -port "$TOXIPROXY_PORT" &
server=$!
trap 'kill -TERM $server 2>/dev/null' TERM INT
until curl -sf "$api/version" >/dev/null; do
  kill -0 $server 2>/dev/null || { echo "run-toxiproxy: toxiproxy exited while starting" >&2; exit 1; }
  sleep 0.1
done
proxy() { # name listen-port upstream-port latency-ms
  curl -sf -X POST "$api/proxies" -d "{\"name\":\"$1\",\"listen\":\"127.0.0.1:$2\",\"upstream\":\"127.0.0.1:$3\",\"enabled\":false}" >/dev/null
  if [ "$4" -gt 0 ]; then
    # On the answers only, so a round trip gains the latency once.
    curl -sf -X POST "$api/proxies/$1/toxics" \
      -d "{\"name\":\"network-hop\",\"type\":\"latency\",\"stream\":\"downstream\",\"attributes\":{\"latency\":$4,\"jitter\":0}}" >/dev/null
  fi
  curl -sf -X POST "$api/proxies/$1" -d '{"enabled":true}' >/dev/null
  echo "run-toxiproxy: $1 127.0.0.1:$2 -> 127.0.0.1:$3 with $4 ms per round trip"
}
proxy postgres "$POSTGRES_PROXY_PORT" "$POSTGRES_PORT" "$db_latency"
proxy kafka "$KAFKA_PROXY_PORT" "$KAFKA_PROXIED_PORT" "$kafka_latency"
wait $server

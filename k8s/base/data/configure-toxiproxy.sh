#!/bin/sh
# Configures the toxiproxy container of the same pod (k8s/base/data/toxiproxy.yaml):
# the same proxies and latency toxics as infra/local/run-toxiproxy.sh. It stays
# up and configures again if toxiproxy restarts and forgets its proxies.
set -eu
db_latency=${DB_LATENCY_MS:-2}
kafka_latency=${KAFKA_LATENCY_MS:-20}
for v in "DB_LATENCY_MS=$db_latency" "KAFKA_LATENCY_MS=$kafka_latency"; do
  case ${v#*=} in '' | *[!0-9]*) echo "configure-toxiproxy: ${v%%=*} must be a whole number of milliseconds, got '${v#*=}'" >&2; exit 1 ;; esac
done
api=http://127.0.0.1:18474
proxy() { # name listen upstream latency-ms
  curl -sf -X DELETE "$api/proxies/$1" >/dev/null 2>&1 || true
  curl -sf -X POST "$api/proxies" -d "{\"name\":\"$1\",\"listen\":\"$2\",\"upstream\":\"$3\",\"enabled\":true}" >/dev/null
  # On the answers only, so a round trip gains the latency once. A latency of
  # 0 still creates the toxic, which the readiness probes wait for.
  curl -sf -X POST "$api/proxies/$1/toxics" \
    -d "{\"name\":\"network-hop\",\"type\":\"latency\",\"stream\":\"downstream\",\"attributes\":{\"latency\":$4,\"jitter\":0}}" >/dev/null
  echo "configure-toxiproxy: $1 $2 -> $3 with $4 ms per round trip"
}
configure() {
  proxy postgres 0.0.0.0:15433 postgres:15432 "$db_latency" &&
    proxy kafka 0.0.0.0:19095 kafka:19094 "$kafka_latency"
}
while :; do
  if curl -sf "$api/version" >/dev/null && ! { curl -sf "$api/proxies/postgres/toxics/network-hop" >/dev/null &&
    curl -sf "$api/proxies/kafka/toxics/network-hop" >/dev/null; }; then
    configure || echo "configure-toxiproxy: toxiproxy refused the configuration; retrying" >&2
  fi
  sleep 2
done

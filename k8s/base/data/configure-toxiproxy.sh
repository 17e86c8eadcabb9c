#!/bin/sh
# Configures the toxiproxy container of the same pod (k8s/base/data/toxiproxy.yaml):
# the same proxy and latency toxic as infra/local/run-toxiproxy.sh. It stays
# up and configures again if toxiproxy restarts and forgets its proxies.
set -eu
latency=${DB_LATENCY_MS:-2}
case $latency in '' | *[!0-9]*) echo "configure-toxiproxy: DB_LATENCY_MS must be a whole number of milliseconds, got '$latency'" >&2; exit 1 ;; esac
api=http://127.0.0.1:18474
configure() {
  curl -sf -X DELETE "$api/proxies/postgres" >/dev/null 2>&1 || true
  curl -sf -X POST "$api/proxies" -d '{"name":"postgres","listen":"0.0.0.0:15433","upstream":"postgres:15432","enabled":true}' >/dev/null
  # On the answers only, so a round trip gains the latency once. A latency of
  # 0 still creates the toxic, which the readiness probe waits for.
  curl -sf -X POST "$api/proxies/postgres/toxics" \
    -d "{\"name\":\"network-hop\",\"type\":\"latency\",\"stream\":\"downstream\",\"attributes\":{\"latency\":$latency,\"jitter\":0}}" >/dev/null
  echo "configure-toxiproxy: 0.0.0.0:15433 -> postgres:15432 with ${latency} ms per round trip"
}
while :; do
  if curl -sf "$api/version" >/dev/null && ! curl -sf "$api/proxies/postgres/toxics/network-hop" >/dev/null; then
    configure || echo "configure-toxiproxy: toxiproxy refused the configuration; retrying" >&2
  fi
  sleep 2
done

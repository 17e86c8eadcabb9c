#!/usr/bin/env bash
# Runs toxiproxy for the local runtime, where every network hop is on
# loopback, and configures its hops with the configurer both runtimes share
# (k8s/base/data/configure-toxiproxy.sh: the proxies, their latencies and
# the readiness rule). The process exits, and the start fails, when the
# configurer refuses its settings.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
state=${LAB_STATE:-$root/.state}
if [ -z "${TOXIPROXY_BIN:-}" ] && [ -f "$state/tools.env" ]; then . "$state/tools.env"; fi
: "${TOXIPROXY_BIN:?TOXIPROXY_BIN is not set; run infra/local/tools.sh}"
: "${TOXIPROXY_PORT:?TOXIPROXY_PORT is not set; tracelab passes infra/local/ports.env}"
# A scenario sets DB_LATENCY_MS and KAFKA_LATENCY_MS through .state/env/toxiproxy.env.
if [ -f "$state/env/toxiproxy.env" ]; then set -a; . "$state/env/toxiproxy.env"; set +a; fi
export TOXIPROXY_LISTEN_HOST=127.0.0.1 POSTGRES_HOST=127.0.0.1 KAFKA_HOST=127.0.0.1

# At debug (its default) it logs every API call, the readiness probe's too.
LOG_LEVEL=${LOG_LEVEL:-info} "$TOXIPROXY_BIN" -host 127.0.0.1 -port "$TOXIPROXY_PORT" &
server=$!
trap 'kill -TERM $server 2>/dev/null' TERM INT
until curl -sf "http://127.0.0.1:$TOXIPROXY_PORT/version" >/dev/null; do
  kill -0 $server 2>/dev/null || { echo "run-toxiproxy: toxiproxy exited while starting" >&2; exit 1; }
  sleep 0.1
done
"$root/k8s/base/data/configure-toxiproxy.sh" apply || { kill -TERM $server; exit 1; }
wait $server

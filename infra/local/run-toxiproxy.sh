#!/usr/bin/env bash
# Runs toxiproxy between the services and the lab's PostgreSQL:
# 127.0.0.1:POSTGRES_PROXY_PORT -> 127.0.0.1:POSTGRES_PORT, with DB_LATENCY_MS
# added to every round trip. On loopback a round trip takes about 0.1 ms, which
# hides what chattiness costs anywhere else. The proxy is switched on only once
# its latency is in place, and the readiness probe waits for exactly that.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
state=${LAB_STATE:-$root/.state}
if [ -z "${TOXIPROXY_BIN:-}" ] && [ -f "$state/tools.env" ]; then . "$state/tools.env"; fi
: "${TOXIPROXY_BIN:?TOXIPROXY_BIN is not set; run infra/local/tools.sh}"
# A scenario sets DB_LATENCY_MS through .state/env/toxiproxy.env.
if [ -f "$state/env/toxiproxy.env" ]; then set -a; . "$state/env/toxiproxy.env"; set +a; fi
# 2 ms: a round trip to a database in another availability zone of the same
# region, and about what one of the case's 7 visits took when the database
# was not loaded (7 visits, 15.2 ms in its single-request strace).
latency=${DB_LATENCY_MS:-2}
[[ $latency =~ ^[0-9]+$ ]] && [ "$latency" -le 10000 ] ||
  { echo "run-toxiproxy: DB_LATENCY_MS must be a whole number of milliseconds from 0 to 10000, got '$latency'" >&2; exit 1; }

api=http://127.0.0.1:$TOXIPROXY_PORT
# At debug (its default) it logs every API call, the readiness probe's too.
LOG_LEVEL=${LOG_LEVEL:-info} "$TOXIPROXY_BIN" -host 127.0.0.1 -port "$TOXIPROXY_PORT" &
server=$!
trap 'kill -TERM $server 2>/dev/null' TERM INT
until curl -sf "$api/version" >/dev/null; do
  kill -0 $server 2>/dev/null || { echo "run-toxiproxy: toxiproxy exited while starting" >&2; exit 1; }
  sleep 0.1
done
curl -sf -X POST "$api/proxies" -d "{\"name\":\"postgres\",\"listen\":\"127.0.0.1:$POSTGRES_PROXY_PORT\",\"upstream\":\"127.0.0.1:$POSTGRES_PORT\",\"enabled\":false}" >/dev/null
if [ "$latency" -gt 0 ]; then
  # On the answers only, so a round trip gains the latency once.
  curl -sf -X POST "$api/proxies/postgres/toxics" \
    -d "{\"name\":\"network-hop\",\"type\":\"latency\",\"stream\":\"downstream\",\"attributes\":{\"latency\":$latency,\"jitter\":0}}" >/dev/null
fi
curl -sf -X POST "$api/proxies/postgres" -d '{"enabled":true}' >/dev/null
echo "run-toxiproxy: 127.0.0.1:$POSTGRES_PROXY_PORT -> 127.0.0.1:$POSTGRES_PORT with ${latency} ms per round trip"
wait $server

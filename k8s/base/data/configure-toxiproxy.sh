#!/bin/sh
# The lab's network hops, for both runtimes: the local one runs this beside
# its toxiproxy process (infra/local/run-toxiproxy.sh), Kubernetes in a second
# container of the toxiproxy pod (k8s/base/data/toxiproxy.yaml), whose image
# has only busybox sh and curl. Each hop adds a fixed latency to every round
# trip, which on loopback or inside a cluster would cost a fraction of a
# millisecond and hide what chattiness costs anywhere else:
# - postgres: TOXIPROXY_LISTEN_HOST:POSTGRES_PROXY_PORT -> POSTGRES_HOST:POSTGRES_PORT,
#   DB_LATENCY_MS;
# - kafka: TOXIPROXY_LISTEN_HOST:KAFKA_PROXY_PORT -> KAFKA_HOST:KAFKA_PROXIED_PORT
#   (the broker's PROXIED listener, which advertises the proxy), KAFKA_LATENCY_MS.
# The ports come from infra/local/ports.env, the hosts from the runtime;
# toxiproxy's API is on 127.0.0.1:TOXIPROXY_PORT in both. The latencies'
# range and defaults are declared in infra/components.yaml, and make generate
# writes them beside this script (toxiproxy-settings.properties).
#
# A proxy is enabled only once its latency toxic is in place, and the toxic is
# added at 0 ms too: "enabled with its network-hop toxic" is then the one
# readiness rule of both runtimes for every latency (`check`), and a
# toxiproxy that restarted and forgot its proxies fails it.
#
# configure-toxiproxy.sh apply: configure both hops once, toxiproxy answering
# (the local runtime starts toxiproxy and then runs this).
# configure-toxiproxy.sh watch: apply whenever toxiproxy answers without both
# hops in place, and never exit (Kubernetes: the container outlives a
# restart of toxiproxy's, which forgets its proxies).
# configure-toxiproxy.sh check: succeed only if both hops are in place (the
# readiness probe of both runtimes; it needs TOXIPROXY_PORT only).
set -eu
me=configure-toxiproxy

fail() { echo "$me: $*" >&2; exit 1; }

# A port or host the runtime must pass; no default, so that a runtime which
# forgets one fails here instead of proxying to the wrong place.
need() { # variable...
  for v; do
    eval "val=\${$v-}"
    [ -n "$val" ] || fail "$v is not set (infra/local/ports.env and the runtime set it)"
  done
}

declared="$(dirname "$0")/toxiproxy-settings.properties"

declaration() { # setting part
  d=$(sed -n "s/^$1\.$2=//p" "$declared" 2>/dev/null)
  [ -n "$d" ] || fail "$declared declares no $2 for $1; run make generate"
  echo "$d"
}

# Whole milliseconds in the declared range, digits only and no leading zero
# (JSON has none, and the shell would read 010 as octal). Unset means the
# declared default; set and empty is a mistake.
milliseconds() { # variable
  min=$(declaration "$1" min)
  max=$(declaration "$1" max)
  eval "val=\${$1-\$(declaration $1 default)}"
  case $val in
    '' | *[!0-9]* | 0?*) ;;
    # A number longer than the maximum is out of range, and may be too long
    # for test's arithmetic.
    *) if [ ${#val} -le ${#max} ] && [ "$val" -ge "$min" ] && [ "$val" -le "$max" ]; then
      echo "$val"
      return
    fi ;;
  esac
  fail "$1 must be a whole number of milliseconds from $min to $max, got '$val'"
}

settings() {
  need TOXIPROXY_PORT TOXIPROXY_LISTEN_HOST POSTGRES_HOST POSTGRES_PORT POSTGRES_PROXY_PORT KAFKA_HOST KAFKA_PROXIED_PORT KAFKA_PROXY_PORT
  db_latency=$(milliseconds DB_LATENCY_MS)
  kafka_latency=$(milliseconds KAFKA_LATENCY_MS)
}

api() { # method path [body]
  url=http://127.0.0.1:$TOXIPROXY_PORT$2
  if [ $# -gt 2 ]; then
    curl -sf -m 5 -X "$1" "$url" -d "$3"
  else
    curl -sf -m 5 -X "$1" "$url"
  fi
}

# Replaces the proxy, so that a half-finished earlier attempt leaves nothing behind.
hop() { # name listen upstream latency-ms
  api DELETE "/proxies/$1" >/dev/null 2>&1 || true
  # The toxic is on the answers only, so a round trip gains the latency once.
  api POST /proxies "{\"name\":\"$1\",\"listen\":\"$2\",\"upstream\":\"$3\",\"enabled\":false}" >/dev/null &&
    api POST "/proxies/$1/toxics" "{\"name\":\"network-hop\",\"type\":\"latency\",\"stream\":\"downstream\",\"attributes\":{\"latency\":$4,\"jitter\":0}}" >/dev/null &&
    api POST "/proxies/$1" '{"enabled":true}' >/dev/null ||
    { echo "$me: toxiproxy on 127.0.0.1:$TOXIPROXY_PORT refused the $1 hop ($2 -> $3)" >&2; return 1; }
  echo "$me: $1 $2 -> $3 with $4 ms per round trip"
}

apply() {
  hop postgres "$TOXIPROXY_LISTEN_HOST:$POSTGRES_PROXY_PORT" "$POSTGRES_HOST:$POSTGRES_PORT" "$db_latency" &&
    hop kafka "$TOXIPROXY_LISTEN_HOST:$KAFKA_PROXY_PORT" "$KAFKA_HOST:$KAFKA_PROXIED_PORT" "$kafka_latency"
}

in_place() {
  for name in postgres kafka; do
    proxy=$(api GET "/proxies/$name") || return 1
    case $proxy in *'"enabled":true'*) ;; *) return 1 ;; esac
    case $proxy in *'"name":"network-hop"'*) ;; *) return 1 ;; esac
  done
}

case ${1-} in
  apply)
    settings
    apply
    ;;
  watch)
    settings
    while :; do
      if api GET /version >/dev/null && ! in_place; then
        apply || echo "$me: retrying" >&2
      fi
      sleep 1
    done
    ;;
  check)
    need TOXIPROXY_PORT
    in_place
    ;;
  *) fail "usage: $me apply|watch|check, got '${1-}'" ;;
esac

#!/usr/bin/env bash
# The test harness's own Docker daemon, for make test-kind on a machine where
# no container engine answers (infra/kind-test/README.md). As root:
#
#   dockerd.sh start   install Debian's docker.io if dockerd is missing, start
#                      a dockerd of the lab's own, wait until it answers
#   dockerd.sh stop    stop it, its containerd and its bridge
#   dockerd.sh host    print its DOCKER_HOST
#
# It shares nothing with another daemon on the machine: its own socket, data
# root, exec root (and so its own containerd), config file, pid file and
# default bridge, tlab0, which it is given rather than left to make. It never
# runs with --bridge none: Docker 20.10 then deletes any link named docker0,
# another daemon's too (dockerd_test.sh shows that it leaves docker0 alone).
# Its default runtime drops the capability these machines lack
# (runc-without-sys-resource). --iptables=false: it writes no firewall rules,
# so it cannot disturb the machine's; the cluster is reached through port
# mappings on 127.0.0.1, which Docker's userland proxy serves.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
. "$root/infra/local/versions.env"
cache=${TRACELAB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/tracelab}
run=${TRACELAB_DOCKERD_RUN:-/run/tracelab-docker}
# Outside the tool cache, which .ci/run hands back to its unprivileged user:
# image layers keep their own owners.
data=${TRACELAB_DOCKERD_DATA:-/var/lib/tracelab-docker}
sock=$run/docker.sock
bridge=${TRACELAB_DOCKERD_BRIDGE:-tlab0}
# A /24 of the private range that neither Docker's default pools
# (172.17-31.0.0/16, 192.168.0.0/16 in /20s) nor kind's network take.
bridge_cidr=${TRACELAB_DOCKERD_CIDR:-10.213.0.1/24}
log=$cache/logs/dockerd.log

say() { printf '\033[1m==>\033[0m %s\n' "$*" >&2; }
die() { printf 'dockerd.sh: %s\n' "$*" >&2; exit 1; }

answers() { docker -H "unix://$sock" version >/dev/null 2>&1; }

start() {
  [ "$(id -u)" = 0 ] || die "make test-kind starts a Docker daemon of its own and needs root; or point DOCKER_HOST at a running Docker"
  if answers; then say "the lab's dockerd already answers at $sock"; return; fi
  local missing=() c
  for c in dockerd jq mmdebstrap; do command -v $c >/dev/null || missing+=("$c"); done
  if [ ${#missing[@]} -gt 0 ]; then
    say "installing Debian's docker.io, jq and mmdebstrap (test-only; missing: ${missing[*]})"
    command -v apt-get >/dev/null || die "${missing[*]} missing and no apt-get: install Docker, jq and mmdebstrap"
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends docker.io jq mmdebstrap >>"$log" 2>&1 ||
      die "apt-get install docker.io jq mmdebstrap failed; log: $log"
  fi
  mkdir -p "$run" "$data" "$(dirname "$log")"
  if ! ip link show "$bridge" >/dev/null 2>&1; then
    ip link add "$bridge" type bridge
    ip addr add "$bridge_cidr" dev "$bridge"
  fi
  ip link set "$bridge" up
  echo '{}' >"$run/daemon.json"
  say "starting the lab's dockerd: $sock, data in $data, bridge $bridge; log: $log"
  setsid dockerd --host "unix://$sock" --config-file "$run/daemon.json" --data-root "$data" \
    --exec-root "$run/exec" --pidfile "$run/dockerd.pid" --bridge "$bridge" --iptables=false --ip-masq=false \
    --add-runtime "tlab-runc=$here/runc-without-sys-resource" --default-runtime tlab-runc \
    >>"$log" 2>&1 </dev/null &
  local pid=$! i
  for i in $(seq 60); do
    answers && { say "dockerd ready (pid $pid)"; return; }
    kill -0 "$pid" 2>/dev/null || { tail -n 15 "$log" >&2; die "dockerd exited while starting; log: $log"; }
    sleep 1
  done
  die "dockerd did not answer within 60 s; log: $log"
}

stop() {
  local pid
  if [ -f "$run/dockerd.pid" ]; then
    pid=$(cat "$run/dockerd.pid")
    if kill -0 "$pid" 2>/dev/null; then
      say "stopping the lab's dockerd (pid $pid)"
      kill "$pid"
      # dockerd stops its own containerd and its containers' shims.
      for _ in $(seq 60); do kill -0 "$pid" 2>/dev/null || break; sleep 1; done
      kill -0 "$pid" 2>/dev/null && { kill -9 "$pid"; die "dockerd did not stop within 60 s; killed"; }
    fi
  fi
  if ip link show "$bridge" >/dev/null 2>&1; then ip link delete "$bridge"; fi
  # dockerd leaves its default network namespace mounted in its exec root.
  awk -v run="$run/" 'index($2, run) == 1 {print $2}' /proc/mounts | sort -r | while read -r m; do umount "$m"; done
  rm -rf "$run"
}

case ${1:-} in
  start) start ;;
  stop) stop ;;
  host) echo "unix://$sock" ;;
  *) die "usage: dockerd.sh start|stop|host" ;;
esac

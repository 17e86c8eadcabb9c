#!/usr/bin/env bash
# The lab's dockerd (dockerd.sh) leaves another daemon's default bridge,
# docker0, alone: started and stopped beside it, docker0 is still there with
# its address. Docker 20.10 started with --bridge none deletes any link named
# docker0, which is why dockerd.sh names a bridge of its own. Where the
# machine has no docker0, a bridge of that name stands in for another
# daemon's, and is removed afterwards. As root, like dockerd.sh.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
fail() { echo "dockerd_test: FAIL: $*" >&2; exit 1; }

made=
if ! ip link show docker0 >/dev/null 2>&1; then
  ip link add docker0 type bridge
  ip addr add 172.17.0.1/16 dev docker0
  made=1
fi
trap '[ -z "$made" ] || ip link delete docker0 2>/dev/null || true' EXIT
before=$(ip -o addr show dev docker0 | awk '{print $3, $4}' | sort)

# A daemon of its own, so that a running one of the lab is not disturbed.
tmp=$(mktemp -d)
export TRACELAB_DOCKERD_RUN=$tmp/run TRACELAB_DOCKERD_DATA=$tmp/data TRACELAB_DOCKERD_BRIDGE=tlabtest0 TRACELAB_DOCKERD_CIDR=10.213.9.1/24
"$here/dockerd.sh" start
"$here/dockerd.sh" stop
rm -rf "$tmp"

ip link show docker0 >/dev/null 2>&1 || fail "docker0 is gone"
after=$(ip -o addr show dev docker0 | awk '{print $3, $4}' | sort)
[ "$before" = "$after" ] || fail "docker0's addresses changed: '$before' -> '$after'"
! ip link show tlabtest0 >/dev/null 2>&1 || fail "the lab's bridge tlabtest0 is left behind"
echo "dockerd_test: ok (docker0 untouched: $after; the lab's bridge removed)"

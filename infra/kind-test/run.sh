#!/usr/bin/env bash
# make test-kind: the lab on a real kind cluster, every part built on this
# machine (infra/kind-test/README.md). Where no container engine answers, as
# root, it provides its own (dockerd.sh) after checking that it leaves
# another daemon's bridge alone (dockerd_test.sh), and stops it at the end.
# Then: the kind tools, the node image, the workloads' images, and
# TestKind (tracelab/e2e/kind_test.go), which runs the user's make targets.
# Nothing of the lab's is left running: the cluster, the daemon and its
# bridge go; the images stay in the daemon's data root for the next run.
# TRACELAB_KIND_KEEP=1 keeps the cluster, for a look at what failed, where
# the daemon is not the harness's own.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
cd "$root"
. "$here/lib.sh"
start=$SECONDS
stage() { say "test-kind: $1 (at $((SECONDS - start)) s)"; }

own_daemon=
if ! "$DOCKER" version >/dev/null 2>&1; then
  [ "$(id -u)" = 0 ] || die "no container engine answers; make test-kind then starts one of its own, which needs root (or start Docker and run it again)"
  stage "the lab's own dockerd"
  "$here/dockerd_test.sh"
  "$here/dockerd.sh" start
  own_daemon=1
  DOCKER_HOST=$("$here/dockerd.sh" host)
  export DOCKER_HOST
fi
cleanup() {
  local rc=$?
  if [ -z "${TRACELAB_KIND_KEEP:-}" ] && [ -n "${KIND_BIN:-}" ] && "$KIND_BIN" get clusters 2>/dev/null | grep -qx tracelab; then
    "$KIND_BIN" delete cluster --name tracelab || rc=1
  fi
  if [ -n "$own_daemon" ]; then "$here/dockerd.sh" stop || rc=1; fi
  say "test-kind: $([ $rc = 0 ] && echo passed || echo FAILED) in $((SECONDS - start)) s"
  exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

stage "kind, Kubernetes and the node's programs (infra/local/tools.sh kind)"
infra/local/tools.sh kind
. .state/tools-kind.env
# The kind and kubectl the user's make targets call.
export PATH=$KUBERNETES_BIN_DIR:$(dirname "$KIND_BIN"):$PATH

stage "the kind node image"
node=$("$here/node-image.sh")

stage "the workloads' images"
make_vars=$("$here/images.sh")

stage "TestKind: make kind-up, make RUNTIME=kind scenario-nplus1 and scenario-eventloop (smoke), make kind-down"
(cd tracelab && TRACELAB_BIN="$root/.state/bin/tracelab" TRACELAB_KIND_NODE_IMAGE=$node TRACELAB_KIND_MAKE_VARS=$make_vars \
  e2e/run.sh "$root/.state/logs/test-kind.log" -tags e2e,kind -run '^TestKind$' -count=1 -timeout 60m ./e2e)

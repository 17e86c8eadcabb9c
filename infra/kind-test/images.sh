#!/usr/bin/env bash
# Every image the test's overlay (infra/kind-test/overlay) deploys, built on
# this machine with no image registry, into the Docker that DOCKER_HOST
# names (else the lab's own dockerd, dockerd.sh host):
#
#   1. bases.sh        the local base images (Java build and runtime, Go, slim)
#   2. third-party.sh  tracelab-kind/<component>:<version>, from the programs
#                      of make tools
#   3. make images     tracelab/<service>:dev and tracelab/tracelab:dev, on
#                      the bases of step 1 (the recipes' build arguments)
#   4. the overlay renders, and every image it names is there and is either
#      the lab's own or a tracelab-kind/ build
#
# Prints make images' variables for these bases on stdout (for make kind-up
# in the test, infra/kind-test/run.sh); everything else goes to stderr.
# Each step reports its time; a second run only checks what is unchanged.
# DOCKER_BUILD_FLAGS goes to every docker build (--no-cache: a cold build).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
. "$here/lib.sh"
DOCKER_HOST=${DOCKER_HOST:-$("$here/dockerd.sh" host)}
export DOCKER_HOST
"$DOCKER" version >/dev/null 2>&1 || die "no Docker answers at $DOCKER_HOST; start the lab's (infra/kind-test/dockerd.sh start) or set DOCKER_HOST"
[ -f "$root/.state/tools.env" ] || { say "make tools (the programs of the third-party images)"; make -C "$root" --no-print-directory tools; }

step() { # NAME COMMAND...: run a step, report its time
  local start=$SECONDS name=$1
  shift
  say "images: $name"
  "$@"
  say "images: $name done in $((SECONDS - start)) s"
}

bases=$(mktemp)
trap 'rm -f "$bases"' EXIT
step "local base images (bases.sh)" eval '"$here/bases.sh" >"$bases"'
cat "$bases" >&2
export JAVA_RUNTIME_IMAGE
JAVA_RUNTIME_IMAGE=$(sed -n 's/^JAVA_RUNTIME_IMAGE=//p' "$bases")
step "third-party images (third-party.sh)" eval '"$here/third-party.sh" >/dev/null'
# shellcheck disable=SC2046 # one make variable per line of bases.sh
step "the lab's images (make images)" make -C "$root" --no-print-directory images $(cat "$bases") >&2

say "images: checking the test overlay's images"
"$root/k8s/gen-secrets.sh" >/dev/null
manifests=$(kubectl kustomize --load-restrictor LoadRestrictionsNone "$here/overlay")
missing=0
for image in $(k8s_images <<<"$manifests"); do
  case $image in
    tracelab/* | tracelab-kind/*) ;;
    *) say "$image: a third-party image with no local build; add it to third-party.sh and the overlay's images"; missing=1; continue ;;
  esac
  have_image "$image" || { say "$image: named by the overlay, not built"; missing=1; }
done
[ "$missing" = 0 ] || die "the test overlay names images that are not here (above)"
say "images: all $(k8s_images <<<"$manifests" | wc -l) images of infra/kind-test/overlay are here"
cat "$bases"

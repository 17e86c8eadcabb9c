#!/usr/bin/env bash
# How long a newcomer's first `make scenario-nplus1` takes: from a fresh
# clone with every cache empty (the lab's tool cache, Go's module and build
# caches, Maven's repository), then from a second fresh clone with those
# caches filled by the first. Everything lives in one temporary folder,
# removed at the end; the user's own caches are neither used nor touched.
# The stack binds the lab's ports, so nothing else of the lab may run.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/tracelab-first-run.XXXXXX")
trap 'rm -rf "$work"' EXIT
caches=(TRACELAB_CACHE="$work/cache/tracelab" GOCACHE="$work/cache/go-build" GOMODCACHE="$work/cache/go-mod"
  MAVEN_OPTS="-Dmaven.repo.local=$work/cache/m2")

first_run() { # NAME
  git clone -q "$root" "$work/$1"
  echo "==> $1: make scenario-nplus1 in a fresh clone (log: $work/$1.log)" >&2
  local t0=$SECONDS
  if ! (cd "$work/$1" && env "${caches[@]}" make scenario-nplus1) >"$work/$1.log" 2>&1; then
    tail -n 20 "$work/$1.log" >&2
    echo "bench-first-run: the $1 run failed" >&2
    exit 1
  fi
  printf '%-5s %4d s  (%dm%02ds)\n' "$1" $((SECONDS - t0)) $(((SECONDS - t0) / 60)) $(((SECONDS - t0) % 60))
  # The Go module cache is read-only by design; make it removable.
  chmod -R u+w "$work/cache/go-mod" 2>/dev/null || true
}

echo "first make scenario-nplus1 on $(uname -sm), $(getconf _NPROCESSORS_ONLN) CPUs, as $(id -un):"
first_run cold
first_run warm

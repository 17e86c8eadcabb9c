#!/usr/bin/env bash
# Builds the third-party images of the lab's manifests from the programs the
# local runtime runs (infra/local/tools.sh; make tools first), into the
# Docker that DOCKER_HOST names: no registry is reachable here, so nothing
# is pulled. One recipe each in infra/kind-test/images/<component>/, named
# tracelab-kind/<component>:<version of versions.env>; the test's overlay
# (infra/kind-test/overlay) maps each upstream image to its build. Prints the
# names.
#
# Each image carries a hash of what it is built from (label
# tracelab.key), so an unchanged one is only checked. The JRE base for
# Kafka is bases.sh's: JAVA_RUNTIME_IMAGE, or bases.sh is run for it.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
. "$root/infra/local/versions.env"
. "$here/lib.sh"
[ -f "$root/.state/tools.env" ] || die "no .state/tools.env; run make tools first (it builds the programs these images hold)"
. "$root/.state/tools.env"
work=${TRACELAB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/tracelab}/kind-images
mkdir -p "$work"

slim=$(slim_image)
jre=${JAVA_RUNTIME_IMAGE:-$("$here/bases.sh" | sed -n 's/^JAVA_RUNTIME_IMAGE=//p')}
[ -n "$jre" ] || die "bases.sh printed no JAVA_RUNTIME_IMAGE"
# Debian's packages for what the binaries of the local runtime lack: curl
# for toxiproxy's configurer; psql and pg_isready for PostgreSQL (zonky's
# binaries are the server only).
curl_root=$(debian_image curl ca-certificates,curl)
pg_root=$(debian_image pgclient ca-certificates,postgresql-client-15)

ctx=
cleanup() { if [ -n "$ctx" ]; then rm -rf "$ctx"; fi; }
trap cleanup EXIT

# component NAME VERSION BASE [SOURCE=NAME_IN_CONTEXT]...: the recipe
# images/NAME with its files and the sources linked into its context.
component() {
  local name=$1 version=$2 base=$3 image key start have old
  shift 3
  image=tracelab-kind/$name:$version
  cleanup; ctx=$(mktemp -d "$work/context.XXXXXX")
  cp -a "$here/images/$name/." "$ctx/"
  for s in "$@"; do cp -aL "${s%%=*}" "$ctx/${s#*=}"; done
  key=$( (cd "$ctx" && find . -type f | LC_ALL=C sort | xargs sha256sum; echo "$base $("$DOCKER" image inspect --format '{{.Id}}' "$base")") | sha256sum | cut -c1-12)
  have=$("$DOCKER" image inspect --format '{{index .Config.Labels "tracelab.key"}}' "$image" 2>/dev/null || true)
  if [ "$have" = "$key" ]; then
    say "$image (cached)"
  else
    start=$SECONDS
    old=$("$DOCKER" image inspect --format '{{.Id}}' "$image" 2>/dev/null || true)
    docker_build --build-arg BASE="$base" --label tracelab.key="$key" -t "$image" "$ctx"
    say "built $image in $((SECONDS - start)) s, $(image_size "$image")"
    # The build it replaces, now untagged (unless a container still uses it).
    if [ -n "$old" ] && [ "$old" != "$("$DOCKER" image inspect --format '{{.Id}}' "$image")" ]; then
      "$DOCKER" rmi "$old" >/dev/null 2>&1 || true
    fi
  fi
  echo "$image"
}

component otelcol "${OTELCOL_CORE_VERSION#v}" "$slim" "$OTELCOL_BIN=otelcol"
component jaeger "${JAEGER_VERSION#v}" "$slim" "$JAEGER_BIN=jaeger"
component prometheus "${PROMETHEUS_VERSION#v}" "$slim" "$PROMETHEUS_BIN=prometheus"
component toxiproxy "${TOXIPROXY_VERSION#v}" "$slim" "$TOXIPROXY_BIN=toxiproxy"
component curl "$("$DOCKER" run --rm --entrypoint dpkg-query "$curl_root" -W -f '${source:Upstream-Version}' curl)" "$curl_root"
component postgres "$POSTGRESQL_VERSION" "$pg_root" "$(dirname "$PG_BIN_DIR")=pgsql"
component kafka "$KAFKA_VERSION" "$jre" "$KAFKA_LIBS=libs" "$root/infra/local/kafka-log4j2.yaml=log4j2.yaml"

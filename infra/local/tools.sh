#!/usr/bin/env bash
# Builds or fetches every program pinned in versions.env into a per-version
# cache outside the clone (so a new clone reuses it), then writes
# .state/tools.env with their absolute paths for the Makefile, tracelab and
# process-compose. Safe to run again: cached tools are only checked.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=versions.env
. "$root/infra/local/versions.env"
cache=${TRACELAB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/tracelab}
state=$root/.state
mkdir -p "$cache/logs" "$state"

say() { printf '\033[1m==>\033[0m %s\n' "$*" >&2; }
die() { printf 'tools: %s\n' "$*" >&2; exit 1; }

# run_logged LOG CMD...: runs a long command with its output in LOG and a
# heartbeat on the terminal, and shows the log's tail if it fails.
run_logged() {
  local log=$1; shift
  "$@" >"$log" 2>&1 &
  local pid=$! start=$SECONDS shown=$SECONDS
  trap 'kill "$pid" 2>/dev/null; exit 130' INT TERM
  while kill -0 "$pid" 2>/dev/null; do
    sleep 2
    if (( SECONDS - shown >= 30 )) && kill -0 "$pid" 2>/dev/null; then
      shown=$SECONDS
      printf '    ... still working (%ds), log: %s\n' $((SECONDS - start)) "$log" >&2
    fi
  done
  trap - INT TERM
  if ! wait "$pid"; then
    tail -n 25 "$log" >&2
    die "failed after $((SECONDS - start))s; full log: $log"
  fi
}

version_ge() { [ "$(printf '%s\n%s\n' "$2" "$1" | sort -V | head -n1)" = "$2" ]; }

require_go() {
  command -v go >/dev/null || die "Go >= $GO_MIN_VERSION is required to build the lab's tools; install it from https://go.dev/dl/ (Debian's golang-go is too old)"
  local v; v=$(go env GOVERSION); v=${v#go}
  version_ge "$v" "$GO_MIN_VERSION" || die "Go $v is too old; Go >= $GO_MIN_VERSION is required (https://go.dev/dl/)"
}

# Some tools' go.mod carries replace directives, which `go install pkg@v`
# refuses; building from a throwaway module that requires the tool and
# repeats those replaces works for every tool alike.
go_tool() { # NAME MODULE VERSION PACKAGE [REPLACE...]
  local name=$1 module=$2 version=$3 pkg=$4; shift 4
  local out=$cache/$name/$version/$name
  if [ -x "$out" ]; then say "$name $version (cached)"; printf '%s' "$out"; return; fi
  require_go
  say "building $name $version (first time only; takes minutes on 2 cores)"
  local dir; dir=$(mktemp -d)
  {
    printf 'module tracelab.local/build/%s\n\ngo %s\n\nrequire %s %s\n' "$name" "$GO_MIN_VERSION" "$module" "$version"
    local r; for r in "$@"; do printf 'replace %s\n' "$r"; done
  } >"$dir/go.mod"
  printf 'package tools\n\nimport _ "%s"\n' "$pkg" >"$dir/tools.go"
  mkdir -p "$(dirname "$out")"
  run_logged "$cache/logs/$name-$version.log" bash -c "cd '$dir' && go mod tidy && go build -trimpath -ldflags='-s -w' -o '$out.tmp' '$pkg'"
  mv "$out.tmp" "$out"; rm -rf "$dir"
  printf '%s' "$out"
}

otelcol() {
  # The manifest's hash is part of the key, so changing the component list rebuilds.
  local key; key=$OTELCOL_CORE_VERSION-$(sha256sum "$root/infra/local/otelcol-builder.yaml" | cut -c1-12)
  local out=$cache/otelcol/$key/otelcol-tracelab
  if [ -x "$out" ]; then say "otelcol $key (cached)"; printf '%s' "$out"; return; fi
  local builder
  builder=$(go_tool otelcol-builder go.opentelemetry.io/collector/cmd/builder "$OTELCOL_BUILDER_VERSION" go.opentelemetry.io/collector/cmd/builder)
  say "building the collector $key (first time only; takes minutes on 2 cores)"
  local dir; dir=$(mktemp -d)
  OTELCOL_BUILD_DIR=$dir OTELCOL_CORE_VERSION=$OTELCOL_CORE_VERSION OTELCOL_CONTRIB_VERSION=$OTELCOL_CONTRIB_VERSION \
    OTELCOL_CONFMAP_VERSION=$OTELCOL_CONFMAP_VERSION envsubst <"$root/infra/local/otelcol-builder.yaml" >"$dir/manifest.yaml"
  run_logged "$cache/logs/otelcol-$key.log" "$builder" --config "$dir/manifest.yaml"
  mkdir -p "$(dirname "$out")"; mv "$dir/otelcol-tracelab" "$out"; rm -rf "$dir"
  printf '%s' "$out"
}

javaagent() {
  local out=$cache/otel-javaagent/$OTEL_JAVAAGENT_VERSION/opentelemetry-javaagent.jar
  if [ -f "$out" ]; then say "opentelemetry-javaagent $OTEL_JAVAAGENT_VERSION (cached)"; printf '%s' "$out"; return; fi
  command -v mvn >/dev/null || die "Maven is required; install it: apt-get install -y maven"
  say "fetching opentelemetry-javaagent $OTEL_JAVAAGENT_VERSION from Maven Central"
  run_logged "$cache/logs/javaagent.log" mvn -B -q org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy \
    "-Dartifact=io.opentelemetry.javaagent:opentelemetry-javaagent:$OTEL_JAVAAGENT_VERSION" \
    "-DoutputDirectory=$(dirname "$out")" -Dmdep.stripVersion=true
  printf '%s' "$out"
}

# The Kafka broker: its jars and their runtime dependencies, resolved by
# Maven from a throwaway pom into one folder (the classpath of
# infra/local/run-kafka.sh). No container and no tarball: Maven Central has
# every part.
kafka_libs() {
  local out=$cache/kafka/$KAFKA_VERSION/libs
  if [ -f "$out/log4j-slf4j-impl-$KAFKA_LOG4J_VERSION.jar" ]; then say "kafka $KAFKA_VERSION (cached)"; printf '%s' "$out"; return; fi
  command -v mvn >/dev/null || die "Maven is required; install it: apt-get install -y maven"
  say "fetching kafka $KAFKA_VERSION and its dependencies from Maven Central"
  local dir; dir=$(mktemp -d)
  cat >"$dir/pom.xml" <<EOF
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>tracelab.local</groupId><artifactId>kafka-dist</artifactId><version>1</version>
  <dependencies>
    <dependency><groupId>org.apache.kafka</groupId><artifactId>kafka_2.13</artifactId><version>$KAFKA_VERSION</version></dependency>
    <dependency><groupId>org.apache.kafka</groupId><artifactId>kafka-tools</artifactId><version>$KAFKA_VERSION</version></dependency>
    <!-- The broker logs through SLF4J 1.x here; without a binding it says nothing. -->
    <dependency><groupId>org.apache.logging.log4j</groupId><artifactId>log4j-slf4j-impl</artifactId><version>$KAFKA_LOG4J_VERSION</version></dependency>
  </dependencies>
</project>
EOF
  rm -rf "$out.tmp"
  run_logged "$cache/logs/kafka-$KAFKA_VERSION.log" mvn -B -q -f "$dir/pom.xml" \
    org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy-dependencies \
    -DincludeScope=runtime "-DoutputDirectory=$out.tmp"
  rm -rf "$out"; mv "$out.tmp" "$out"; rm -rf "$dir"
  printf '%s' "$out"
}

# Debian packages. Their maintainer scripts would start system services on
# default ports; the lab runs its own instances, so starting is forbidden
# while they install.
apt_install() { # PACKAGE=VERSION...
  local cmd="apt-get install -y --no-install-recommends $*"
  if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
    die "missing OS packages; install them with: sudo $cmd"
  fi
  say "installing $* (apt-get)"
  local policy=/usr/sbin/policy-rc.d had_policy=0
  [ -e "$policy" ] && had_policy=1
  [ $had_policy = 1 ] || { printf '#!/bin/sh\nexit 101\n' >"$policy"; chmod +x "$policy"; }
  local rc=0
  run_logged "$cache/logs/apt.log" bash -c "DEBIAN_FRONTEND=noninteractive $cmd" || rc=$?
  [ $had_policy = 1 ] || rm -f "$policy"
  return $rc
}

prometheus_bin() {
  if ! command -v prometheus >/dev/null; then
    apt_install "prometheus=$PROMETHEUS_DEB_VERSION"
    # The package enables a system service; the lab does not use it.
    pkill -x prometheus 2>/dev/null || true
  fi
  say "prometheus $(prometheus --version 2>&1 | head -n1 | awk '{print $3}')"
  command -v prometheus
}

chromium_bin() {
  command -v chromium >/dev/null || apt_install "chromium=$CHROMIUM_DEB_VERSION"
  say "chromium $(chromium --version 2>/dev/null | awk '{print $2}')"
  command -v chromium
}

postgres_bindir() {
  local dir=/usr/lib/postgresql/$POSTGRESQL_MAJOR/bin
  [ -x "$dir/postgres" ] || apt_install "postgresql-$POSTGRESQL_MAJOR"
  say "postgresql $("$dir/postgres" --version | awk '{print $3}')"
  printf '%s' "$dir"
}

# A PyPI tool in its own virtualenv in the cache (one per version).
py_tool() { # NAME PACKAGE VERSION
  local name=$1 pkg=$2 version=$3
  local venv=$cache/$name/$version/venv out=$cache/$name/$version/venv/bin/$name
  if [ -x "$out" ]; then say "$name $version (cached)"; printf '%s' "$out"; return; fi
  command -v python3 >/dev/null || die "python3 (>= 3.9, with venv) is required for $name; install it: apt-get install -y python3-venv"
  say "installing $name $version from PyPI"
  rm -rf "$venv"
  run_logged "$cache/logs/$name-$version.log" bash -c "python3 -m venv '$venv' && '$venv/bin/pip' install -q --disable-pip-version-check '$pkg==$version'"
  printf '%s' "$out"
}

# The offline checks of the Kubernetes runtimes (make test-k8s): kustomize,
# kubernetes-validate, OpenTofu (for `fmt -check`) and tflint. Kept apart from main so
# that running the lab locally never waits for them.
k8s_tools() {
  local kustomize kv tofu tflint
  kustomize=$(go_tool kustomize sigs.k8s.io/kustomize/kustomize/v5 "$KUSTOMIZE_VERSION" sigs.k8s.io/kustomize/kustomize/v5)
  kv=$(py_tool kubernetes-validate kubernetes-validate "$KUBERNETES_VALIDATE_VERSION")
  tofu=$(go_tool tofu github.com/opentofu/opentofu "$OPENTOFU_VERSION" github.com/opentofu/opentofu/cmd/tofu \
    'github.com/hashicorp/hcl/v2 v2.20.1 => github.com/opentofu/hcl/v2 v2.20.2-0.20250121132637-504036cd70e7')
  tflint=$(go_tool tflint github.com/terraform-linters/tflint "$TFLINT_VERSION" github.com/terraform-linters/tflint)
  cat >"$state/tools-k8s.env.tmp" <<EOF
# Written by infra/local/tools.sh k8s; do not edit.
K8S_VERSION=$K8S_VERSION
KUSTOMIZE_BIN=$kustomize
KUBERNETES_VALIDATE_BIN=$kv
TOFU_BIN=$tofu
TFLINT_BIN=$tflint
EOF
  mv "$state/tools-k8s.env.tmp" "$state/tools-k8s.env"
  say "Kubernetes check tools ready: $state/tools-k8s.env"
}

# The peer analyzer of `make bench-detect`: perf-sentinel, a Rust crate,
# built once per version by cargo into the cache. Kept apart from main:
# only the detector benchmark needs it, and it needs Rust.
cargo_tool() { # NAME CRATE VERSION
  local name=$1 crate=$2 version=$3
  local root=$cache/$name/$version out=$cache/$name/$version/bin/$name
  if [ -x "$out" ]; then say "$name $version (cached)"; printf '%s' "$out"; return; fi
  command -v cargo >/dev/null || die "Rust's cargo is required to build $name; install Rust (https://rustup.rs) and run make tools-bench again"
  say "building $name $version from crates.io (first time only; about 10 minutes on 2 cores)"
  run_logged "$cache/logs/$name-$version.log" cargo install "$crate" --version "$version" --locked --root "$root"
  printf '%s' "$out"
}

bench_tools() {
  local ps
  ps=$(cargo_tool perf-sentinel perf-sentinel "$PERF_SENTINEL_VERSION")
  cat >"$state/tools-bench.env.tmp" <<EOF
# Written by infra/local/tools.sh bench; do not edit.
PERF_SENTINEL_VERSION=$PERF_SENTINEL_VERSION
PERF_SENTINEL_BIN=$ps
EOF
  mv "$state/tools-bench.env.tmp" "$state/tools-bench.env"
  say "benchmark tools ready: $state/tools-bench.env"
}

main() {
  local java_home
  java_home=$("$root/infra/local/find-jdk.sh")
  say "JDK $java_home"
  local k6 jaeger pc col agent prom pg toxi linter chrome kafka
  k6=$(go_tool k6 go.k6.io/k6 "$K6_VERSION" go.k6.io/k6)
  pc=$(go_tool process-compose github.com/f1bonacc1/process-compose "$PROCESS_COMPOSE_VERSION" github.com/f1bonacc1/process-compose)
  col=$(otelcol)
  jaeger=$(go_tool jaeger github.com/jaegertracing/jaeger "$JAEGER_VERSION" github.com/jaegertracing/jaeger/cmd/jaeger \
    'github.com/Shopify/sarama => github.com/Shopify/sarama v1.33.0')
  toxi=$(go_tool toxiproxy github.com/Shopify/toxiproxy/v2 "$TOXIPROXY_VERSION" github.com/Shopify/toxiproxy/v2/cmd/server)
  linter=$(go_tool dashboard-linter github.com/grafana/dashboard-linter "$DASHBOARD_LINTER_VERSION" github.com/grafana/dashboard-linter)
  agent=$(javaagent)
  kafka=$(kafka_libs)
  prom=$(prometheus_bin)
  pg=$(postgres_bindir)
  chrome=$(chromium_bin)
  cat >"$state/tools.env.tmp" <<EOF
# Written by infra/local/tools.sh; do not edit.
TRACELAB_CACHE=$cache
LAB_JAVA_HOME=$java_home
K6_BIN=$k6
OTELCOL_BIN=$col
JAEGER_BIN=$jaeger
PROCESS_COMPOSE_BIN=$pc
TOXIPROXY_BIN=$toxi
OTEL_JAVAAGENT_JAR=$agent
KAFKA_LIBS=$kafka
PROMETHEUS_BIN=$prom
PG_BIN_DIR=$pg
DASHBOARD_LINTER_BIN=$linter
CHROMIUM_BIN=$chrome
EOF
  mv "$state/tools.env.tmp" "$state/tools.env"
  say "tools ready: $state/tools.env"
}

# The checksum service does not know these modules' pseudo-versions.
export GONOSUMDB=${GONOSUMDB:+$GONOSUMDB,}github.com/open-telemetry,go.opentelemetry.io,github.com/grafana
export GOFLAGS=-mod=mod
case "${1:-}" in
  k8s) k8s_tools ;;
  bench) bench_tools ;;
  "") main ;;
  *) die "unknown argument '$1'; usage: tools.sh [k8s|bench]" ;;
esac

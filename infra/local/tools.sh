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
    if [ -z "${TOOLS_IN_PARALLEL:-}" ] && (( SECONDS - shown >= 30 )) && kill -0 "$pid" 2>/dev/null; then
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

require_mvn() {
  command -v mvn >/dev/null || die "Maven is required; install it (Debian/Ubuntu: apt-get install -y maven; macOS: brew install maven)"
}

# Some tools' go.mod carries replace directives, which `go install pkg@v`
# refuses; building from a throwaway module that requires the tool and
# repeats those replaces works for every tool alike. No `go mod tidy`: it
# would fetch the test dependencies of every module in the graph, and the
# build needs only what the tool imports. STUB=FILE (a path inside MODULE)
# builds the tool with that file reduced to its package clause (see
# prometheus_bin). PACKAGE may list several main packages of one module
# (kubernetes_bins): one `go build` then compiles their shared packages once,
# and go_tool prints the folder holding them. LDFLAGS adds linker flags.
go_tool() { # NAME MODULE VERSION PACKAGE [REPLACE...]
  local name=$1 module=$2 version=$3 pkgs; read -ra pkgs <<<"$4"; shift 4
  local out=$cache/$name/$version/$name bins=("$name")
  if [ ${#pkgs[@]} -gt 1 ]; then out=$cache/$name/$version bins=("${pkgs[@]##*/}"); fi
  local dest=$cache/$name/$version have=1 b
  for b in "${bins[@]}"; do [ -x "$dest/$b" ] || have=; done
  if [ -n "$have" ]; then say "$name $version (cached)"; printf '%s' "$out"; return; fi
  require_go
  say "building $name $version (first time only; takes minutes on 2 cores)"
  local dir; dir=$(mktemp -d)
  {
    printf 'module tracelab.local/build/%s\n\ngo %s\n\nrequire %s %s\n' "$name" "$GO_MIN_VERSION" "$module" "$version"
    local r; for r in "$@"; do printf 'replace %s\n' "$r"; done
  } >"$dir/go.mod"
  { printf 'package tools\n\n'; local p; for p in "${pkgs[@]}"; do printf 'import _ "%s"\n' "$p"; done; } >"$dir/tools.go"
  if [ -n "${STUB:-}" ]; then
    # Go refuses to overlay files of the module cache, so the build uses a
    # copy of the module (replace => ./src) with that one file reduced.
    (cd "$dir" && go mod download "$module" && cp -R "$(go list -m -f '{{.Dir}}' "$module")" src && chmod -R u+w src &&
      grep -m1 '^package ' "src/$STUB" >"src/$STUB.tmp" && mv "src/$STUB.tmp" "src/$STUB" &&
      printf 'replace %s => ./src\n' "$module" >>go.mod) >>"$cache/logs/$name-$version.log" 2>&1 ||
      die "$name: could not prepare its build; log: $cache/logs/$name-$version.log"
  fi
  mkdir -p "$dest"
  local start=$SECONDS target=$dest/$name.tmp
  # With several packages -o names a folder (the trailing slash), where each
  # binary lands under its package's last element.
  if [ ${#pkgs[@]} -gt 1 ]; then target=$dest/.tmp/; fi
  run_logged "$cache/logs/$name-$version.log" bash -c "cd '$dir' && go build -trimpath -ldflags='-s -w ${LDFLAGS:-}' -o '$target' ${pkgs[*]}"
  if [ ${#pkgs[@]} -gt 1 ]; then
    for b in "${bins[@]}"; do mv "$dest/.tmp/$b" "$dest/$b"; done
    rmdir "$dest/.tmp"
  else
    mv "$target" "$dest/$name"
  fi
  rm -rf "$dir"
  say "built $name $version in $((SECONDS - start))s"
  printf '%s' "$out"
}

otelcol() {
  # The manifest's hash is part of the key, so changing the component list
  # rebuilds. macOS has shasum where Linux has sha256sum; both print the same.
  local manifest=$root/infra/local/otelcol-builder.yaml key
  key=$OTELCOL_CORE_VERSION-$({ sha256sum "$manifest" 2>/dev/null || shasum -a 256 "$manifest"; } | cut -c1-12)
  local out=$cache/otelcol/$key/otelcol-tracelab
  if [ -x "$out" ]; then say "otelcol $key (cached)"; printf '%s' "$out"; return; fi
  local builder
  builder=$(go_tool otelcol-builder go.opentelemetry.io/collector/cmd/builder "$OTELCOL_BUILDER_VERSION" go.opentelemetry.io/collector/cmd/builder)
  say "building the collector $key (first time only; takes minutes on 2 cores)"
  local dir; dir=$(mktemp -d)
  OTELCOL_BUILD_DIR=$dir OTELCOL_CORE_VERSION=$OTELCOL_CORE_VERSION OTELCOL_CONTRIB_VERSION=$OTELCOL_CONTRIB_VERSION \
    OTELCOL_CONFMAP_VERSION=$OTELCOL_CONFMAP_VERSION "$root/infra/local/expand-env.sh" <"$root/infra/local/otelcol-builder.yaml" >"$dir/manifest.yaml"
  run_logged "$cache/logs/otelcol-$key.log" "$builder" --config "$dir/manifest.yaml"
  mkdir -p "$(dirname "$out")"; mv "$dir/otelcol-tracelab" "$out"; rm -rf "$dir"
  printf '%s' "$out"
}

javaagent() {
  local out=$cache/otel-javaagent/$OTEL_JAVAAGENT_VERSION/opentelemetry-javaagent.jar
  if [ -f "$out" ]; then say "opentelemetry-javaagent $OTEL_JAVAAGENT_VERSION (cached)"; printf '%s' "$out"; return; fi
  require_mvn
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
  require_mvn
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

# PostgreSQL's server binaries (initdb, pg_ctl, postgres) for this OS and
# architecture, as the zonky project packs them on Maven Central: a jar that
# holds one .txz. No apt and no root, on Linux and macOS alike.
postgres_bindir() {
  local platform
  case "$(uname -s)-$(uname -m)" in
    Linux-x86_64) platform=linux-amd64 ;;
    Linux-aarch64 | Linux-arm64) platform=linux-arm64v8 ;;
    Darwin-x86_64) platform=darwin-amd64 ;;
    Darwin-arm64) platform=darwin-arm64v8 ;;
    *) die "no PostgreSQL binaries for $(uname -s) $(uname -m); the lab runs on Linux and macOS, amd64 and arm64" ;;
  esac
  local dir=$cache/postgres/$POSTGRESQL_VERSION/$platform
  if [ -x "$dir/bin/postgres" ]; then say "postgresql $POSTGRESQL_VERSION (cached)"; printf '%s' "$dir/bin"; return; fi
  require_mvn
  say "fetching postgresql $POSTGRESQL_VERSION ($platform) from Maven Central"
  local tmp; tmp=$(mktemp -d)
  run_logged "$cache/logs/postgres-$POSTGRESQL_VERSION.log" mvn -B -q org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy \
    "-Dartifact=io.zonky.test.postgres:embedded-postgres-binaries-$platform:$POSTGRESQL_VERSION" \
    "-DoutputDirectory=$tmp" -Dmdep.stripVersion=true
  (cd "$tmp" && unzip -q ./*.jar '*.txz' && mkdir dist && tar -xJf ./*.txz -C dist) >>"$cache/logs/postgres-$POSTGRESQL_VERSION.log" 2>&1 ||
    die "could not unpack the PostgreSQL binaries (needs unzip and xz); log: $cache/logs/postgres-$POSTGRESQL_VERSION.log"
  rm -rf "$dir"; mkdir -p "$(dirname "$dir")"; mv "$tmp/dist" "$dir"; rm -rf "$tmp"
  printf '%s' "$dir/bin"
}

# Test-only OS packages (Chromium for make test's HTML report check, gcc for
# go test -race, which needs cgo), never a run's.
# Unpinned: a distribution replaces its browser at every security update.
os_package() { # COMMAND PACKAGE
  local cmd=$1 pkg=$2
  if command -v "$cmd" >/dev/null; then command -v "$cmd"; return; fi
  local install="apt-get install -y --no-install-recommends $pkg"
  command -v apt-get >/dev/null || die "$cmd is missing; install $pkg with your package manager (make test needs it, a scenario run does not)"
  [ "$(id -u)" = 0 ] || die "$cmd is missing; install it with: sudo $install (make test needs it, a scenario run does not)"
  say "installing $pkg (apt-get; test-only)"
  run_logged "$cache/logs/apt.log" bash -c "DEBIAN_FRONTEND=noninteractive $install"
  command -v "$cmd"
}

# Kubernetes from k8s.io/kubernetes: the control plane of make test-k8s
# (kube-apiserver, kube-controller-manager, kube-scheduler, kubectl) and the
# node's own programs of make test-kind's node image (kubelet, kubeadm,
# kube-proxy), in one build that compiles their shared packages once. Its go.mod replaces its
# k8s.io/* staging modules by folders of its own repository (=> ./staging/...),
# which the module proxy does not serve; the same code is published as those
# modules' v0.<minor>.<patch>, so the wrapper module replaces each by that.
# The list comes from the pinned go.mod itself, so a new staging module in a
# later release needs no edit here.
kubernetes_bins() {
  local bins=(kube-apiserver kube-controller-manager kube-scheduler kubectl kubelet kubeadm kube-proxy) pkgs=() replaces=() b built=1
  for b in "${bins[@]}"; do
    pkgs+=("k8s.io/kubernetes/cmd/$b")
    [ -x "$cache/kubernetes/$KUBERNETES_VERSION/$b" ] || built=
  done
  if [ -z "$built" ]; then
    require_go
    local gomod staging=v0.${KUBERNETES_VERSION#v1.}
    gomod=$(go mod download -json "k8s.io/kubernetes@$KUBERNETES_VERSION" | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",$/\1/p')
    [ -f "$gomod" ] || die "could not fetch k8s.io/kubernetes $KUBERNETES_VERSION's go.mod from the Go module proxy"
    mapfile -t replaces < <(sed -n "s#^[[:space:]]*\(k8s.io/[^ ]*\) => ./staging/.*#\1 => \1 $staging#p" "$gomod")
    [ ${#replaces[@]} -gt 0 ] || die "k8s.io/kubernetes $KUBERNETES_VERSION's go.mod lists no staging modules; tools.sh needs updating"
  fi
  # Without these the binaries report v0.0.0-master, and kubectl and the
  # API server then warn of a version skew. The client's version is
  # client-go's, the server's component-base's.
  local minor=${KUBERNETES_VERSION#v1.}; minor=${minor%%.*}
  local v p ldflags=
  for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    for v in "gitVersion=$KUBERNETES_VERSION" gitMajor=1 "gitMinor=$minor" gitTreeState=clean; do ldflags+=" -X $p.$v"; done
  done
  # Static, as Kubernetes' own release builds are: the node image and the
  # component images run them on a Debian other than this machine's.
  CGO_ENABLED=0 LDFLAGS=$ldflags go_tool kubernetes k8s.io/kubernetes "$KUBERNETES_VERSION" "${pkgs[*]}" "${replaces[@]}"
}

# The Kubernetes checks (make test-k8s): kustomize renders the overlays, a
# throwaway control plane (etcd, the Kubernetes binaries and kwok's fake
# nodes) takes them, hclfmt (for `fmt -check`) and tflint check
# infra/terraform. Kept apart from main so that running the lab locally
# never waits for them.
k8s_tools() {
  case $KUBERNETES_VERSION in
    v$K8S_VERSION.*) ;;
    *) die "versions.env: KUBERNETES_VERSION $KUBERNETES_VERSION is not a release of K8S_VERSION $K8S_VERSION" ;;
  esac
  jobs=$(mktemp -d) pids=() names=()
  in_parallel kustomize go_tool kustomize sigs.k8s.io/kustomize/kustomize/v5 "$KUSTOMIZE_VERSION" sigs.k8s.io/kustomize/kustomize/v5
  in_parallel kubernetes kubernetes_bins
  in_parallel etcd go_tool etcd go.etcd.io/etcd/server/v3 "$ETCD_VERSION" go.etcd.io/etcd/server/v3 \
    "go.etcd.io/etcd/api/v3 => go.etcd.io/etcd/api/v3 $ETCD_VERSION" \
    "go.etcd.io/etcd/client/pkg/v3 => go.etcd.io/etcd/client/pkg/v3 $ETCD_VERSION" \
    "go.etcd.io/etcd/client/v3 => go.etcd.io/etcd/client/v3 $ETCD_VERSION" \
    "go.etcd.io/etcd/pkg/v3 => go.etcd.io/etcd/pkg/v3 $ETCD_VERSION"
  in_parallel kwok go_tool kwok sigs.k8s.io/kwok "$KWOK_VERSION" sigs.k8s.io/kwok/cmd/kwok
  in_parallel hclfmt go_tool hclfmt github.com/hashicorp/hcl/v2 "$HCL_VERSION" github.com/hashicorp/hcl/v2/cmd/hclfmt
  in_parallel tflint go_tool tflint github.com/terraform-linters/tflint "$TFLINT_VERSION" github.com/terraform-linters/tflint
  in_parallel promtool promtool_bin
  await_all
  local k8s; k8s=$(tool kubernetes)
  cat >"$state/tools-k8s.env.tmp" <<EOF
# Written by infra/local/tools.sh k8s; do not edit.
K8S_VERSION=$K8S_VERSION
KUBERNETES_VERSION=$KUBERNETES_VERSION
KUSTOMIZE_BIN=$(tool kustomize)
KUBE_APISERVER_BIN=$k8s/kube-apiserver
KUBE_CONTROLLER_MANAGER_BIN=$k8s/kube-controller-manager
KUBE_SCHEDULER_BIN=$k8s/kube-scheduler
KUBECTL_BIN=$k8s/kubectl
ETCD_BIN=$(tool etcd)
KWOK_BIN=$(tool kwok)
HCLFMT_BIN=$(tool hclfmt)
TFLINT_BIN=$(tool tflint)
PROMTOOL_BIN=$(tool promtool)
EOF
  rm -rf "$jobs"
  mv "$state/tools-k8s.env.tmp" "$state/tools-k8s.env"
  say "Kubernetes check tools ready: $state/tools-k8s.env"
}

# The programs of make test-kind's cluster (infra/kind-test/): kind, and
# what its node image needs besides Kubernetes' own programs, which
# k8s_tools builds. The pause container is one C file of k8s.io/kubernetes,
# compiled static so that it runs on an image with no libc.
pause_bin() {
  local out=$cache/pause/$KUBERNETES_VERSION/pause
  if [ -x "$out" ]; then say "pause of Kubernetes $KUBERNETES_VERSION (cached)"; printf '%s' "$out"; return; fi
  command -v gcc >/dev/null || die "gcc is required to build the pause container; install it (Debian: apt-get install -y gcc libc6-dev)"
  local src
  src=$(go_module_dir "k8s.io/kubernetes@$KUBERNETES_VERSION")/build/pause/linux/pause.c
  [ -f "$src" ] || die "k8s.io/kubernetes $KUBERNETES_VERSION has no build/pause/linux/pause.c; tools.sh needs updating"
  mkdir -p "$(dirname "$out")"
  gcc -Os -static -Wall -Werror -DVERSION="$KUBERNETES_VERSION" -o "$out.tmp" "$src" 2>>"$cache/logs/pause.log" ||
    die "could not compile pause; log: $cache/logs/pause.log"
  mv "$out.tmp" "$out"
  printf '%s' "$out"
}

# The folder of a module version in Go's module cache, downloaded if need be.
go_module_dir() { # MODULE@VERSION
  go mod download -json "$1" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p'
}

kind_tools() {
  k8s_tools
  jobs=$(mktemp -d) pids=() names=()
  in_parallel kind go_tool kind sigs.k8s.io/kind "$KIND_VERSION" sigs.k8s.io/kind
  in_parallel crictl go_tool crictl sigs.k8s.io/cri-tools "$CRICTL_VERSION" sigs.k8s.io/cri-tools/cmd/crictl
  in_parallel coredns go_tool coredns github.com/coredns/coredns "$COREDNS_VERSION" github.com/coredns/coredns
  in_parallel local-path-provisioner go_tool local-path-provisioner github.com/rancher/local-path-provisioner \
    "$LOCAL_PATH_PROVISIONER_VERSION" github.com/rancher/local-path-provisioner
  in_parallel pause pause_bin
  await_all
  cat >"$state/tools-kind.env.tmp" <<EOF
# Written by infra/local/tools.sh kind; do not edit.
KIND_VERSION=$KIND_VERSION
KIND_BIN=$(tool kind)
KIND_SRC=$(go_module_dir "sigs.k8s.io/kind@$KIND_VERSION")
KUBERNETES_BIN_DIR=$cache/kubernetes/$KUBERNETES_VERSION
CRICTL_BIN=$(tool crictl)
COREDNS_VERSION=$COREDNS_VERSION
COREDNS_BIN=$(tool coredns)
LOCAL_PATH_PROVISIONER_VERSION=$LOCAL_PATH_PROVISIONER_VERSION
LOCAL_PATH_PROVISIONER_BIN=$(tool local-path-provisioner)
PAUSE_BIN=$(tool pause)
EOF
  rm -rf "$jobs"
  mv "$state/tools-kind.env.tmp" "$state/tools-kind.env"
  say "kind test tools ready: $state/tools-kind.env"
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

# Prometheus's plugins/plugins.go registers every service discovery (AWS,
# Azure, GCE, Kubernetes, ...), and their SDKs are most of its build. The
# lab scrapes static targets; plugins/minimum.go keeps file and HTTP
# discovery.
prometheus_bin() {
  STUB=plugins/plugins.go go_tool prometheus github.com/prometheus/prometheus "$PROMETHEUS_VERSION" github.com/prometheus/prometheus/cmd/prometheus
}

# promtool of the same release, with the same stub: `make test-k8s` checks
# the cluster's Prometheus configuration with it, and that configuration
# scrapes static targets too.
promtool_bin() {
  STUB=plugins/plugins.go go_tool promtool github.com/prometheus/prometheus "$PROMETHEUS_VERSION" github.com/prometheus/prometheus/cmd/promtool
}

# in_parallel and await_all: side-by-side fetches and builds. On 2 cores the
# Go builds share the CPU, but Maven's and the module proxy's downloads
# overlap them.
# shellcheck source=jobs.sh
. "$root/infra/local/jobs.sh"

tool() { cat "$jobs/$1"; }

# What a scenario run needs, and nothing else: the test-only tools are
# `tools.sh test`, the Kubernetes ones `tools.sh k8s`.
main() {
  local java_home
  java_home=$("$root/infra/local/find-jdk.sh")
  say "JDK $java_home"
  jobs=$(mktemp -d) pids=() names=()
  in_parallel process-compose go_tool process-compose github.com/f1bonacc1/process-compose "$PROCESS_COMPOSE_VERSION" github.com/f1bonacc1/process-compose
  in_parallel otelcol otelcol
  in_parallel jaeger go_tool jaeger github.com/jaegertracing/jaeger "$JAEGER_VERSION" github.com/jaegertracing/jaeger/cmd/jaeger \
    'github.com/Shopify/sarama => github.com/Shopify/sarama v1.33.0'
  in_parallel toxiproxy go_tool toxiproxy github.com/Shopify/toxiproxy/v2 "$TOXIPROXY_VERSION" github.com/Shopify/toxiproxy/v2/cmd/server
  in_parallel prometheus prometheus_bin
  in_parallel javaagent javaagent
  in_parallel kafka kafka_libs
  in_parallel postgres postgres_bindir
  await_all
  cat >"$state/tools.env.tmp" <<EOF
# Written by infra/local/tools.sh; do not edit.
TRACELAB_CACHE=$cache
LAB_JAVA_HOME=$java_home
OTELCOL_BIN=$(tool otelcol)
JAEGER_BIN=$(tool jaeger)
PROCESS_COMPOSE_BIN=$(tool process-compose)
TOXIPROXY_BIN=$(tool toxiproxy)
OTEL_JAVAAGENT_JAR=$(tool javaagent)
KAFKA_LIBS=$(tool kafka)
PROMETHEUS_BIN=$(tool prometheus)
PG_BIN_DIR=$(tool postgres)
EOF
  rm -rf "$jobs"
  mv "$state/tools.env.tmp" "$state/tools.env"
  say "tools ready: $state/tools.env"
}

# What only `make test` needs: the dashboard linter, a headless browser
# for the HTML report's check, and a C compiler for the race detector.
test_tools() {
  local linter chrome
  linter=$(go_tool dashboard-linter github.com/grafana/dashboard-linter "$DASHBOARD_LINTER_VERSION" github.com/grafana/dashboard-linter)
  chrome=$(os_package chromium chromium)
  os_package gcc "$RACE_PACKAGES" >/dev/null
  cat >"$state/tools-test.env.tmp" <<EOF
# Written by infra/local/tools.sh test; do not edit.
DASHBOARD_LINTER_BIN=$linter
CHROMIUM_BIN=$chrome
EOF
  mv "$state/tools-test.env.tmp" "$state/tools-test.env"
  say "test tools ready: $state/tools-test.env"
}

# go test -race builds with cgo: the compiler, and the C library's headers,
# which apt's --no-install-recommends leaves out of gcc's install.
RACE_PACKAGES="gcc libc6-dev"

# The checksum service does not know these modules' pseudo-versions.
export GONOSUMDB=${GONOSUMDB:+$GONOSUMDB,}github.com/open-telemetry,go.opentelemetry.io,github.com/grafana
export GOFLAGS=-mod=mod
case "${1:-}" in
  k8s) k8s_tools ;;
  kind) kind_tools ;;
  bench) bench_tools ;;
  test) test_tools ;;
  # Root's part of make test, for a CI that then runs it unprivileged.
  test-packages) os_package chromium chromium >/dev/null && os_package gcc "$RACE_PACKAGES" >/dev/null ;;
  "") main ;;
  *) die "unknown argument '$1'; usage: tools.sh [test|test-packages|k8s|kind|bench]" ;;
esac

#!/usr/bin/env bash
# Builds the base images make images needs on a machine that reaches no image
# registry, into the Docker that DOCKER_HOST names, and prints them as the
# variables make images takes:
#
#   JAVA_BUILD_IMAGE=...  the slim Debian root, the host's JDK (>= 21, found
#                         by infra/local/find-jdk.sh), Maven from Central and
#                         a Maven repository with all that services/ needs
#   JAVA_RUNTIME_IMAGE=...  a jlink-trimmed runtime of that JDK
#   GO_IMAGE=...          the host's Go toolchain and tracelab's modules
#   RUNTIME_IMAGE=...     the slim Debian root (tracelab's binary is static)
#
# Each is tagged with a hash of what it is built from, so an unchanged one is
# only checked. Progress goes to stderr, the variables to stdout.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
. "$root/infra/local/versions.env"
. "$here/lib.sh"
work=${TRACELAB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/tracelab}/kind-images
mkdir -p "$work"

# The Maven of the public build base (maven:3.9.11-eclipse-temurin-21): the
# same plugin defaults, so the repository resolved here is the one it needs.
MAVEN_VERSION=3.9.11
# What the services (Spring Boot, Quarkus), the OpenTelemetry Java agent and
# Kafka's broker use, seen running in their images (try-images.py,
# images/README.md): java.desktop for java.beans (Spring),
# java.instrument and jdk.attach for the agent, java.management and
# jdk.management for JMX and runtime metrics, the security modules for
# Kafka's SASL classes, jdk.unsupported for sun.misc.Unsafe.
JRE_MODULES=java.base,java.compiler,java.desktop,java.instrument,java.logging,java.management,java.naming,java.net.http,java.prefs,java.rmi,java.scripting,java.security.jgss,java.security.sasl,java.sql,java.transaction.xa,java.xml,jdk.attach,jdk.charsets,jdk.crypto.ec,jdk.jfr,jdk.management,jdk.management.jfr,jdk.naming.dns,jdk.net,jdk.security.auth,jdk.unsupported,jdk.zipfs

jdk=$("$root/infra/local/find-jdk.sh")
jdk_major=$(sed -n 's/^JAVA_VERSION="\([0-9]*\).*/\1/p' "$jdk/release")
goroot=$(go env GOROOT)
go_version=$(go env GOVERSION)
slim=$(slim_image)

ctx=
cleanup() { if [ -n "$ctx" ]; then rm -rf "$ctx"; fi; }
trap cleanup EXIT
# A build context of links to what it holds: the JDK and the repository are
# hundreds of MiB, which a copy would write twice.
link() { cp -al "$1" "$2" 2>/dev/null || cp -a "$1" "$2"; }
new_context() { cleanup; ctx=$(mktemp -d "$work/context.XXXXXX"); }
build() { # IMAGE DIR: build infra/kind-test/images/DIR from $ctx on the slim root
  local start=$SECONDS old
  docker_build --build-arg BASE="$slim" -f "$here/images/$2/Dockerfile" -t "$1" "$ctx"
  say "built $1 in $((SECONDS - start)) s, $(image_size "$1")"
  # Older keys' builds of this base are of no further use.
  for old in $("$DOCKER" images --format '{{.Repository}}:{{.Tag}}' "${1%:*}"); do
    if [ "$old" != "$1" ]; then "$DOCKER" rmi "$old" >/dev/null 2>&1 || true; fi
  done
}

# ---- Java build base ----
poms=$(cd "$root/services" && find . -name pom.xml -not -path '*/target/*' | sort)
# The repository depends on the poms and Maven only; the image on the rest too.
repo_key=$(content_key <(echo "$MAVEN_VERSION $OTEL_JAVAAGENT_VERSION $poms") $(for p in $poms; do echo "$root/services/$p"; done))
key=$(content_key "$0" "$here/images/java-build/Dockerfile" "$jdk/release" <(echo "$repo_key"))
java_build=tracelab-kind/java-build:$jdk_major-$key
if have_image "$java_build"; then
  say "Java build base $java_build (cached)"
else
  maven=$work/maven/apache-maven-$MAVEN_VERSION
  if [ ! -x "$maven/bin/mvn" ]; then
    say "Maven $MAVEN_VERSION from Maven Central"
    mkdir -p "$work/maven"
    # Any Maven fetches it: the machine's, or the one of make tools.
    mvn -B -q -Dstyle.color=never org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy \
      -Dartifact="org.apache.maven:apache-maven:$MAVEN_VERSION:tar.gz:bin" -DoutputDirectory="$work/maven" >&2 ||
      die "could not fetch Maven $MAVEN_VERSION from Maven Central (needs a mvn on the PATH and Central)"
    tar -C "$work/maven" -xzf "$work/maven/apache-maven-$MAVEN_VERSION-bin.tar.gz"
  fi
  repo=$work/m2-$repo_key
  if [ ! -f "$repo/.complete" ]; then
    # Resolved by building every module, as the recipes do, into an empty
    # repository: exactly what the images' builds read, and nothing of the
    # host's other projects.
    say "resolving the services' Maven dependencies into $repo (Maven $MAVEN_VERSION, JDK $jdk_major)"
    start=$SECONDS
    rm -rf "$repo"; new_context
    tar -C "$root/services" --exclude=target -cf - . | tar -C "$ctx" -xf -
    (cd "$ctx" && JAVA_HOME=$jdk "$maven/bin/mvn" -B -q -Dstyle.color=never -Dmaven.repo.local="$repo" package -DskipTests >&2 &&
      JAVA_HOME=$jdk "$maven/bin/mvn" -B -q -Dstyle.color=never -Dmaven.repo.local="$repo" org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy \
        -Dartifact="io.opentelemetry.javaagent:opentelemetry-javaagent:$OTEL_JAVAAGENT_VERSION" -DoutputDirectory="$ctx/agent" >&2) ||
      die "the services do not build on the host with Maven $MAVEN_VERSION; fix that first (make build)"
    # The modules' own artifacts are the images' to build. Without the
    # tracking files an artifact counts as local, whichever repository id
    # (a mirror's) it was downloaded through here.
    rm -rf "$repo/dev/tracelab"
    find "$repo" \( -name _remote.repositories -o -name '*.lastUpdated' -o -name resolver-status.properties \) -delete
    touch "$repo/.complete"
    say "resolved in $((SECONDS - start)) s: $(du -sh "$repo" | cut -f1)"
    # Repositories of older keys are of no further use.
    find "$work" -maxdepth 1 -name 'm2-*' -not -name "m2-$repo_key" -exec rm -rf {} +
  fi
  new_context
  link "$jdk" "$ctx/jdk"; link "$maven" "$ctx/maven"; link "$repo" "$ctx/repository"
  printf '<settings>\n  <offline>true</offline>\n</settings>\n' >"$ctx/settings.xml"
  say "building $java_build"
  build "$java_build" java-build
fi

# ---- Java runtime base ----
key=$(content_key "$0" "$here/images/jre/Dockerfile" "$jdk/release" <(echo "$JRE_MODULES"))
jre=tracelab-kind/jre:$jdk_major-$key
if have_image "$jre"; then
  say "Java runtime base $jre (cached)"
else
  say "building $jre (jlink of JDK $jdk_major, with a CDS archive)"
  new_context
  # --generate-cds-archive: the JDK's classes pre-parsed, for the JVMs'
  # start on two cores.
  "$jdk/bin/jlink" --add-modules "$JRE_MODULES" --strip-debug --no-man-pages --no-header-files \
    --compress=zip-6 --generate-cds-archive --output "$ctx/jre" >/dev/null
  build "$jre" jre
fi

# ---- Go build base ----
key=$(content_key "$0" "$here/images/go-build/Dockerfile" "$root/tracelab/go.mod" "$root/tracelab/go.sum" <(echo "$go_version"))
go_build=tracelab-kind/go-build:${go_version#go}-$key
if have_image "$go_build"; then
  say "Go build base $go_build (cached)"
else
  say "building $go_build ($go_version, tracelab's modules)"
  new_context
  link "$goroot" "$ctx/go"
  # tracelab's modules into a module cache of their own, taken from the
  # host's module cache where it has them (a file:// proxy), else from the
  # machine's GOPROXY.
  (cd "$root/tracelab" && GOMODCACHE="$ctx/mod" GOFLAGS=-modcacherw \
    GOPROXY="file://$(go env GOMODCACHE)/cache/download,$(go env GOPROXY)" go mod download) ||
    die "could not download tracelab's Go modules"
  build "$go_build" go-build
fi

echo "JAVA_BUILD_IMAGE=$java_build"
echo "JAVA_RUNTIME_IMAGE=$jre"
echo "GO_IMAGE=$go_build"
echo "RUNTIME_IMAGE=$slim"

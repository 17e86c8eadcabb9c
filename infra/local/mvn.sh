#!/usr/bin/env bash
# Maven on the JDK find-jdk.sh picks. Maven's own libraries (Guice, Guava)
# still call sun.misc.Unsafe, and JDK 24 and later print four WARNING lines
# about it on every build, which read like errors; the option that allows it
# quietly exists from JDK 23 (JEP 471) and is refused by the JDKs before.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
JAVA_HOME=$("$root/infra/local/find-jdk.sh")
export JAVA_HOME
major=$(sed -n 's/^JAVA_VERSION="\([0-9]*\).*/\1/p' "$JAVA_HOME/release")
if [ "${major:-0}" -ge 23 ]; then
  export MAVEN_OPTS="--sun-misc-unsafe-memory-access=allow${MAVEN_OPTS:+ $MAVEN_OPTS}"
fi
exec mvn "$@"

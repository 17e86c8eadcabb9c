#!/usr/bin/env bash
# Prints the home of the newest installed JDK whose major version is at least
# JAVA_MIN_MAJOR (versions.env). JAVA_HOME wins when it qualifies. The
# machine's default java may be older, so the services never rely on PATH.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
. "$root/infra/local/versions.env"

major_of() { # JDK_HOME -> major version, from its release file
  local v
  v=$(sed -n 's/^JAVA_VERSION="\([0-9]*\).*/\1/p' "$1/release" 2>/dev/null) || return 1
  [ -n "$v" ] && [ -x "$1/bin/javac" ] && printf '%s' "$v"
}

best="" best_major=0
# Linux packages, then macOS's JDK folder (Homebrew casks and installers put
# them there), then SDKMAN.
for home in ${JAVA_HOME:-} /usr/lib/jvm/* /opt/java/* /opt/jdk* /Library/Java/JavaVirtualMachines/*/Contents/Home \
  "$HOME"/.sdkman/candidates/java/*; do
  [ -d "$home" ] || continue
  home=$(cd "$home" && pwd -P)
  m=$(major_of "$home") || continue
  if [ "$home" = "${JAVA_HOME:-}" ] && [ "$m" -ge "$JAVA_MIN_MAJOR" ]; then best=$home; break; fi
  if [ "$m" -gt "$best_major" ]; then best=$home best_major=$m; fi
done

if [ -z "$best" ] || [ "$(major_of "$best")" -lt "$JAVA_MIN_MAJOR" ]; then
  echo "find-jdk: no JDK >= $JAVA_MIN_MAJOR found (looked in JAVA_HOME, /usr/lib/jvm, /Library/Java/JavaVirtualMachines and SDKMAN); install one (apt-get install -y openjdk-$JAVA_MIN_MAJOR-jdk-headless, brew install --cask temurin@$JAVA_MIN_MAJOR) or set JAVA_HOME" >&2
  exit 1
fi
printf '%s\n' "$best"

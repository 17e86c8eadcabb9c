#!/usr/bin/env bash
# Starts one of the lab's Java services as a plain process. Its process in
# infra/local/services.process-compose.yaml (generated from
# services/<service>/service.yaml) gives it SERVICE_JAR, JAVA_AGENT, JAVA_OPTS
# and its fixed environment; the variant's settings arrive in
# .state/env/<service>.env, written by tracelab before it (re)starts the
# process, so changing a variant is a restart, as on Kubernetes.
set -euo pipefail
name=${1:?usage: run-java-service.sh SERVICE}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
state=${LAB_STATE:-$root/.state}
: "${SERVICE_JAR:?SERVICE_JAR is not set; start services through tracelab (make up)}"
: "${JAVA_AGENT:?JAVA_AGENT is not set; start services through tracelab (make up)}"

if [ -f "$state/env/$name.env" ]; then set -a; . "$state/env/$name.env"; set +a; fi
# The variant is known only now, so the resource attributes are set here.
export OTEL_RESOURCE_ATTRIBUTES="service.version=${LAB_VERSION:-dev},deployment.environment.name=local,deployment.environment=local,lab.variant=${LAB_VARIANT:-default}"

jar=$root/services/$name/$SERVICE_JAR
[ -f "$jar" ] || { echo "run-java-service: $jar is missing; run 'make build'" >&2; exit 1; }
agent=()
[ "$JAVA_AGENT" = off ] || agent=(-javaagent:"$OTEL_JAVAAGENT_JAR")
# LAB_CPUS (a taskset CPU list, e.g. "1") gives a service a CPU budget of its
# own, the way a container's CPU limit does: a scenario whose bottleneck is
# the service's CPU then measures that service, not what the load and the
# collector happen to take from the same cores. The JVM sizes its GC and
# compiler threads from the same affinity.
# macOS has no way to pin a process to CPUs: there the service runs
# unpinned, and the runner counts the machine's CPUs as its budget.
pin=()
if [ -n "${LAB_CPUS:-}" ] && ! command -v taskset >/dev/null; then
  echo "run-java-service: LAB_CPUS=$LAB_CPUS is not applied: this system has no taskset, so the service may use every CPU" >&2
elif [ -n "${LAB_CPUS:-}" ]; then
  taskset -c "$LAB_CPUS" true 2>/dev/null ||
    { echo "run-java-service: LAB_CPUS=$LAB_CPUS is not a CPU list of this machine (it has $(nproc) CPUs)" >&2; exit 1; }
  pin=(taskset -c "$LAB_CPUS")
fi
# shellcheck disable=SC2086 # JAVA_OPTS is a list of options
exec "${pin[@]}" "$LAB_JAVA_HOME/bin/java" ${JAVA_OPTS:-} "${agent[@]}" -jar "$jar"

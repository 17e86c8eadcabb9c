#!/usr/bin/env bash
# Starts one of the lab's Java services as a plain process, instrumented with
# OpenTelemetry. The variant's startup settings arrive in
# .state/env/<service>.env, written by tracelab before it (re)starts the
# process, so changing a variant is a restart, as on Kubernetes.
set -euo pipefail
name=${1:?usage: run-java-service.sh SERVICE}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
state=${LAB_STATE:-$root/.state}

export OTEL_SERVICE_NAME=$name
export OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:${OTELCOL_OTLP_HTTP_PORT}
export OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf
export OTEL_LOGS_EXPORTER=none
export OTEL_METRIC_EXPORT_INTERVAL=10000
# One nplus1 baseline request makes ~3,200 spans; the default queue (2,048)
# and delay (5 s) would drop spans under load and slow trace arrival.
export OTEL_BSP_MAX_QUEUE_SIZE=65536
export OTEL_BSP_MAX_EXPORT_BATCH_SIZE=2048
export OTEL_BSP_SCHEDULE_DELAY=200

# services/<name>/lab.env holds what is fixed for a service whatever the
# variant: SERVICE_JAR (default target/<name>.jar), JAVA_AGENT=off for a
# service instrumented by its framework (Quarkus), JAVA_OPTS, extra OTEL_*.
SERVICE_JAR=target/$name.jar
JAVA_AGENT=on
for env_file in "$root/services/$name/lab.env" "$state/env/$name.env"; do
  if [ -f "$env_file" ]; then set -a; . "$env_file"; set +a; fi
done
export OTEL_RESOURCE_ATTRIBUTES="service.version=${LAB_VERSION:-dev},deployment.environment.name=local,deployment.environment=local,lab.variant=${LAB_VARIANT:-default}"

jar=$root/services/$name/$SERVICE_JAR
[ -f "$jar" ] || { echo "run-java-service: $jar is missing; run 'make build'" >&2; exit 1; }
agent=()
[ "$JAVA_AGENT" = off ] || agent=(-javaagent:"$OTEL_JAVAAGENT_JAR")
# LAB_CPUS (a taskset CPU list, e.g. "1") gives a service a CPU budget of its
# own, the way a container's CPU limit does: a scenario whose bottleneck is
# the service's CPU then measures that service, not what k6 and the
# collector happen to take from the same cores. The JVM sizes its GC and
# compiler threads from the same affinity.
pin=()
if [ -n "${LAB_CPUS:-}" ]; then
  taskset -c "$LAB_CPUS" true 2>/dev/null ||
    { echo "run-java-service: LAB_CPUS=$LAB_CPUS is not a CPU list of this machine (it has $(nproc) CPUs)" >&2; exit 1; }
  pin=(taskset -c "$LAB_CPUS")
fi
# shellcheck disable=SC2086 # JAVA_OPTS is a list of options
exec "${pin[@]}" "$LAB_JAVA_HOME/bin/java" -Xms128m -Xmx512m -XX:+UseSerialGC ${JAVA_OPTS:-} \
  "${agent[@]}" -jar "$jar"

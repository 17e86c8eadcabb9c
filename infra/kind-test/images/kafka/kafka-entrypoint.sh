#!/bin/sh
# The part of the apache/kafka image that k8s/base/data/kafka.yaml relies
# on: every KAFKA_* variable but the JVM's becomes a line of
# /opt/kafka/config/server.properties (KAFKA_LOG_DIRS -> log.dirs; "__" is
# "_", "___" is "-"), an unformatted log directory is formatted once with
# CLUSTER_ID, then the broker runs with KAFKA_HEAP_OPTS.
set -euf  # -f: the classpath below is a Java wildcard, not a glob
: "${CLUSTER_ID:?CLUSTER_ID is not set: the image formats the log directory with it}"
config=/opt/kafka/config/server.properties
: >"$config"
for name in $(env | sed -n 's/^\(KAFKA_[A-Za-z0-9_]*\)=.*/\1/p' | sort); do
  case $name in
    # The JVM's and the launcher's, not the broker's.
    KAFKA_HEAP_OPTS | KAFKA_OPTS | KAFKA_JMX_OPTS | KAFKA_JVM_PERFORMANCE_OPTS | KAFKA_GC_LOG_OPTS | \
      KAFKA_LOG4J_OPTS | KAFKA_LOG4J_ROOT_LOGLEVEL | KAFKA_LOG4J_LOGGERS | KAFKA_TOOLS_LOG4J_LOGLEVEL) continue ;;
  esac
  key=$(printf '%s' "${name#KAFKA_}" | tr 'A-Z' 'a-z' | sed -e 's/___/-/g' -e 's/__/@/g' -e 's/_/./g' -e 's/@/_/g')
  printf '%s=%s\n' "$key" "$(printenv "$name")" >>"$config"
done

java="java -cp /opt/kafka/libs/* -Dlog4j2.configurationFile=/opt/kafka/config/log4j2.yaml"
# --ignore-formatted: a volume formatted before keeps its log.
$java -Xmx256m kafka.tools.StorageTool format --ignore-formatted --cluster-id "$CLUSTER_ID" --config "$config"
# shellcheck disable=SC2086 # option lists
exec $java ${KAFKA_HEAP_OPTS:--Xmx1G -Xms1G} \
  ${KAFKA_JVM_PERFORMANCE_OPTS:--XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:InitiatingHeapOccupancyPercent=35 -XX:+ExplicitGCInvokesConcurrent -Djava.awt.headless=true} \
  ${KAFKA_OPTS:-} kafka.Kafka "$config"

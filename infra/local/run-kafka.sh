#!/usr/bin/env bash
# Runs the lab's Kafka broker (single-node KRaft) on 127.0.0.1:KAFKA_PORT from
# the jars tools.sh fetched, then creates the lab's topics and marks itself
# ready. Its data starts empty at every start, like Prometheus's: a run's
# numbers live in its result.json, and a fresh log keeps every run alike.
set -euo pipefail
trap 'echo "run-kafka: failed at line $LINENO (exit $?)" >&2' ERR
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
state=${LAB_STATE:-$root/.state}
if [ -z "${KAFKA_LIBS:-}" ] && [ -f "$state/tools.env" ]; then . "$state/tools.env"; fi
: "${KAFKA_LIBS:?KAFKA_LIBS is not set; run infra/local/tools.sh}"
: "${KAFKA_PORT:?KAFKA_PORT is not set (infra/local/ports.env)}"
: "${KAFKA_CONTROLLER_PORT:?KAFKA_CONTROLLER_PORT is not set (infra/local/ports.env)}"
: "${KAFKA_PROXIED_PORT:?KAFKA_PROXIED_PORT is not set (infra/local/ports.env)}"
: "${KAFKA_PROXY_PORT:?KAFKA_PROXY_PORT is not set (infra/local/ports.env)}"
export LAB_STATE=$state
# Topic name and partitions. One partition: the producer's batches for a
# topic then share one queue, which is where the contention of case study
# 001 happens (RecordAccumulator, one deque per partition).
topics=("events:1")

echo "run-kafka: formatting a fresh log in $state/data/kafka"
ready=$state/run/kafka.ready
data=$state/data/kafka
rm -f "$ready"
rm -rf "$data"
mkdir -p "$state/run" "$data"
"$root/infra/local/expand-env.sh" <"$root/infra/local/kafka.properties" >"$state/kafka.properties"

java=("$LAB_JAVA_HOME/bin/java" -cp "$KAFKA_LIBS/*" -Dlog4j2.configurationFile="$root/infra/local/kafka-log4j2.yaml")
"${java[@]}" -Xmx256m kafka.tools.StorageTool format --standalone \
  --cluster-id "$("${java[@]}" kafka.tools.StorageTool random-uuid)" --config "$state/kafka.properties" >/dev/null

# SerialGC and a small heap: two cores are shared by the whole stack.
"${java[@]}" -Xms256m -Xmx512m -XX:+UseSerialGC kafka.Kafka "$state/kafka.properties" &
broker=$!
trap 'kill -TERM $broker 2>/dev/null; wait $broker' TERM INT
# The marker holds this script's pid, and the readiness probe checks that
# pid is alive: a marker left by a killed run must not make a new start
# look ready before its topics exist.
trap 'rm -f "$ready"' EXIT

for spec in "${topics[@]}"; do
  # The admin client retries until the broker answers.
  "${java[@]}" -Xmx128m org.apache.kafka.tools.TopicCommand --bootstrap-server "127.0.0.1:$KAFKA_PORT" \
    --create --if-not-exists --topic "${spec%%:*}" --partitions "${spec##*:}" --replication-factor 1
done
echo $$ >"$ready"
echo "run-kafka: ready on 127.0.0.1:$KAFKA_PORT (and 127.0.0.1:$KAFKA_PROXIED_PORT behind toxiproxy's $KAFKA_PROXY_PORT), topics: ${topics[*]}"
wait $broker

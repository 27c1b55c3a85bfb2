#!/usr/bin/env bash
# Runs the benchmarks: every scenario, for delay-queue, for Redisson's RDelayedQueue and, when
# Node is installed, for BullMQ (benchmarks/bullmq, installed here with npm ci from its lock file),
# each against its own private redis-server (loopback, free port, no persistence), stopped by PID.
# Prints one JSON line per scenario and queue, and appends them to benchmarks/target/results.jsonl.
#
#   benchmarks/run.sh                      all scenarios, all queues
#   benchmarks/run.sh drain lateness       some scenarios
#   QUEUES=delay-queue benchmarks/run.sh   one queue (delay-queue, redisson or bullmq)
#   ARGS="--backlog=1000000" benchmarks/run.sh backlog
#   BULLMQ_ARGS="--messages=5000"          BullMQ's options instead of ARGS (default: ARGS)
#   JAVA_OPTS="-agentpath:..."             options of the JVM that runs the Java queues (a profiler)
#   REDIS_SERVER=/path/to/redis-server     another server binary (default: the one on PATH)
set -euo pipefail
cd "$(dirname "$0")/.."

scenarios=("$@")
if [ ${#scenarios[@]} -eq 0 ]; then
  scenarios=(enqueue enqueue-batch drain lateness memory idle crash topics backlog cluster dashboard groups groups-limit)
fi
if [ -n "${QUEUES:-}" ]; then
  queues=($QUEUES)
  bullmq_default=false
elif command -v node >/dev/null && command -v npm >/dev/null; then
  queues=(delay-queue redisson bullmq)
  bullmq_default=true
else
  echo "No Node on PATH: BullMQ left out" >&2
  queues=(delay-queue redisson)
  bullmq_default=false
fi
redis_server=${REDIS_SERVER:-$(command -v redis-server || true)}
if [ -z "$redis_server" ]; then
  echo "No redis-server on PATH: install Redis or set REDIS_SERVER" >&2
  exit 1
fi
jar=benchmarks/target/delay-queue-benchmarks.jar
results=benchmarks/target/results.jsonl
logs=benchmarks/target/logs
mkdir -p "$logs"

# BullMQ: its exact dependencies, from the committed lock file, once per run.
if [[ " ${queues[*]} " == *" bullmq "* ]]; then
  if ! command -v node >/dev/null || ! npm ci --prefix benchmarks/bullmq --no-audit --no-fund >"$logs/npm-ci.log" 2>&1 \
    || [ ! -d benchmarks/bullmq/node_modules ]; then
    if [ "$bullmq_default" = true ]; then
      echo "npm ci for BullMQ failed (see $logs/npm-ci.log): BullMQ left out" >&2
      queues=(delay-queue redisson)
    else
      echo "BullMQ needs Node 20 and npm ci --prefix benchmarks/bullmq (see $logs/npm-ci.log)" >&2
      exit 1
    fi
  fi
fi
java_queues=false
if [[ " ${queues[*]} " == *" delay-queue "* || " ${queues[*]} " == *" redisson "* ]]; then
  java_queues=true
  ./mvnw -q -B -DskipTests package -pl benchmarks -am
fi

free_port() {
  local port
  while true; do
    port=$((20000 + RANDOM % 30000))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      echo "$port"
      return
    fi
  done
}

wait_for_redis() {
  local port=$1
  for _ in $(seq 1 100); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$port"; printf 'PING\r\n' >&3; read -r -t 1 reply <&3; [[ $reply == +PONG* ]]) 2>/dev/null; then
      return 0
    fi
    sleep 0.1
  done
  echo "redis-server on port $port did not answer" >&2
  return 1
}

# One scenario for BullMQ, Node's harness in benchmarks/bullmq, against the server on the port.
run_bullmq() {
  local scenario=$1 port=$2
  # shellcheck disable=SC2086
  node benchmarks/bullmq/bench.mjs --scenario="$scenario" --redis-url="redis://127.0.0.1:$port" ${BULLMQ_ARGS-${ARGS:-}} \
    2>"$logs/$scenario-bullmq.err" | grep '^{' | tee -a "$results" \
    || echo "{\"scenario\":\"$scenario\",\"queue\":\"bullmq\",\"failed\":true}" | tee -a "$results"
}

# The cluster scenario: three primaries in cluster mode, formed by redis-cli, for delay-queue only.
run_cluster() {
  local ports=() pids=() nodes=""
  for i in 1 2 3; do
    local port dir
    port=$(free_port)
    dir=$(mktemp -d)
    "$redis_server" --port "$port" --bind 127.0.0.1 --save '' --appendonly no --cluster-enabled yes \
      --cluster-config-file "$dir/nodes.conf" --dir "$dir" --logfile "$PWD/$logs/redis-cluster-$i.log" &
    pids+=($!)
    ports+=("$port")
    nodes="$nodes${nodes:+,}127.0.0.1:$port"
  done
  trap 'kill "${pids[@]}" 2>/dev/null || true' EXIT
  for port in "${ports[@]}"; do wait_for_redis "$port"; done
  "$(dirname "$redis_server")/redis-cli" --cluster create ${nodes//,/ } --cluster-replicas 0 --cluster-yes >"$logs/cluster-create.log"
  until "$(dirname "$redis_server")/redis-cli" -p "${ports[0]}" cluster info | grep -q cluster_state:ok; do sleep 0.2; done
  # shellcheck disable=SC2086
  java ${JAVA_OPTS:-} -jar "$jar" --scenario=cluster --queue=delay-queue --redis-url="redis://127.0.0.1:${ports[0]}" \
    --cluster-nodes="$nodes" ${ARGS:-} 2>"$logs/cluster-delay-queue.err" | grep '^{' | tee -a "$results" \
    || echo '{"scenario":"cluster","queue":"delay-queue","failed":true}' | tee -a "$results"
  kill "${pids[@]}"
  wait "${pids[@]}" 2>/dev/null || true
  trap - EXIT
}

for scenario in "${scenarios[@]}"; do
  if [ "$scenario" = cluster ]; then
    if [ "$java_queues" = true ]; then
      run_cluster
    fi
    if [[ " ${queues[*]} " == *" bullmq "* ]]; then
      run_bullmq cluster 0
    fi
    continue
  fi
  for queue in "${queues[@]}"; do
    port=$(free_port)
    "$redis_server" --port "$port" --bind 127.0.0.1 --save '' --appendonly no \
      --logfile "$logs/redis-$scenario-$queue.log" &
    redis_pid=$!
    trap 'kill $redis_pid 2>/dev/null || true' EXIT
    wait_for_redis "$port"
    if [ "$queue" = bullmq ]; then
      run_bullmq "$scenario" "$port"
    else
      # shellcheck disable=SC2086
      java ${JAVA_OPTS:-} -jar "$jar" --scenario="$scenario" --queue="$queue" --redis-url="redis://127.0.0.1:$port" ${ARGS:-} \
        2>"$logs/$scenario-$queue.err" | grep '^{' | tee -a "$results" || echo "{\"scenario\":\"$scenario\",\"queue\":\"$queue\",\"failed\":true}" | tee -a "$results"
    fi
    kill "$redis_pid"
    wait "$redis_pid" 2>/dev/null || true
    trap - EXIT
  done
done

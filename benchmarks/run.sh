#!/usr/bin/env bash
# Runs the benchmarks: every scenario, for delay-queue and for Redisson's RDelayedQueue, each
# against its own private redis-server (loopback, free port, no persistence), stopped by PID.
# Prints one JSON line per scenario and queue, and appends them to benchmarks/target/results.jsonl.
#
#   benchmarks/run.sh                      all scenarios, both queues
#   benchmarks/run.sh drain lateness       some scenarios
#   QUEUES=delay-queue benchmarks/run.sh   one queue
#   ARGS="--backlog=1000000" benchmarks/run.sh backlog
#   REDIS_SERVER=/path/to/redis-server     another server binary (default: the one on PATH)
set -euo pipefail
cd "$(dirname "$0")/.."

scenarios=("$@")
if [ ${#scenarios[@]} -eq 0 ]; then
  scenarios=(enqueue enqueue-batch drain lateness memory idle crash topics backlog cluster)
fi
queues=(${QUEUES:-delay-queue redisson})
redis_server=${REDIS_SERVER:-$(command -v redis-server || true)}
if [ -z "$redis_server" ]; then
  echo "No redis-server on PATH: install Redis or set REDIS_SERVER" >&2
  exit 1
fi
jar=benchmarks/target/delay-queue-benchmarks.jar
./mvnw -q -B -DskipTests package -pl benchmarks -am
results=benchmarks/target/results.jsonl
logs=benchmarks/target/logs
mkdir -p "$logs"

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
  java -jar "$jar" --scenario=cluster --queue=delay-queue --redis-url="redis://127.0.0.1:${ports[0]}" \
    --cluster-nodes="$nodes" ${ARGS:-} 2>"$logs/cluster-delay-queue.err" | grep '^{' | tee -a "$results" \
    || echo '{"scenario":"cluster","queue":"delay-queue","failed":true}' | tee -a "$results"
  kill "${pids[@]}"
  wait "${pids[@]}" 2>/dev/null || true
  trap - EXIT
}

for scenario in "${scenarios[@]}"; do
  if [ "$scenario" = cluster ]; then
    run_cluster
    continue
  fi
  for queue in "${queues[@]}"; do
    port=$(free_port)
    "$redis_server" --port "$port" --bind 127.0.0.1 --save '' --appendonly no \
      --logfile "$logs/redis-$scenario-$queue.log" &
    redis_pid=$!
    trap 'kill $redis_pid 2>/dev/null || true' EXIT
    wait_for_redis "$port"
    # shellcheck disable=SC2086
    java -jar "$jar" --scenario="$scenario" --queue="$queue" --redis-url="redis://127.0.0.1:$port" ${ARGS:-} \
      2>"$logs/$scenario-$queue.err" | grep '^{' | tee -a "$results" || echo "{\"scenario\":\"$scenario\",\"queue\":\"$queue\",\"failed\":true}" | tee -a "$results"
    kill "$redis_pid"
    wait "$redis_pid" 2>/dev/null || true
    trap - EXIT
  done
done

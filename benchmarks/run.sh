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
  scenarios=(enqueue enqueue-batch drain lateness memory idle crash topics backlog)
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

for scenario in "${scenarios[@]}"; do
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

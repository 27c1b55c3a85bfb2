package io.github.delayqueue.benchmarks;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Sends messages from several producer threads as fast as the queue takes them, one by
 * one or in batches, and reports messages per second.
 */
final class EnqueuePhase {

	private EnqueuePhase() {
	}

	/**
	 * Sends messages due between {@code minDelayMillis} and {@code maxDelayMillis} from
	 * now.
	 * @param run the run
	 * @param client the queue
	 * @param topic the topic
	 * @param messages how many messages in all
	 * @param threads how many producer threads
	 * @param batchSize 1 to send one by one, else the size of each {@code sendAll}; 0 to
	 * send one by one without waiting ({@code sendAsync})
	 * @param minDelayMillis the shortest delay
	 * @param maxDelayMillis the longest delay
	 * @return seconds, messages per second, Redis CPU time and commands per message, and
	 * the p50, p99 and longest time a call that waits took
	 */
	static Map<String, Object> run(Run run, QueueClient client, String topic, int messages, int threads, int batchSize,
			long minDelayMillis, long maxDelayMillis) throws Exception {
		ExecutorService producers = Executors.newFixedThreadPool(threads);
		try {
			long cpuBefore = run.server().cpuMicros();
			long callsBefore = run.server().commandCalls();
			long clientCpuBefore = ClientCpu.micros();
			long start = System.nanoTime();
			List<Future<long[]>> done = new ArrayList<>();
			for (int t = 0; t < threads; t++) {
				int from = (int) ((long) messages * t / threads);
				int to = (int) ((long) messages * (t + 1) / threads);
				done.add(producers
					.submit(() -> send(client, topic, from, to, batchSize, minDelayMillis, maxDelayMillis)));
			}
			List<long[]> latencies = new ArrayList<>();
			for (Future<long[]> future : done) {
				latencies.add(future.get());
			}
			double seconds = (System.nanoTime() - start) / 1e9;
			Map<String, Object> result = new LinkedHashMap<>();
			result.put("messages", messages);
			result.put("seconds", seconds);
			result.put("msg_per_s", Math.round(messages / seconds));
			result.put("client_cpu_us_per_msg", (double) (ClientCpu.micros() - clientCpuBefore) / messages);
			result.put("redis_cpu_us_per_msg", (double) (run.server().cpuMicros() - cpuBefore) / messages);
			result.put("redis_commands_per_msg", (double) (run.server().commandCalls() - callsBefore) / messages);
			if (batchSize != 0) {
				long[] all = latencies.stream().flatMapToLong(Arrays::stream).sorted().toArray();
				result.put("call_p50_ms", percentileMillis(all, 50));
				result.put("call_p99_ms", percentileMillis(all, 99));
				result.put("call_max_ms", percentileMillis(all, 100));
			}
			return result;
		}
		finally {
			producers.shutdownNow();
		}
	}

	private static double percentileMillis(long[] sortedNanos, double percentile) {
		if (sortedNanos.length == 0) {
			return 0;
		}
		int index = Math.max(0, (int) Math.ceil(percentile / 100.0 * sortedNanos.length) - 1);
		return Math.round(sortedNanos[index] / 1e3) / 1e3;
	}

	/**
	 * Sends messages {@code from} to {@code to}.
	 * @return the time each call that waited took, in nanoseconds (none for
	 * {@code sendAsync})
	 */
	private static long[] send(QueueClient client, String topic, int from, int to, int batchSize, long minDelayMillis,
			long maxDelayMillis) {
		long[] callNanos = new long[(batchSize == 0) ? 0 : (to - from + batchSize - 1) / batchSize];
		int calls = 0;
		ThreadLocalRandom random = ThreadLocalRandom.current();
		List<String> payloads = new ArrayList<>(Math.max(1, batchSize));
		long[] dueAt = new long[Math.max(1, batchSize)];
		for (int i = from; i < to; i++) {
			long due = System.currentTimeMillis() + random.nextLong(minDelayMillis, maxDelayMillis + 1);
			String payload = Payloads.of(i, due);
			if (batchSize == 0) {
				client.sendAsync(topic, payload, due);
				continue;
			}
			if (batchSize == 1) {
				long sent = System.nanoTime();
				client.send(topic, payload, due);
				callNanos[calls++] = System.nanoTime() - sent;
				continue;
			}
			dueAt[payloads.size()] = due;
			payloads.add(payload);
			if (payloads.size() == batchSize || i == to - 1) {
				long sent = System.nanoTime();
				client.sendAll(topic, payloads,
						(payloads.size() == batchSize) ? dueAt : Arrays.copyOf(dueAt, payloads.size()));
				callNanos[calls++] = System.nanoTime() - sent;
				payloads.clear();
			}
		}
		client.awaitSends();
		return Arrays.copyOf(callNanos, calls);
	}

}

package io.github.delayqueue.benchmarks;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.locks.LockSupport;

/**
 * Sends a steady stream of short-delay messages and measures how late each arrives, and
 * what Redis spends per delivered message (CPU time and commands, script-internal ones
 * included).
 */
final class LatenessPhase {

	private LatenessPhase() {
	}

	/**
	 * Runs the phase.
	 * @param run the run
	 * @param client the queue, with consumers on the topic
	 * @param handler the consumers' handler
	 * @param topic the topic
	 * @param rate messages per second
	 * @param duration how long to send
	 * @param minDelayMillis the shortest delay
	 * @param maxDelayMillis the longest delay
	 * @return the figures
	 */
	static Map<String, Object> run(Run run, QueueClient client, SwitchableHandler handler, String topic, int rate,
			Duration duration, long minDelayMillis, long maxDelayMillis) throws InterruptedException {
		int messages = (int) (rate * duration.toSeconds());
		Deliveries deliveries = new Deliveries(messages);
		handler.set(deliveries);
		RedisServer server = run.server();
		long cpuBefore = server.cpuMicros();
		Map<String, Long> callsBefore = server.callsByCommand();
		long scriptBefore = server.scriptMicros();
		long clientCpuBefore = ClientCpu.micros();
		ThreadLocalRandom random = ThreadLocalRandom.current();
		long start = System.nanoTime();
		long lastDue = 0;
		for (int i = 0; i < messages; i++) {
			long sendAt = start + i * 1_000_000_000L / rate;
			long wait = sendAt - System.nanoTime();
			if (wait > 0) {
				LockSupport.parkNanos(wait);
			}
			long due = System.currentTimeMillis() + random.nextLong(minDelayMillis, maxDelayMillis + 1);
			client.send(topic, Payloads.of(i, due), due);
			lastDue = Math.max(lastDue, due);
		}
		long deadline = lastDue + 30_000;
		while (!deliveries.complete() && System.currentTimeMillis() < deadline) {
			Thread.sleep(10);
		}
		long cpu = server.cpuMicros() - cpuBefore;
		long script = server.scriptMicros() - scriptBefore;
		long clientCpu = ClientCpu.micros() - clientCpuBefore;
		Map<String, Long> callsAfter = server.callsByCommand();
		long delivered = Math.max(1, deliveries.distinct());
		Map<String, Object> result = new LinkedHashMap<>();
		result.put("messages", messages);
		result.put("rate_per_s", rate);
		result.putAll(deliveries.summary());
		result.put("redis_cpu_us_per_msg", (double) cpu / delivered);
		result.put("redis_script_us_per_msg", (double) script / delivered);
		result.put("client_cpu_us_per_msg", (double) clientCpu / delivered);
		result.put("redis_commands_per_msg", (double) total(callsAfter, callsBefore) / delivered);
		result.put("commands_per_msg_by_name", perMessage(callsAfter, callsBefore, delivered));
		return result;
	}

	private static long total(Map<String, Long> after, Map<String, Long> before) {
		long total = 0;
		for (Map.Entry<String, Long> entry : after.entrySet()) {
			total += entry.getValue() - before.getOrDefault(entry.getKey(), 0L);
		}
		return total;
	}

	private static Map<String, Object> perMessage(Map<String, Long> after, Map<String, Long> before, long delivered) {
		Map<String, Object> perMessage = new LinkedHashMap<>();
		after.forEach((command, calls) -> {
			long delta = calls - before.getOrDefault(command, 0L);
			if (delta > 0) {
				perMessage.put(command, (double) delta / delivered);
			}
		});
		return perMessage;
	}

}

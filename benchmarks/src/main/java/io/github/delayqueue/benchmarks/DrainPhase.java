package io.github.delayqueue.benchmarks;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Makes many messages due at the same instant and measures how fast the consumers drain
 * them, while a side client watches for Redis stalls.
 */
final class DrainPhase {

	private DrainPhase() {
	}

	/**
	 * Runs the phase.
	 * @param run the run
	 * @param client the queue, with consumers on the topic
	 * @param handler the consumers' handler
	 * @param topic the topic
	 * @param messages how many messages
	 * @param dueIn how long after the phase starts they are all due; enqueueing must end
	 * before
	 * @param timeout how long to wait for the drain after the due time
	 * @return the figures
	 */
	static Map<String, Object> run(Run run, QueueClient client, SwitchableHandler handler, String topic, int messages,
			Duration dueIn, Duration timeout) throws Exception {
		Deliveries deliveries = new Deliveries(messages);
		handler.set(deliveries);
		long due = System.currentTimeMillis() + dueIn.toMillis();
		long enqueueStart = System.nanoTime();
		int batch = (run.kind() == QueueClient.Kind.DELAY_QUEUE) ? 1000 : 1;
		EnqueuePhase.run(run, client, topic, messages, 4, batch, due - System.currentTimeMillis(),
				due - System.currentTimeMillis());
		double enqueueSeconds = (System.nanoTime() - enqueueStart) / 1e9;
		boolean overran = System.currentTimeMillis() >= due;
		Thread.sleep(Math.max(0, due - System.currentTimeMillis() - 200));
		run.server().watchSlowCommands();
		long cpuBefore = run.server().cpuMicros();
		long clientCpuBefore = ClientCpu.micros();
		try (PingProbe probe = new PingProbe(run.redisUrl())) {
			long deadline = due + timeout.toMillis();
			while (!deliveries.complete() && System.currentTimeMillis() < deadline) {
				Thread.sleep(5);
			}
			Thread.sleep(200);
			double drainSeconds = (deliveries.lastArrivalMillis() - due) / 1000.0;
			Map<String, Object> result = new LinkedHashMap<>();
			result.put("messages", messages);
			result.put("enqueue_s", enqueueSeconds);
			result.put("enqueue_overran_due_time", overran);
			result.put("delivered", deliveries.distinct());
			result.put("duplicates", deliveries.duplicates());
			result.put("drain_s", drainSeconds);
			result.put("msg_per_s", Math.round(deliveries.distinct() / drainSeconds));
			Map<String, Double> arrivals = new LinkedHashMap<>();
			for (double percentile : new double[] { 0.1, 10, 50, 90, 99, 100 }) {
				arrivals.put("p" + percentile, deliveries.latenessMillis(percentile));
			}
			// When the messages arrived after their due time: the start and the tail of
			// the drain.
			result.put("arrival_ms", arrivals);
			result.put("redis_cpu_us_per_msg", (double) (run.server().cpuMicros() - cpuBefore) / messages);
			result.put("client_cpu_us_per_msg", (double) (ClientCpu.micros() - clientCpuBefore) / messages);
			result.put("slowest_ping_ms", probe.slowestMillis());
			result.put("pings_over_5ms", probe.stalls());
			result.put("pings", probe.pings());
			result.put("slowest_redis_command", run.server().slowestCommand());
			return result;
		}
	}

}

package io.github.delayqueue.benchmarks;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.locks.LockSupport;

/**
 * A steady stream of short-delay messages on a 3-primary Redis Cluster ({@code
 * --cluster-nodes}, the primaries): on one topic, on one topic with three partitions, and
 * spread over three topics whose keys live on the three primaries ({@code orders},
 * {@code payments}, {@code reminders}); what each primary spends of Redis CPU time and
 * commands, and how late messages are. One topic lives on one primary; its partitions,
 * like separate topics, spread the load over all three.
 */
final class ClusterScenario {

	private static final List<Layout> LAYOUTS = List.of(new Layout("1_topic", List.of("orders"), 1),
			new Layout("1_topic_3_partitions", List.of("orders"), 3),
			new Layout("3_topics", List.of("orders", "payments", "reminders"), 1));

	private ClusterScenario() {
	}

	static Map<String, Object> run(Run run) throws Exception {
		if (run.kind() == QueueClient.Kind.REDISSON) {
			return Map.of("supported", false, "why", "measured for delay-queue only");
		}
		String nodes = run.options().required("cluster-nodes");
		int rate = run.options().integer("rate", 2000);
		Duration duration = run.options().duration("duration", Duration.ofSeconds(20));
		int consumers = run.options().integer("consumers", 4);
		Duration warmUp = run.options().duration("warm-up", Duration.ofSeconds(5));
		List<RedisServer> primaries = new ArrayList<>();
		try {
			for (String node : nodes.split(",")) {
				RedisServer primary = new RedisServer("redis://" + node.strip());
				primary.flushAll();
				primaries.add(primary);
			}
			Map<String, Object> result = new LinkedHashMap<>();
			for (Layout layout : LAYOUTS) {
				List<String> topics = layout.topics();
				SwitchableHandler handler = new SwitchableHandler();
				Map<String, String> properties = new LinkedHashMap<>(run.listenerProperties());
				properties.put("spring.data.redis.cluster.nodes", nodes);
				topics.forEach((topic) -> properties.put("delay-queue.topics." + topic + ".partitions",
						Integer.toString(layout.partitions())));
				try (QueueClient client = new DelayQueueClient(run.redisUrl(),
						new ConsumerSpec(topics, consumers, handler), properties)) {
					send(client, topics, new Deliveries((int) (rate * warmUp.toSeconds())), handler, rate, warmUp,
							null);
					result.put(layout.name(), send(client, topics, new Deliveries((int) (rate * duration.toSeconds())),
							handler, rate, duration, primaries));
				}
			}
			return result;
		}
		finally {
			primaries.forEach(RedisServer::close);
		}
	}

	/**
	 * Sends {@code rate} messages a second, round robin over the topics, due 100 ms to 1
	 * s later, and waits for them.
	 * @param primaries the primaries to report on, or {@code null} for a warm-up
	 */
	private static Map<String, Object> send(QueueClient client, List<String> topics, Deliveries deliveries,
			SwitchableHandler handler, int rate, Duration duration, List<RedisServer> primaries)
			throws InterruptedException {
		handler.set(deliveries);
		int messages = (int) (rate * duration.toSeconds());
		long[] cpuBefore = new long[(primaries != null) ? primaries.size() : 0];
		long[] callsBefore = new long[cpuBefore.length];
		for (int p = 0; p < cpuBefore.length; p++) {
			cpuBefore[p] = primaries.get(p).cpuMicros();
			callsBefore[p] = primaries.get(p).commandCalls();
		}
		ThreadLocalRandom random = ThreadLocalRandom.current();
		long start = System.nanoTime();
		long lastDue = 0;
		for (int i = 0; i < messages; i++) {
			long wait = start + i * 1_000_000_000L / rate - System.nanoTime();
			if (wait > 0) {
				LockSupport.parkNanos(wait);
			}
			long due = System.currentTimeMillis() + random.nextLong(100, 1001);
			client.send(topics.get(i % topics.size()), Payloads.of(i, due), due);
			lastDue = Math.max(lastDue, due);
		}
		long deadline = lastDue + 30_000;
		while (!deliveries.complete() && System.currentTimeMillis() < deadline) {
			Thread.sleep(10);
		}
		Map<String, Object> result = new LinkedHashMap<>();
		result.put("messages", messages);
		result.putAll(deliveries.summary());
		for (int p = 0; p < cpuBefore.length; p++) {
			result.put("primary_" + (p + 1) + "_cpu_ms", (primaries.get(p).cpuMicros() - cpuBefore[p]) / 1000);
			result.put("primary_" + (p + 1) + "_commands", primaries.get(p).commandCalls() - callsBefore[p]);
		}
		return result;
	}

	/** Where the stream goes: topics, each with a number of partitions. */
	private record Layout(String name, List<String> topics, int partitions) {
	}

}

package io.github.delayqueue.benchmarks;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The scenarios of issue 5, each measuring one queue against a freshly flushed Redis.
 * Each returns its figures for the report line.
 */
final class Scenarios {

	private static final long MINUTE = 60_000;

	private static final long DAY = 24 * 60 * MINUTE;

	private Scenarios() {
	}

	static Map<String, Object> run(String scenario, Run run) throws Exception {
		return switch (scenario) {
			case "enqueue" -> enqueue(run, 1);
			case "enqueue-batch" -> enqueue(run, run.options().integer("batch", 100));
			case "enqueue-async" -> enqueue(run, 0);
			case "drain" -> drain(run);
			case "lateness" -> lateness(run);
			case "memory" -> memory(run);
			case "backlog" -> backlog(run);
			case "idle" -> idle(run);
			case "crash" -> CrashScenario.run(run);
			case "topics" -> TopicsScenario.run(run);
			case "cluster" -> ClusterScenario.run(run);
			case "dashboard" -> DashboardScenario.run(run);
			case "groups" -> GroupsScenario.run(run);
			case "groups-limit" -> GroupConcurrencyScenario.run(run);
			default -> throw new IllegalArgumentException("Unknown scenario '" + scenario
					+ "': use enqueue, enqueue-batch, enqueue-async, drain, lateness, memory, backlog, idle, crash, topics,"
					+ " cluster, dashboard, groups or groups-limit");
		};
	}

	/** 200k sends due in 5 to 65 minutes, from 4 producer threads. */
	private static Map<String, Object> enqueue(Run run, int batchSize) throws Exception {
		int messages = run.options().integer("messages", 200_000);
		int threads = run.options().integer("threads", (batchSize == 0) ? 1 : 4);
		if (batchSize > 1 && run.kind() == QueueClient.Kind.REDISSON) {
			return Map.of("supported", false, "why", "RDelayedQueue has no batch offer");
		}
		if (batchSize == 0 && run.kind() == QueueClient.Kind.REDISSON) {
			return Map.of("supported", false, "why", "not measured: the adapter sends with offer");
		}
		try (QueueClient client = run.open(ConsumerSpec.none())) {
			if (batchSize == 0) {
				client.limitSendsOnTheirWay(run.options().integer("on-their-way", 1000));
			}
			EnqueuePhase.run(run, client, "warm-up", run.options().integer("warm-up-messages", 100_000), threads,
					batchSize, 5 * MINUTE, 65 * MINUTE);
			Map<String, Object> result = EnqueuePhase.run(run, client, "enqueue", messages, threads, batchSize,
					5 * MINUTE, 65 * MINUTE);
			result.put("threads", threads);
			result.put("batch", batchSize);
			return result;
		}
	}

	/** 100k messages due at the same instant, 4 consumer threads. */
	private static Map<String, Object> drain(Run run) throws Exception {
		SwitchableHandler handler = new SwitchableHandler();
		try (QueueClient client = run.open(ConsumerSpec.of("drain", run.options().integer("consumers", 4), handler))) {
			Duration dueIn = run.options().duration("due-in", Duration.ofSeconds(15));
			DrainPhase.run(run, client, handler, "drain", run.options().integer("warm-up-messages", 20_000), dueIn,
					Duration.ofMinutes(5));
			return DrainPhase.run(run, client, handler, "drain", run.options().integer("messages", 100_000), dueIn,
					Duration.ofMinutes(5));
		}
	}

	/** 2,000 msg/s for 20 s, delays 100 ms to 2 s; Redis cost per delivered message. */
	private static Map<String, Object> lateness(Run run) throws Exception {
		SwitchableHandler handler = new SwitchableHandler();
		try (QueueClient client = run
			.open(ConsumerSpec.of("lateness", run.options().integer("consumers", 4), handler))) {
			return latenessAfterWarmUp(run, client, handler, "lateness");
		}
	}

	private static Map<String, Object> latenessAfterWarmUp(Run run, QueueClient client, SwitchableHandler handler,
			String topic) throws InterruptedException {
		int rate = run.options().integer("rate", 2000);
		Duration duration = run.options().duration("duration", Duration.ofSeconds(20));
		Duration warmUp = run.options().duration("warm-up", Duration.ofSeconds(15));
		LatenessPhase.run(run, client, handler, topic, rate, warmUp, 100, 2000);
		return LatenessPhase.run(run, client, handler, topic, rate, duration, 100, 2000);
	}

	/**
	 * 100k pending messages with 100-byte payloads: bytes of Redis memory per message,
	 * per key.
	 */
	private static Map<String, Object> memory(Run run) throws Exception {
		int messages = run.options().integer("messages", 100_000);
		try (QueueClient client = run.open(ConsumerSpec.none())) {
			long before = run.server().usedMemory();
			int batch = (run.kind() == QueueClient.Kind.DELAY_QUEUE) ? 100 : 1;
			EnqueuePhase.run(run, client, "memory", messages, 4, batch, 5 * MINUTE, 65 * MINUTE);
			long after = run.server().usedMemory();
			Map<String, Object> result = new LinkedHashMap<>();
			result.put("messages", messages);
			result.put("payload_bytes", Payloads.SIZE);
			result.put("used_memory_delta", after - before);
			result.put("bytes_per_msg", (double) (after - before) / messages);
			Map<String, Object> perKey = new LinkedHashMap<>();
			run.server().memoryByKey().forEach((key, bytes) -> perKey.put(key, (double) bytes / messages));
			result.put("bytes_per_msg_by_key", perKey);
			return result;
		}
	}

	/**
	 * Enqueue, drain and lateness again, with millions of messages already pending far
	 * ahead.
	 */
	private static Map<String, Object> backlog(Run run) throws Exception {
		int backlog = run.options().integer("backlog", 5_000_000);
		SwitchableHandler handler = new SwitchableHandler();
		try (QueueClient client = run.open(ConsumerSpec.of("backlog", 4, handler))) {
			int batch = (run.kind() == QueueClient.Kind.DELAY_QUEUE) ? 1000 : 1;
			Map<String, Object> result = new LinkedHashMap<>();
			result.put("backlog", backlog);
			result.put("fill", EnqueuePhase.run(run, client, "backlog", backlog, 4, batch, DAY, 2 * DAY));
			result.put("enqueue", EnqueuePhase.run(run, client, "backlog", 200_000, 4, 1, 5 * MINUTE, 65 * MINUTE));
			if (run.kind() == QueueClient.Kind.DELAY_QUEUE) {
				result.put("enqueue_batch",
						EnqueuePhase.run(run, client, "backlog", 200_000, 4, 100, 5 * MINUTE, 65 * MINUTE));
			}
			result.put("drain", DrainPhase.run(run, client, handler, "backlog", 100_000, Duration.ofSeconds(15),
					Duration.ofMinutes(5)));
			result.put("lateness", latenessAfterWarmUp(run, client, handler, "backlog"));
			result.put("used_memory", run.server().usedMemory());
			return result;
		}
	}

	/** 10 topics with listeners and nothing due: Redis commands per second per topic. */
	private static Map<String, Object> idle(Run run) throws Exception {
		List<String> topics = new ArrayList<>();
		for (int i = 0; i < 10; i++) {
			topics.add("idle-" + i);
		}
		Duration duration = run.options().duration("duration", Duration.ofSeconds(60));
		try (QueueClient client = run.open(new ConsumerSpec(topics, 1, (payload) -> {
		}))) {
			Thread.sleep(5000);
			return IdlePhase.run(run, topics.size(), duration);
		}
	}

}

package io.github.delayqueue.benchmarks;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.BooleanSupplier;

/**
 * Group concurrency (issue 38): (a) 1,000 groups of 20 messages each, due at once (a
 * group's messages 1 ms apart, so that their order is defined), drained by a listener
 * with {@code group-concurrency: 1}, next to the same messages and groups drained by a
 * listener without a limit: the most messages of one group handled at once, the messages
 * handled after a later-due one of their group, the drain rate and Redis CPU per message;
 * (b) 10,000 groups of 10 messages with {@code group-concurrency: 1}, made ready while
 * the listener is paused, then drained: Redis memory per group (the 100,000 messages
 * ready in their groups against the same 100,000 ready without groups) and Redis CPU per
 * message, next to the same messages without groups. One application consumes the four
 * topics, 4 consumer threads each, every other setting at its default.
 */
final class GroupConcurrencyScenario {

	/** The topic with {@code group-concurrency: 1} of part (a). */
	static final String LIMIT_TOPIC = "groups-limit";

	/** The topic without a limit of part (a). */
	static final String NO_LIMIT_TOPIC = "groups-no-limit";

	/** The topic with {@code group-concurrency: 1} of part (b). */
	static final String WIDE_TOPIC = "groups-wide";

	/** The topic of part (b)'s messages without groups. */
	static final String WIDE_FIFO_TOPIC = "groups-wide-fifo";

	private static final int BATCH = 1000;

	private static final int THREADS = 4;

	private GroupConcurrencyScenario() {
	}

	static Map<String, Object> run(Run run) throws Exception {
		int groups = run.options().integer("groups", 1000);
		int perGroup = run.options().integer("per-group", 20);
		int warmUpGroups = run.options().integer("warm-up-groups", 500);
		int wideGroups = run.options().integer("wide-groups", 10_000);
		int widePerGroup = run.options().integer("wide-per-group", 10);
		int consumers = run.options().integer("consumers", 4);
		boolean limitFirst = !"no-limit".equals(run.options().string("first", "limit"));
		Duration work = run.options().duration("work", Duration.ZERO);
		Duration dueIn = run.options().duration("due-in", Duration.ofSeconds(3));
		Duration timeout = run.options().duration("timeout", Duration.ofMinutes(3));
		if (run.kind() != QueueClient.Kind.DELAY_QUEUE) {
			return Map.of("supported", false, "why", "RDelayedQueue has no groups");
		}
		Map<String, String> properties = new LinkedHashMap<>(run.listenerProperties());
		properties.put("delay-queue.topics." + LIMIT_TOPIC + ".group-concurrency", "1");
		properties.put("delay-queue.topics." + WIDE_TOPIC + ".group-concurrency", "1");
		SwitchableHandler handler = new SwitchableHandler();
		List<String> topics = List.of(LIMIT_TOPIC, NO_LIMIT_TOPIC, WIDE_TOPIC, WIDE_FIFO_TOPIC);
		try (QueueClient client = run.open(new ConsumerSpec(topics, consumers, handler), properties)) {
			client.pause(WIDE_TOPIC);
			client.pause(WIDE_FIFO_TOPIC);
			Phases phases = new Phases(run, client, handler, dueIn, timeout, work.toNanos());
			List<String> order = limitFirst ? List.of(LIMIT_TOPIC, NO_LIMIT_TOPIC)
					: List.of(NO_LIMIT_TOPIC, LIMIT_TOPIC);
			// Warm-up, so that the JIT compiler is not measured: both topics, fewer
			// groups.
			int first = 0;
			for (String topic : order) {
				phases.drain(topic, new GroupDeliveries(first, warmUpGroups, perGroup, work.toNanos()), true);
				first += warmUpGroups * perGroup;
			}
			Map<String, Map<String, Object>> drains = new LinkedHashMap<>();
			for (String topic : order) {
				drains.put(topic,
						phases.drain(topic, new GroupDeliveries(first, groups, perGroup, work.toNanos()), true));
				first += groups * perGroup;
			}
			Map<String, Object> limited = drains.get(LIMIT_TOPIC);
			Map<String, Object> unlimited = drains.get(NO_LIMIT_TOPIC);
			// (b): the grouped messages ready in their groups, then the same without
			// groups.
			Map<String, Object> wide = phases.readyThenDrain(WIDE_TOPIC,
					new GroupDeliveries(first, wideGroups, widePerGroup, work.toNanos()), true);
			first += wideGroups * widePerGroup;
			Map<String, Object> wideFifo = phases.readyThenDrain(WIDE_FIFO_TOPIC,
					new GroupDeliveries(first, wideGroups, widePerGroup, work.toNanos()), false);
			Map<String, Object> result = new LinkedHashMap<>();
			result.put("groups", groups);
			result.put("per_group", perGroup);
			result.put("consumers", consumers);
			result.put("first", limitFirst ? "limit" : "no-limit");
			putFigures(result, "limit_", limited, "most_at_once", "order_violations", "drain_per_s",
					"redis_cpu_us_per_msg");
			putFigures(result, "no_limit_", unlimited, "most_at_once", "order_violations", "drain_per_s",
					"redis_cpu_us_per_msg");
			result.put("wide_groups", wideGroups);
			result.put("wide_per_group", widePerGroup);
			long groupedBytes = ((Number) wide.get("ready_used_memory_delta")).longValue();
			long fifoBytes = ((Number) wideFifo.get("ready_used_memory_delta")).longValue();
			result.put("wide_bytes_per_group", (double) (groupedBytes - fifoBytes) / wideGroups);
			putFigures(result, "wide_", wide, "most_at_once", "order_violations", "drain_per_s", "redis_cpu_us_per_msg",
					"ready_redis_cpu_us_per_msg");
			putFigures(result, "wide_fifo_", wideFifo, "drain_per_s", "redis_cpu_us_per_msg",
					"ready_redis_cpu_us_per_msg");
			List<Map<String, Object>> all = List.of(limited, unlimited, wide, wideFifo);
			result.put("lost", sum(all, "lost"));
			result.put("duplicates", sum(all, "duplicates") + sum(all, "strays"));
			result.put("early", sum(all, "early"));
			result.put("limit", limited);
			result.put("no_limit", unlimited);
			result.put("wide", wide);
			result.put("wide_fifo", wideFifo);
			return result;
		}
	}

	/** Puts figures of a phase into the summary, each under its name after a prefix. */
	private static void putFigures(Map<String, Object> result, String prefix, Map<String, Object> phase,
			String... figures) {
		for (String figure : figures) {
			result.put(prefix + figure, phase.get(figure));
		}
	}

	private static long sum(List<Map<String, Object>> phases, String name) {
		long sum = 0;
		for (Map<String, Object> phase : phases) {
			sum += ((Number) phase.getOrDefault(name, 0L)).longValue();
		}
		return sum;
	}

	/** Runs the phases of one application. */
	private record Phases(Run run, QueueClient client, SwitchableHandler handler, Duration dueIn, Duration timeout,
			long workNanos) {

		/**
		 * Sends the phase's messages to a topic whose listener runs, due from
		 * {@link #dueIn} on, and waits until they are handled.
		 * @return the figures: the drain from the first due time until the last message
		 * arrived, Redis CPU meanwhile per message, the groups' most at once and order
		 * violations, lost, handled twice, early
		 */
		Map<String, Object> drain(String topic, GroupDeliveries deliveries, boolean grouped) throws Exception {
			this.handler.set(deliveries);
			Sent sent = sendAndAwaitDue(topic, deliveries, grouped);
			Redis redis = Redis.now(this.run.server());
			Map<String, Object> result = new LinkedHashMap<>();
			result.put("topic", topic);
			result.put("groups", deliveries.groups());
			result.put("per_group", deliveries.perGroup());
			result.put("enqueue_s", sent.seconds());
			result.put("enqueue_overran_due_time", sent.overranDue());
			// From the first due time until the last arrival: promote, claims and
			// acknowledgements.
			awaitDrained(topic, deliveries, sent.due(), redis, result);
			return result;
		}

		/**
		 * Sends the phase's messages to a topic whose listener is paused, waits until the
		 * broker has made them all ready and measures Redis memory, then resumes the
		 * listener and waits until they are handled; pauses it again.
		 * @return the figures of {@link #drain}, Redis CPU until they were ready, and the
		 * memory they took once ready
		 */
		Map<String, Object> readyThenDrain(String topic, GroupDeliveries deliveries, boolean grouped) throws Exception {
			this.handler.set(deliveries);
			String keys = "dq:{" + topic + "}:";
			long memoryBefore = this.run.server().usedMemory();
			Sent sent = sendAndAwaitDue(topic, deliveries, grouped);
			long cpuBefore = this.run.server().cpuMicros();
			String ready = grouped ? keys + "gq" : keys + "r";
			awaitUntil(
					() -> this.run.server().size(keys + "z") == 0
							&& this.run.server().size(ready) >= deliveries.messages(),
					sent.due() + this.timeout.toMillis());
			double readySeconds = (System.currentTimeMillis() - sent.due()) / 1000.0;
			long readyCpu = this.run.server().cpuMicros() - cpuBefore;
			long memoryReady = this.run.server().usedMemory();
			Map<String, Object> byKey = new LinkedHashMap<>();
			this.run.server().memoryByKey().forEach((key, bytes) -> {
				if (key.startsWith(keys)) {
					byKey.put(key, bytes);
				}
			});
			Map<String, Object> readyCounts = new LinkedHashMap<>();
			for (String key : List.of("z", "r", "gq", "gn", "g", "gv", "ga")) {
				readyCounts.put(key, this.run.server().size(keys + key));
			}
			Map<String, Object> result = new LinkedHashMap<>();
			result.put("topic", topic);
			result.put("grouped", grouped);
			result.put("groups", grouped ? deliveries.groups() : 0);
			result.put("messages", deliveries.messages());
			result.put("ready_s", readySeconds);
			result.put("enqueue_overran_due_time", sent.overranDue());
			// From the first due time until all were ready: the broker's promotes;
			// unknown
			// when the sends ended after the due time (the promotes ran meanwhile).
			result.put("ready_redis_cpu_us_per_msg",
					sent.overranDue() ? null : (double) readyCpu / deliveries.messages());
			result.put("ready_counts", readyCounts);
			result.put("ready_used_memory_delta", memoryReady - memoryBefore);
			result.put("ready_bytes_by_key", byKey);
			long resumedAt = System.currentTimeMillis();
			Redis redis = Redis.now(this.run.server());
			this.client.resume(topic);
			// From the resume until the last arrival: claims and acknowledgements.
			awaitDrained(topic, deliveries, resumedAt, redis, result);
			this.client.pause(topic);
			return result;
		}

		/**
		 * Sends the phase's messages, due from {@link #dueIn} on, and waits until they
		 * are due.
		 */
		private Sent sendAndAwaitDue(String topic, GroupDeliveries deliveries, boolean grouped) throws Exception {
			long due = System.currentTimeMillis() + this.dueIn.toMillis();
			long enqueueStart = System.nanoTime();
			send(topic, deliveries, grouped, due);
			Sent sent = new Sent(due, (System.nanoTime() - enqueueStart) / 1e9, System.currentTimeMillis() >= due);
			Thread.sleep(Math.max(0, due - System.currentTimeMillis()));
			return sent;
		}

		/**
		 * Waits until the phase's messages are handled, then adds the drain from
		 * {@code from} until the last message arrived, Redis CPU per message and the
		 * commands since {@code before}, and the counts of {@link #settle}.
		 */
		private void awaitDrained(String topic, GroupDeliveries deliveries, long from, Redis before,
				Map<String, Object> result) throws InterruptedException {
			awaitUntil(deliveries::complete, from + this.timeout.toMillis());
			long drainedAt = deliveries.complete() ? deliveries.lastArrivalMillis() : System.currentTimeMillis();
			Redis spent = Redis.now(this.run.server()).minus(before);
			double drainSeconds = (drainedAt - from) / 1000.0;
			result.put("drain_s", drainSeconds);
			result.put("drain_per_s", Math.round(deliveries.delivered() / Math.max(0.001, drainSeconds)));
			result.put("redis_cpu_us_per_msg", (double) spent.cpuMicros() / deliveries.messages());
			spent.commands().report(deliveries.messages(), result);
			settle(topic, deliveries, result);
		}

		/**
		 * Waits for the acknowledgements and any message handled twice, then adds the
		 * counts of the phase.
		 */
		private void settle(String topic, GroupDeliveries deliveries, Map<String, Object> result)
				throws InterruptedException {
			String slots = "dq:{" + topic + "}:gf";
			awaitUntil(() -> this.run.server().sumOfHash(slots) <= 0, System.currentTimeMillis() + 5000);
			// Room for any message handled twice to arrive.
			Thread.sleep(200);
			result.put("delivered", deliveries.delivered());
			result.put("lost", deliveries.messages() - deliveries.delivered());
			result.put("duplicates", deliveries.duplicates());
			result.put("early", deliveries.early());
			result.put("strays", deliveries.strays());
			result.put("most_at_once", deliveries.mostAtOnce());
			result.put("groups_with_two_at_once", deliveries.groupsOverOne());
			result.put("order_violations", deliveries.orderViolations());
			// Slots still taken once everything was handled and acknowledged: 0 unless
			// they leak.
			result.put("slots_taken_after", this.run.server().sumOfHash(slots));
		}

		/** Polls every 5 ms until a condition holds or the deadline (epoch ms) passed. */
		private static void awaitUntil(BooleanSupplier condition, long deadline) throws InterruptedException {
			while (!condition.getAsBoolean() && System.currentTimeMillis() < deadline) {
				Thread.sleep(5);
			}
		}

		/**
		 * Sends the phase's messages from several threads in batches, message {@code j}
		 * of each group due {@code j} ms after {@code due}; in their groups or in none.
		 */
		private void send(String topic, GroupDeliveries deliveries, boolean grouped, long due) throws Exception {
			int messages = deliveries.messages();
			ExecutorService producers = Executors.newFixedThreadPool(THREADS);
			try {
				List<Future<?>> done = new ArrayList<>();
				for (int t = 0; t < THREADS; t++) {
					int from = (int) ((long) messages * t / THREADS);
					int to = (int) ((long) messages * (t + 1) / THREADS);
					done.add(producers.submit(() -> {
						for (int i = from; i < to; i += BATCH) {
							int size = Math.min(BATCH, to - i);
							List<String> payloads = new ArrayList<>(size);
							long[] dueAt = new long[size];
							List<String> groups = new ArrayList<>(size);
							for (int j = 0; j < size; j++) {
								int index = i + j;
								dueAt[j] = due + deliveries.offsetMillis(index);
								payloads.add(Payloads.of(deliveries.sequence(index), dueAt[j]));
								groups.add(grouped ? deliveries.group(index) : null);
							}
							this.client.sendAll(topic, payloads, dueAt, groups);
						}
						return null;
					}));
				}
				for (Future<?> future : done) {
					future.get();
				}
			}
			finally {
				producers.shutdownNow();
			}
		}

	}

	/**
	 * How the sends of a phase went.
	 *
	 * @param due when its first messages are due (epoch ms)
	 * @param seconds how long the sends took
	 * @param overranDue whether they ended at or after the due time
	 */
	private record Sent(long due, double seconds, boolean overranDue) {
	}

	/**
	 * Redis CPU (µs) and the commands Redis reports: so far, or spent between two
	 * moments.
	 */
	private record Redis(long cpuMicros, Commands commands) {

		static Redis now(RedisServer server) {
			long cpuMicros = server.cpuMicros();
			return new Redis(cpuMicros, Commands.of(server));
		}

		Redis minus(Redis before) {
			return new Redis(this.cpuMicros - before.cpuMicros, this.commands.minus(before.commands));
		}

	}

	/**
	 * The calls and time of each command Redis reports (commandstats: the commands that
	 * scripts run included, and counted in the script's time too).
	 */
	private record Commands(Map<String, Long> calls, Map<String, Long> micros) {

		static Commands of(RedisServer server) {
			return new Commands(server.callsByCommand(), server.microsByCommand());
		}

		Commands minus(Commands before) {
			return new Commands(difference(this.calls, before.calls), difference(this.micros, before.micros));
		}

		private static Map<String, Long> difference(Map<String, Long> after, Map<String, Long> before) {
			Map<String, Long> difference = new LinkedHashMap<>();
			after.forEach((command, value) -> difference.put(command, value - before.getOrDefault(command, 0L)));
			return difference;
		}

		/**
		 * Adds the calls and the µs of each command per message, those of 0.01 call or
		 * 0.1 µs or more per message.
		 */
		void report(int messages, Map<String, Object> result) {
			result.put("redis_calls_per_msg_by_command", perMessage(this.calls, messages, 0.01));
			result.put("redis_us_per_msg_by_command", perMessage(this.micros, messages, 0.1));
		}

		private static Map<String, Object> perMessage(Map<String, Long> byCommand, int messages, double least) {
			Map<String, Object> perMessage = new LinkedHashMap<>();
			byCommand.forEach((command, value) -> {
				if ((double) value / messages >= least) {
					perMessage.put(command, (double) value / messages);
				}
			});
			return perMessage;
		}

	}

}

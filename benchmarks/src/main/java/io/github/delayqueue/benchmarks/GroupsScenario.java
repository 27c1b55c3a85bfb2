package io.github.delayqueue.benchmarks;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.locks.LockSupport;

/**
 * Groups (issue 38): one group's burst of messages due at the same instant, while many
 * small groups send a steady stream due at once; how late the small groups' messages are
 * handled during the burst and how fast the burst drains, next to the same sends on a
 * FIFO topic (no groups) in the same run; then the drain of one group's burst next to the
 * same burst without a group. Every phase counts what was lost or handled twice. One
 * application consumes both topics, with the default settings.
 */
final class GroupsScenario {

	/** The topic of the grouped sends. */
	static final String GROUPED_TOPIC = "groups";

	/** The topic of the same sends without groups. */
	static final String FIFO_TOPIC = "groups-fifo";

	private static final String BURST_GROUP = "big";

	private static final int BURST_BATCH = 1000;

	private static final int BURST_THREADS = 4;

	private static final int SMALL_BATCH_MAX = 100;

	private static final Duration SMALL_SETTLE = Duration.ofSeconds(30);

	private GroupsScenario() {
	}

	static Map<String, Object> run(Run run) throws Exception {
		int messages = run.options().integer("messages", 100_000);
		int warmUp = run.options().integer("warm-up-messages", 20_000);
		int consumers = run.options().integer("consumers", 4);
		Small small = new Small(run.options().integer("small-groups", 100), run.options().integer("small-rate", 10),
				run.options().duration("small-lead", Duration.ofSeconds(1)));
		// How long after a phase starts its burst is due: its sends end before.
		Duration dueIn = run.options().duration("due-in", Duration.ofSeconds(4));
		Duration timeout = run.options().duration("timeout", Duration.ofMinutes(2));
		if (run.kind() != QueueClient.Kind.DELAY_QUEUE) {
			return Map.of("supported", false, "why", "RDelayedQueue has no groups");
		}
		SwitchableHandler handler = new SwitchableHandler();
		try (QueueClient client = run.open(new ConsumerSpec(List.of(GROUPED_TOPIC, FIFO_TOPIC), consumers, handler))) {
			Phases phases = new Phases(run, client, handler, dueIn, timeout);
			// Warm-up, so that the JIT compiler is not measured: both paths, no small
			// groups.
			phases.run(GROUPED_TOPIC, true, warmUp, Small.NONE);
			phases.run(FIFO_TOPIC, false, warmUp, Small.NONE);
			Map<String, Object> grouped = phases.run(GROUPED_TOPIC, true, messages, small);
			Map<String, Object> fifo = phases.run(FIFO_TOPIC, false, messages, small);
			Map<String, Object> oneGroup = phases.run(GROUPED_TOPIC, true, messages, Small.NONE);
			Map<String, Object> ungrouped = phases.run(FIFO_TOPIC, false, messages, Small.NONE);
			Map<String, Object> result = new LinkedHashMap<>();
			result.put("messages", messages);
			result.put("small_groups", small.groups());
			result.put("small_rate_per_group_per_s", small.ratePerGroup());
			result.put("consumers", consumers);
			for (String name : List.of("small_p50_ms", "small_p99_ms", "small_max_ms", "drain_per_s")) {
				result.put(name, grouped.get(name));
			}
			for (String name : List.of("small_p50_ms", "small_p99_ms", "small_max_ms", "drain_per_s")) {
				result.put("fifo_" + name, fifo.get(name));
			}
			result.put("one_group_drain_per_s", oneGroup.get("drain_per_s"));
			result.put("ungrouped_drain_per_s", ungrouped.get("drain_per_s"));
			result.put("one_group_vs_ungrouped", ratio(oneGroup, ungrouped));
			result.put("burst_vs_ungrouped", ratio(grouped, ungrouped));
			List<Map<String, Object>> all = List.of(grouped, fifo, oneGroup, ungrouped);
			result.put("lost", sum(all, "burst_lost") + sum(all, "small_lost"));
			result.put("duplicates", sum(all, "burst_duplicates") + sum(all, "small_duplicates") + sum(all, "strays"));
			result.put("early", sum(all, "burst_early") + sum(all, "small_early"));
			result.put("grouped", grouped);
			result.put("fifo", fifo);
			result.put("one_group_drain", oneGroup);
			result.put("ungrouped_drain", ungrouped);
			return result;
		}
	}

	private static Double ratio(Map<String, Object> phase, Map<String, Object> reference) {
		return ((Number) phase.get("drain_per_s")).doubleValue()
				/ Math.max(1, ((Number) reference.get("drain_per_s")).doubleValue());
	}

	private static long sum(List<Map<String, Object>> phases, String name) {
		long sum = 0;
		for (Map<String, Object> phase : phases) {
			sum += ((Number) phase.getOrDefault(name, 0L)).longValue();
		}
		return sum;
	}

	/**
	 * The small groups: each sends {@code ratePerGroup} messages a second, due at once,
	 * from {@code lead} before the burst is due until it has drained.
	 */
	private record Small(int groups, int ratePerGroup, Duration lead) {

		static final Small NONE = new Small(0, 0, Duration.ZERO);

		int perSecond() {
			return this.groups * this.ratePerGroup;
		}

	}

	/** Runs the phases of one application. */
	private record Phases(Run run, QueueClient client, SwitchableHandler handler, Duration dueIn, Duration timeout) {

		/**
		 * One phase: the burst is sent to the topic, all due at one instant, in one group
		 * or in none; the small groups (in groups or not, likewise) send from shortly
		 * before that instant until the burst has drained.
		 * @return the figures: the burst's drain, the small groups' lateness while it
		 * drained, what was lost, handled twice or early
		 */
		Map<String, Object> run(String topic, boolean grouped, int messages, Small small) throws Exception {
			long smallSeconds = this.dueIn.toSeconds() + this.timeout.toSeconds() + SMALL_SETTLE.toSeconds();
			BurstDeliveries deliveries = new BurstDeliveries(messages,
					(int) Math.min(Integer.MAX_VALUE - messages, small.perSecond() * smallSeconds));
			this.handler.set(deliveries);
			long due = System.currentTimeMillis() + this.dueIn.toMillis();
			// The small groups start at their time even while the burst is still being
			// sent.
			SmallGroups sender = new SmallGroups(this.client, topic, grouped, small, deliveries,
					due - small.lead().toMillis());
			Thread senderThread = new Thread(sender, "small-groups");
			if (small.perSecond() > 0) {
				senderThread.start();
			}
			long enqueueStart = System.nanoTime();
			try {
				sendBurst(topic, grouped ? BURST_GROUP : null, messages, due);
			}
			catch (Exception ex) {
				sender.stop();
				throw ex;
			}
			double enqueueSeconds = (System.nanoTime() - enqueueStart) / 1e9;
			boolean overran = System.currentTimeMillis() >= due;
			Thread.sleep(Math.max(0, due - System.currentTimeMillis()));
			long cpuBefore = this.run.server().cpuMicros();
			Map<String, Long> microsBefore = this.run.server().microsByCommand();
			long deadline = due + this.timeout.toMillis();
			while (!deliveries.burstComplete() && System.currentTimeMillis() < deadline && !sender.failed()) {
				Thread.sleep(5);
			}
			long drainedAt = deliveries.burstComplete() ? deliveries.lastBurstArrivalMillis()
					: System.currentTimeMillis();
			long cpu = this.run.server().cpuMicros() - cpuBefore;
			Map<String, Long> microsAfter = this.run.server().microsByCommand();
			sender.stop();
			senderThread.join();
			sender.rethrow();
			int sent = sender.sent();
			long smallDeadline = System.currentTimeMillis() + SMALL_SETTLE.toMillis();
			while (deliveries.smallDelivered() < sent && System.currentTimeMillis() < smallDeadline) {
				Thread.sleep(5);
			}
			// Room for any message handled twice to arrive.
			Thread.sleep(200);
			double drainSeconds = (drainedAt - due) / 1000.0;
			Map<String, Object> result = new LinkedHashMap<>();
			result.put("topic", topic);
			result.put("grouped", grouped);
			result.put("messages", messages);
			result.put("enqueue_s", enqueueSeconds);
			result.put("enqueue_overran_due_time", overran);
			result.put("burst_delivered", deliveries.burstDelivered());
			result.put("burst_lost", messages - deliveries.burstDelivered());
			result.put("burst_duplicates", deliveries.duplicates(0, messages));
			result.put("burst_early", deliveries.early(0, messages));
			result.put("strays", deliveries.strays());
			result.put("drain_s", drainSeconds);
			result.put("drain_per_s", Math.round(deliveries.burstDelivered() / Math.max(0.001, drainSeconds)));
			if (small.perSecond() > 0) {
				int first = deliveries.firstSmall();
				result.put("small_sent", sent);
				result.put("small_delivered", deliveries.smallDelivered());
				result.put("small_lost", sent - deliveries.smallDelivered());
				result.put("small_duplicates", deliveries.duplicates(first, first + sent));
				result.put("small_early", deliveries.early(first, first + sent));
				long[] during = deliveries.sortedLatenessMicros(first, first + sent, due, drainedAt);
				result.put("small_during_burst", during.length);
				result.put("small_p50_ms", millis(during, 50));
				result.put("small_p99_ms", millis(during, 99));
				result.put("small_max_ms", millis(during, 100));
				// Where in the burst the lateness was: the latest of the small groups'
				// messages due in each 100 ms from the burst's due time on.
				Map<String, Object> byDue = new LinkedHashMap<>();
				for (long from = due; from <= drainedAt; from += 100) {
					byDue.put(Long.toString(from - due),
							millis(deliveries.sortedLatenessMicros(first, first + sent, from, from + 99), 100));
				}
				result.put("small_max_ms_by_due_100ms", byDue);
				long[] before = deliveries.sortedLatenessMicros(first, first + sent, 0, due - 1);
				result.put("small_before_burst", before.length);
				result.put("small_before_burst_p99_ms", millis(before, 99));
			}
			// Redis CPU from the due time until the burst drained, per message of the
			// burst: the small groups' sends and claims meanwhile included.
			result.put("redis_cpu_us_per_burst_msg", (double) cpu / messages);
			// The same time by command, the commands scripts run included (and counted
			// in the script's time too); those of 0.1 µs or more per message.
			Map<String, Object> byCommand = new LinkedHashMap<>();
			microsAfter.forEach((command, micros) -> {
				double perMessage = (double) (micros - microsBefore.getOrDefault(command, 0L)) / messages;
				if (perMessage >= 0.1) {
					byCommand.put(command, perMessage);
				}
			});
			result.put("redis_us_per_burst_msg_by_command", byCommand);
			return result;
		}

		private static Double millis(long[] sortedMicros, double percentile) {
			double millis = BurstDeliveries.percentileMillis(sortedMicros, percentile);
			return Double.isNaN(millis) ? null : millis;
		}

		/**
		 * Sends the burst from several threads in batches, all due at the instant.
		 */
		private void sendBurst(String topic, String group, int messages, long due) throws Exception {
			ExecutorService producers = Executors.newFixedThreadPool(BURST_THREADS);
			try {
				List<Future<?>> done = new ArrayList<>();
				for (int t = 0; t < BURST_THREADS; t++) {
					int from = (int) ((long) messages * t / BURST_THREADS);
					int to = (int) ((long) messages * (t + 1) / BURST_THREADS);
					done.add(producers.submit(() -> {
						for (int i = from; i < to; i += BURST_BATCH) {
							int size = Math.min(BURST_BATCH, to - i);
							List<String> payloads = new ArrayList<>(size);
							long[] dueAt = new long[size];
							for (int j = 0; j < size; j++) {
								payloads.add(Payloads.of(i + j, due));
								dueAt[j] = due;
							}
							this.client.sendAll(topic, payloads, dueAt, Collections.nCopies(size, group));
						}
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
	 * The small groups' sender: message {@code k} is sent {@code k / perSecond} seconds
	 * after the start, in group {@code small-<k mod groups>} (or in none), due when it is
	 * sent, from a given instant on; the messages whose time has come go in one call, so
	 * that a slow call makes the next one larger, not the rate lower.
	 */
	private static final class SmallGroups implements Runnable {

		private final QueueClient client;

		private final String topic;

		private final boolean grouped;

		private final Small small;

		private final BurstDeliveries deliveries;

		private final long startAtMillis;

		private volatile boolean stopped;

		private volatile int sent;

		private volatile RuntimeException failure;

		SmallGroups(QueueClient client, String topic, boolean grouped, Small small, BurstDeliveries deliveries,
				long startAtMillis) {
			this.startAtMillis = startAtMillis;
			this.client = client;
			this.topic = topic;
			this.grouped = grouped;
			this.small = small;
			this.deliveries = deliveries;
		}

		@Override
		public void run() {
			try {
				send();
			}
			catch (RuntimeException ex) {
				this.failure = ex;
			}
		}

		private void send() {
			while (!this.stopped && System.currentTimeMillis() < this.startAtMillis) {
				LockSupport.parkNanos(1_000_000);
			}
			long perSecond = this.small.perSecond();
			int capacity = this.deliveries.smallCapacity();
			int first = this.deliveries.firstSmall();
			long start = System.nanoTime();
			int k = 0;
			while (!this.stopped && k < capacity) {
				long now = System.nanoTime();
				long owed = Math.min(capacity, (now - start) * perSecond / 1_000_000_000L + 1);
				if (k >= owed) {
					LockSupport.parkNanos(start + k * 1_000_000_000L / perSecond - now);
					continue;
				}
				int size = (int) Math.min(SMALL_BATCH_MAX, owed - k);
				long due = System.currentTimeMillis();
				List<String> payloads = new ArrayList<>(size);
				long[] dueAt = new long[size];
				List<String> groups = new ArrayList<>(size);
				for (int j = 0; j < size; j++) {
					payloads.add(Payloads.of(first + k + j, due));
					dueAt[j] = due;
					groups.add(this.grouped ? "small-" + ((k + j) % this.small.groups()) : null);
				}
				this.client.sendAll(this.topic, payloads, dueAt, groups);
				k += size;
				this.sent = k;
			}
		}

		boolean failed() {
			return this.failure != null;
		}

		/** Asks it to stop after the call on its way. */
		void stop() {
			this.stopped = true;
		}

		/**
		 * @return how many it has sent
		 */
		int sent() {
			return this.sent;
		}

		void rethrow() {
			if (this.failure != null) {
				throw new IllegalStateException("The small groups' sends failed", this.failure);
			}
		}

	}

}

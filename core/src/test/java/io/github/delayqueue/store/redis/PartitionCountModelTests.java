package io.github.delayqueue.store.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;

import io.github.delayqueue.store.ClaimedMessage;
import io.github.delayqueue.store.MessageSnapshot;
import io.github.delayqueue.store.MessageState;
import io.github.delayqueue.store.NewMessage;
import io.github.delayqueue.store.PartitionCountException;
import io.github.delayqueue.store.Sent;
import io.github.delayqueue.store.TopicPartitions;
import io.github.delayqueue.testsupport.TestStore;
import io.github.delayqueue.testsupport.Transitions;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

/**
 * A randomized, model-based test of changes of a topic's number of partitions: random
 * sequences of calls by id from applications configured with 1, 2 or 3 partitions (stores
 * on one Redis and prefix), checked against a plain Java model of the rules.
 * <p>
 * <b>The model.</b> Redis keeps one count. An application agrees on its first call: it
 * takes Redis' count if it is its own; a send changes it if no message (stored or dead)
 * would move (the whole topic empty, or, to go down to one partition, partitions 1 and up
 * empty); otherwise the call is refused ({@link PartitionCountException}), until a later
 * call agrees. Once agreed, an application whose count is no longer Redis' is refused on
 * every call by id. Sends, cancels and inspects by agreed applications on the current
 * count do what they do on any topic. Messages are consumed (acknowledged or
 * dead-lettered) from the current partitions; dead letters are purged; new applications
 * start (a fresh store that has not agreed yet); the topic is emptied now and then, so
 * that counts change; and a change that dies half done leaves a marker of another count
 * on a partition, which calls must repair on their own.
 * <p>
 * <b>Checks after every step.</b> Redis keeps the modeled count; every stored message and
 * dead letter of every partition of every count sits in the partition of its id under the
 * current count (so calls by id find it), and their numbers are the modeled ones; every
 * modeled message is found by id, pending, by a store on the current count.
 * <p>
 * By default three seeds of 400 steps; {@code -Ddelay-queue.partition-model.seed=<seed>}
 * runs one again.
 */
class PartitionCountModelTests {

	private static final String TOPIC = "model";

	private static final int MAX_COUNT = 3;

	@Test
	void randomCallsOfApplicationsOnDifferentCountsKeepEveryMessageWithinReach() {
		Long fixedSeed = Long.getLong("delay-queue.partition-model.seed");
		long seed = (fixedSeed != null) ? fixedSeed : System.nanoTime();
		int seeds = (fixedSeed != null) ? 1 : 3;
		int steps = Integer.getInteger("delay-queue.partition-model.steps", 400);
		for (int i = 0; i < seeds; i++) {
			try (TestStore fixture = TestStore.create()) {
				new Run(seed + i, steps, fixture.prefix(), fixture.connectionFactory(), fixture.redis()).run();
			}
		}
	}

	/** One seeded run. */
	private static final class Run {

		private final long seed;

		private final int steps;

		private final String prefix;

		private final RedisConnectionFactory connectionFactory;

		private final StringRedisTemplate redis;

		private final Random random;

		private final List<App> apps = new ArrayList<>();

		/** Pending messages by id, each due now or in an hour. */
		private final Map<String, Boolean> pending = new HashMap<>();

		/** Dead letters by id: how many names each id has in the dead set. */
		private final Map<String, Integer> dead = new HashMap<>();

		private final Map<String, Integer> counts = new TreeMap<>();

		private int count = 1;

		private int step;

		Run(long seed, int steps, String prefix, RedisConnectionFactory connectionFactory, StringRedisTemplate redis) {
			this.seed = seed;
			this.steps = steps;
			this.prefix = prefix;
			this.connectionFactory = connectionFactory;
			this.redis = redis;
			this.random = new Random(seed);
			for (int partitions = 1; partitions <= MAX_COUNT; partitions++) {
				this.apps.add(new App(partitions));
			}
		}

		void run() {
			System.out.println("PartitionCountModelTests: seed " + this.seed + ", " + this.steps
					+ " steps (replay with -Ddelay-queue.partition-model.seed=" + this.seed + ")");
			for (this.step = 1; this.step <= this.steps; this.step++) {
				try {
					step();
					check();
				}
				catch (AssertionError ex) {
					fail("Seed " + this.seed + ", step " + this.step + ": " + ex.getMessage(), ex);
				}
			}
			System.out.println("PartitionCountModelTests: seed " + this.seed + " passed: " + this.counts);
		}

		private void step() {
			double choice = this.random.nextDouble();
			App app = this.apps.get(this.random.nextInt(this.apps.size()));
			if (choice < 0.35) {
				send(app);
			}
			else if (choice < 0.50) {
				cancel(app);
			}
			else if (choice < 0.60) {
				inspect(app);
			}
			else if (choice < 0.80) {
				consume();
			}
			else if (choice < 0.83) {
				purgeDead();
			}
			else if (choice < 0.86) {
				drain();
			}
			else if (choice < 0.95) {
				int partitions = 1 + this.random.nextInt(MAX_COUNT);
				this.apps.set(this.random.nextInt(this.apps.size()), new App(partitions));
				count("new application on " + partitions);
			}
			else {
				leaveAStaleMarker();
			}
		}

		private void send(App app) {
			String id = id();
			boolean due = this.random.nextBoolean();
			Outcome outcome = app.expect(this, true);
			try {
				List<Sent> sent = app.store.send(TOPIC,
						List.of(NewMessage.afterDelay(id, due ? Duration.ZERO : Duration.ofHours(1),
								("body of " + id).getBytes(StandardCharsets.UTF_8))));
				assertThat(outcome).as("send of %s by %s", id, app).isEqualTo(Outcome.DONE);
				// The same body again is the same message sent again: stored, as it was.
				assertThat(sent.get(0).duplicate()).as("duplicate %s", id).isFalse();
				this.pending.putIfAbsent(id, due);
				count("send");
			}
			catch (PartitionCountException ex) {
				assertThat(outcome).as("send of %s by %s refused: %s", id, app, ex.getMessage())
					.isNotEqualTo(Outcome.DONE);
				count("send refused");
			}
		}

		private void cancel(App app) {
			String id = id();
			Outcome outcome = app.expect(this, false);
			try {
				boolean cancelled = app.store.cancel(TOPIC, id);
				assertThat(outcome).as("cancel of %s by %s", id, app).isEqualTo(Outcome.DONE);
				assertThat(cancelled).as("cancel of %s", id).isEqualTo(this.pending.remove(id) != null);
				count("cancel");
			}
			catch (PartitionCountException ex) {
				assertThat(outcome).as("cancel of %s by %s refused: %s", id, app, ex.getMessage())
					.isNotEqualTo(Outcome.DONE);
				count("cancel refused");
			}
		}

		private void inspect(App app) {
			String id = id();
			Outcome outcome = app.expect(this, false);
			try {
				MessageSnapshot snapshot = app.store.inspect(TOPIC, id, 10);
				assertThat(outcome).as("inspect of %s by %s", id, app).isEqualTo(Outcome.DONE);
				assertThat(snapshot != null).as("inspect of %s", id)
					.isEqualTo(this.pending.containsKey(id) || this.dead.containsKey(id));
				count("inspect");
			}
			catch (PartitionCountException ex) {
				assertThat(outcome).as("inspect of %s by %s refused: %s", id, app, ex.getMessage())
					.isNotEqualTo(Outcome.DONE);
				count("inspect refused");
			}
		}

		/**
		 * A listener of the current count takes one due message and acks or buries it.
		 */
		private void consume() {
			RedisMessageStore store = current();
			List<String> partitions = TopicPartitions.names(TOPIC, this.count);
			String partition = partitions.get(this.random.nextInt(partitions.size()));
			Transitions.promote(store, partition, 1000);
			List<ClaimedMessage> claimed = Transitions.claim(store, partition, 1, Duration.ofMinutes(1));
			if (claimed.isEmpty()) {
				return;
			}
			ClaimedMessage message = claimed.get(0);
			assertThat(this.pending.get(message.id())).as("claimed %s is pending and due", message.id()).isTrue();
			assertThat(TopicPartitions.of(Map.of(TOPIC, this.count)).nameFor(TOPIC, message.id())).isEqualTo(partition);
			this.pending.remove(message.id());
			if (this.random.nextBoolean()) {
				assertThat(Transitions.ack(store, partition, message.id(), message.leaseToken())).isTrue();
				count("ack");
			}
			else {
				assertThat(Transitions.deadLetter(store, partition, message.id(), message.leaseToken(), "failed"))
					.isTrue();
				this.dead.merge(message.id(), 1, Integer::sum);
				count("dead-letter");
			}
		}

		private void purgeDead() {
			long deleted = current().purgeDead(TOPIC, 1000);
			assertThat(deleted).isEqualTo(this.dead.values().stream().mapToLong(Integer::longValue).sum());
			this.dead.clear();
			count("purge dead");
		}

		/** Empties the topic: cancels every pending message and purges the dead. */
		private void drain() {
			RedisMessageStore store = current();
			for (String id : List.copyOf(this.pending.keySet())) {
				assertThat(store.cancel(TOPIC, id)).as("cancel of %s", id).isTrue();
				this.pending.remove(id);
			}
			purgeDead();
			count("drain");
		}

		/** A change that died half done: a partition marked for another count. */
		private void leaveAStaleMarker() {
			if (this.count == 1) {
				return;
			}
			List<String> partitions = TopicPartitions.names(TOPIC, this.count);
			String partition = partitions.get(1 + this.random.nextInt(partitions.size() - 1));
			int other = (this.count % MAX_COUNT) + 1;
			this.redis.opsForValue().set(keys(partition).partitionCount(), other + ":deadbeef");
			count("stale marker");
		}

		private void check() {
			String stored = this.redis.opsForValue().get(keys(TOPIC).partitionCount());
			assertThat((stored != null) ? Integer.parseInt(stored) : 1).as("count in Redis").isEqualTo(this.count);
			TopicPartitions current = TopicPartitions.of(Map.of(TOPIC, this.count));
			Set<String> everyPartition = new LinkedHashSet<>();
			for (int partitions = 1; partitions <= MAX_COUNT; partitions++) {
				everyPartition.addAll(TopicPartitions.names(TOPIC, partitions));
			}
			int messages = 0;
			int deadLetters = 0;
			for (String partition : everyPartition) {
				TopicKeys keys = keys(partition);
				for (Object id : this.redis.opsForHash().keys(keys.messages())) {
					assertThat(current.nameFor(TOPIC, (String) id)).as("partition of message %s", id)
						.isEqualTo(partition);
					messages++;
				}
				Set<String> names = this.redis.opsForZSet().range(keys.dead(), 0, -1);
				for (String name : (names != null) ? names : Set.<String>of()) {
					assertThat(current.nameFor(TOPIC, name)).as("partition of dead letter %s", name)
						.isEqualTo(partition);
					deadLetters++;
				}
			}
			assertThat(messages).as("stored messages").isEqualTo(this.pending.size());
			assertThat(deadLetters).as("dead letters")
				.isEqualTo(this.dead.values().stream().mapToInt(Integer::intValue).sum());
			RedisMessageStore store = current();
			for (String id : this.pending.keySet()) {
				MessageSnapshot snapshot = store.inspect(TOPIC, id, 10);
				assertThat(snapshot).as("message %s found by id", id).isNotNull();
				assertThat(snapshot.state()).isNotEqualTo(MessageState.DEAD);
			}
		}

		/** Whether the count may change from the current one to another now. */
		boolean mayChangeTo(int partitions) {
			if (partitions == 1) {
				return this.pending.keySet().stream().allMatch((id) -> TopicPartitions.indexOf(id, this.count) == 0)
						&& this.dead.keySet().stream().allMatch((id) -> TopicPartitions.indexOf(id, this.count) == 0);
			}
			return this.pending.isEmpty() && this.dead.isEmpty();
		}

		/** A fresh store on the current count, agreed. */
		private RedisMessageStore current() {
			RedisMessageStore store = store(this.count);
			store.agreePartitions(TOPIC);
			return store;
		}

		private RedisMessageStore store(int partitions) {
			RedisMessageStore store = new RedisMessageStore(this.connectionFactory, this.prefix,
					Duration.ofMillis(500));
			store.usePartitions(TopicPartitions.of(Map.of(TOPIC, partitions)));
			return store;
		}

		private TopicKeys keys(String partition) {
			return new TopicKeys(this.prefix, partition);
		}

		private String id() {
			return "m-" + this.random.nextInt(40);
		}

		private void count(String what) {
			this.counts.merge(what, 1, Integer::sum);
		}

		/** An application of the topic with its configured count. */
		private final class App {

			private final int partitions;

			private final RedisMessageStore store;

			private boolean agreed;

			App(int partitions) {
				this.partitions = partitions;
				this.store = store(partitions);
			}

			/**
			 * What its next call by id does, by the model (only a send may change the
			 * count); updates the model's count when the call changes it.
			 */
			Outcome expect(Run run, boolean mayChange) {
				if (!this.agreed) {
					if (this.partitions == run.count) {
						this.agreed = true;
					}
					else if (mayChange && run.mayChangeTo(this.partitions)) {
						run.count = this.partitions;
						this.agreed = true;
						run.count("count changed to " + this.partitions);
					}
					else {
						return Outcome.REFUSED;
					}
				}
				return (this.partitions == run.count) ? Outcome.DONE : Outcome.STALE;
			}

			@Override
			public String toString() {
				return "application on " + this.partitions + (this.agreed ? "" : " (not agreed yet)");
			}

		}

	}

	/** What a call by id does, by the model. */
	private enum Outcome {

		/** It does what it does on any topic. */
		DONE,

		/** Its application cannot agree on the count: refused. */
		REFUSED,

		/** Its application agreed on a count that has changed since: refused. */
		STALE

	}

}

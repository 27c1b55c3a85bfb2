package io.github.delayqueue.store.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;

import io.github.delayqueue.group.DelayQueueGroups;
import io.github.delayqueue.store.ClaimedMessage;
import io.github.delayqueue.store.MessageFormat;
import io.github.delayqueue.store.MessageSnapshot;
import io.github.delayqueue.store.MessageState;
import io.github.delayqueue.store.NewMessage;
import io.github.delayqueue.store.PartitionCountException;
import io.github.delayqueue.store.ReplayResult;
import io.github.delayqueue.store.Sent;
import io.github.delayqueue.store.TopicPartitions;
import io.github.delayqueue.testsupport.TestStore;
import io.github.delayqueue.testsupport.Transitions;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;
import static org.awaitility.Awaitility.await;

/**
 * A randomized, model-based test of changes of a topic's number of partitions: random
 * sequences of calls by id from applications configured with 1, 2 or 3 partitions (stores
 * on one Redis and prefix), checked against a plain Java model of the rules, with
 * messages of groups and paused groups among them.
 * <p>
 * <b>The model.</b> Redis keeps one count. An application agrees on its first call: it
 * takes Redis' count if it is its own; a send changes it if nothing would move (the whole
 * topic empty, or, to go down to one partition, partitions 1 and up empty), where what is
 * held is the messages (stored or dead) and the pauses of groups that have not ended;
 * otherwise the call is refused ({@link PartitionCountException}), until a later call
 * agrees. Once agreed, an application whose count is no longer Redis' is refused on every
 * call by id, and on every pause, resume and read of a group. Sends (a quarter of them
 * replacing a pending message: a scheduled one is replaced, a ready one is not), cancels,
 * reschedules, inspects, replays and purges of dead letters by id, and the pause, resume
 * and read of a group by agreed applications on the current count do what they do on any
 * topic.
 * <p>
 * <b>Groups.</b> About a third of the ids have a group, one of six that fall in every
 * partition under two and three partitions, fixed for the run (an id is never sent in two
 * groups); their messages are sent in it (made ready at once when due), with the group in
 * their header as the template writes it, and live in the group's partition
 * ({@code CRC16(group) mod count}), not their id's. A group's pause (until resumed, for
 * an hour, or for 1 ms, then awaited to end) is kept in the group's partition, and one
 * that has not ended holds the count as a message of that partition does; an ended one
 * holds nothing.
 * <p>
 * Messages are consumed (acknowledged or dead-lettered) from the current partitions: a
 * claim takes only a due message of that partition whose group is not paused, and takes
 * one if there is one. Dead letters are purged by id and all at once; new applications
 * start (a fresh store that has not agreed yet); the topic is emptied now and then
 * (messages cancelled, dead letters purged, and half of the time the paused groups
 * resumed), so that counts change, or a pause alone holds them, or only its partitions 1
 * and up are, so that the count goes down to one with messages and pauses, of groups too,
 * left in partition 0; and a change that dies half done leaves a marker of another count
 * on a partition, which calls must repair on their own.
 * <p>
 * <b>Checks after every step.</b> Redis keeps the modeled count; every stored message and
 * dead letter of every partition of every count sits in the partition of its group under
 * the current count if it has one, else of its id (so calls by id find it); a stored
 * message's group in Redis is the modeled one; every pause that has not ended sits in its
 * group's partition under the current count, and is a modeled one; the numbers of
 * messages, dead letters and pauses are the modeled ones; every modeled message, grouped
 * or not, is found by id by a store on the current count, scheduled, ready or dead as
 * modeled; and that store reads each group paused exactly when the model has it paused.
 * <p>
 * By default three seeds of 400 steps; a failed check or an unexpected exception names
 * its seed and step; {@code -Ddelay-queue.partition-model.seed=<seed>} runs one again,
 * {@code -Ddelay-queue.partition-model.steps=<steps>} runs longer. Each run prints how
 * often each kind of step happened.
 */
class PartitionCountModelTests {

	private static final String TOPIC = "model";

	private static final int MAX_COUNT = 3;

	private static final int IDS = 40;

	/**
	 * The groups: one for each pair of partitions under two and three partitions (g0: 0
	 * and 0, g1: 1 and 0, g2: 0 and 1, g3: 1 and 1, g6: 0 and 2, g7: 1 and 2).
	 */
	private static final List<String> GROUPS = List.of("g0", "g1", "g2", "g3", "g6", "g7");

	private static final Duration LEASE = Duration.ofMinutes(1);

	/**
	 * Reads what the checks look at: KEYS[1] the count, then for each partition its
	 * messages, groups, dead set and group pauses.
	 */
	@SuppressWarnings("rawtypes")
	private static final RedisScript<List> READ_PARTITIONS = RedisScript.of("""
			local out = {redis.call('GET', KEYS[1]) or ''}
			for i = 2, #KEYS, 4 do
			  out[#out + 1] = redis.call('HKEYS', KEYS[i])
			  out[#out + 1] = redis.call('HGETALL', KEYS[i + 1])
			  out[#out + 1] = redis.call('ZRANGE', KEYS[i + 2], 0, -1)
			  out[#out + 1] = redis.call('ZRANGE', KEYS[i + 3], 0, -1, 'WITHSCORES')
			end
			return out
			""", List.class);

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

		/** The group of each id that has one, fixed for the run. */
		private final Map<String, String> groupOf = new HashMap<>();

		/** Pending messages by id. */
		private final Map<String, Pending> pending = new HashMap<>();

		/** The ids whose last dead letter is kept under the id itself. */
		private final Set<String> dead = new HashSet<>();

		/**
		 * How many earlier dead letters of each id are kept as
		 * {@code <id>~<time it died>}.
		 */
		private final Map<String, Integer> deadBefore = new HashMap<>();

		/** The groups whose pause has not ended. */
		private final Set<String> paused = new HashSet<>();

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
			for (int i = 0; i < IDS; i++) {
				if (this.random.nextInt(3) == 0) {
					this.groupOf.put("m-" + i, GROUPS.get(this.random.nextInt(GROUPS.size())));
				}
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
				catch (AssertionError | RuntimeException ex) {
					fail("Seed " + this.seed + ", step " + this.step + ": " + ex.getMessage(), ex);
				}
			}
			System.out.println("PartitionCountModelTests: seed " + this.seed + " passed: " + this.counts);
		}

		private void step() {
			double choice = this.random.nextDouble();
			App app = this.apps.get(this.random.nextInt(this.apps.size()));
			if (choice < 0.30) {
				send(app);
			}
			else if (choice < 0.42) {
				cancel(app);
			}
			else if (choice < 0.47) {
				reschedule(app);
			}
			else if (choice < 0.55) {
				inspect(app);
			}
			else if (choice < 0.73) {
				consume();
			}
			else if (choice < 0.76) {
				replayDead(app);
			}
			else if (choice < 0.78) {
				purgeDeadById(app);
			}
			else if (choice < 0.80) {
				purgeDead();
			}
			else if (choice < 0.84) {
				pause(app);
			}
			else if (choice < 0.87) {
				resume(app);
			}
			else if (choice < 0.90) {
				drain();
			}
			else if (choice < 0.96) {
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
			String group = this.groupOf.get(id);
			boolean due = this.random.nextBoolean();
			boolean replacing = this.random.nextInt(4) == 0;
			NewMessage message = NewMessage.afterDelay(id, due ? Duration.ZERO : Duration.ofHours(1), body(id));
			if (group != null) {
				message = message.inGroup(group);
			}
			if (replacing) {
				message = message.replacingPending();
			}
			Outcome outcome = app.expect(this, true);
			try {
				Sent sent = app.store.send(TOPIC, List.of(message)).get(0);
				assertThat(outcome).as("send of %s by %s", id, app).isEqualTo(Outcome.DONE);
				Pending before = this.pending.get(id);
				if (before == null) {
					assertThat(sent.duplicate() || sent.replaced()).as("%s sent anew: duplicate or replaced", id)
						.isFalse();
					// A new message of a group that is due is made ready at once.
					this.pending.put(id, new Pending(due, due && group != null));
					count((group != null) ? "send in a group" : "send");
				}
				else if (!replacing) {
					// The same body again is the same message sent again: stored, as it
					// was.
					assertThat(sent.duplicate() || sent.replaced()).as("%s sent again: duplicate or replaced", id)
						.isFalse();
					count("send again");
				}
				else if (before.ready()) {
					// A ready message is never replaced.
					assertThat(sent.duplicate()).as("replace of ready %s: duplicate", id).isTrue();
					assertThat(sent.replaced()).as("replace of ready %s: replaced", id).isFalse();
					count("replace of a ready message");
				}
				else {
					assertThat(sent.replaced()).as("replace of scheduled %s: replaced", id).isTrue();
					this.pending.put(id, new Pending(due, false));
					count((group != null) ? "replace in a group" : "replace");
				}
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

		private void reschedule(App app) {
			String id = idMostlyAmong(this.pending.keySet());
			boolean due = this.random.nextBoolean();
			Outcome outcome = app.expect(this, false);
			try {
				long dueAt = app.store.reschedule(TOPIC, id, due ? Duration.ZERO : Duration.ofHours(1));
				assertThat(outcome).as("reschedule of %s by %s", id, app).isEqualTo(Outcome.DONE);
				if (this.pending.containsKey(id)) {
					assertThat(dueAt).as("reschedule of pending %s", id).isPositive();
					this.pending.put(id, new Pending(due, false));
				}
				else {
					assertThat(dueAt).as("reschedule of %s, not pending", id).isNegative();
				}
				count("reschedule");
			}
			catch (PartitionCountException ex) {
				assertThat(outcome).as("reschedule of %s by %s refused: %s", id, app, ex.getMessage())
					.isNotEqualTo(Outcome.DONE);
				count("reschedule refused");
			}
		}

		/** Inspects a message by id, or reads a group. */
		private void inspect(App app) {
			if (this.random.nextBoolean()) {
				readGroup(app);
				return;
			}
			String id = idMostlyAmong(this.pending.keySet());
			Outcome outcome = app.expect(this, false);
			try {
				MessageSnapshot snapshot = app.store.inspect(TOPIC, id, 10);
				assertThat(outcome).as("inspect of %s by %s", id, app).isEqualTo(Outcome.DONE);
				assertThat(snapshot != null).as("inspect of %s", id)
					.isEqualTo(this.pending.containsKey(id) || this.dead.contains(id));
				count("inspect");
			}
			catch (PartitionCountException ex) {
				assertThat(outcome).as("inspect of %s by %s refused: %s", id, app, ex.getMessage())
					.isNotEqualTo(Outcome.DONE);
				count("inspect refused");
			}
		}

		private void readGroup(App app) {
			String group = group();
			Outcome outcome = app.expect(this, false);
			try {
				boolean isPaused = new DelayQueueGroups(app.store).group(TOPIC, group).paused();
				assertThat(outcome).as("read of group %s by %s", group, app).isEqualTo(Outcome.DONE);
				assertThat(isPaused).as("group %s paused", group).isEqualTo(this.paused.contains(group));
				count("read a group");
			}
			catch (PartitionCountException ex) {
				assertThat(outcome).as("read of group %s by %s refused: %s", group, app, ex.getMessage())
					.isNotEqualTo(Outcome.DONE);
				count("read a group refused");
			}
		}

		/**
		 * A listener of the current count takes one due message of a partition and acks
		 * or buries it: one of a group that is not paused, if the partition holds one.
		 */
		private void consume() {
			RedisMessageStore store = current();
			// Mostly a partition that holds a due message, if one does.
			List<String> partitions = TopicPartitions.names(TOPIC, this.count);
			List<String> holding = this.pending.entrySet()
				.stream()
				.filter((entry) -> entry.getValue().due())
				.map((entry) -> partitionOf(entry.getKey(), this.count))
				.distinct()
				.sorted()
				.toList();
			String partition = (!holding.isEmpty() && this.random.nextInt(4) > 0)
					? holding.get(this.random.nextInt(holding.size()))
					: partitions.get(this.random.nextInt(partitions.size()));
			Transitions.promote(store, partition, 1000);
			Set<String> claimable = new HashSet<>();
			for (Map.Entry<String, Pending> entry : List.copyOf(this.pending.entrySet())) {
				String id = entry.getKey();
				if (entry.getValue().due() && partitionOf(id, this.count).equals(partition)) {
					this.pending.put(id, new Pending(true, true));
					String group = this.groupOf.get(id);
					if (group == null || !this.paused.contains(group)) {
						claimable.add(id);
					}
				}
			}
			// A claim may take nothing while saying more may be ready (a group whose
			// pause
			// ended rejoins the rotation for the next claim).
			List<ClaimedMessage> claimed = List.of();
			for (int attempt = 0; attempt < 3 && claimed.isEmpty(); attempt++) {
				claimed = Transitions.claim(store, partition, 1, LEASE);
			}
			if (claimed.isEmpty()) {
				assertThat(claimable).as("due messages of %s whose group is not paused, none claimed", partition)
					.isEmpty();
				count("claim of nothing");
				return;
			}
			ClaimedMessage message = claimed.get(0);
			assertThat(claimable)
				.as("claimed %s of %s is pending, due, of it, and of no paused group (paused: %s)", message.id(),
						partition, this.paused)
				.contains(message.id());
			this.pending.remove(message.id());
			String group = this.groupOf.get(message.id());
			if (this.random.nextBoolean()) {
				assertThat(Transitions.ack(store, partition, message.id(), message.leaseToken())).isTrue();
				count((group != null) ? "ack in a group" : "ack");
			}
			else {
				assertThat(Transitions.deadLetter(store, partition, message.id(), message.leaseToken(), "failed"))
					.isTrue();
				if (!this.dead.add(message.id())) {
					this.deadBefore.merge(message.id(), 1, Integer::sum);
				}
				count((group != null) ? "dead-letter in a group" : "dead-letter");
			}
		}

		private void replayDead(App app) {
			List<String> ids = ids(this.dead);
			Outcome outcome = app.expect(this, false);
			try {
				ReplayResult result = app.store.replayDead(TOPIC, ids);
				assertThat(outcome).as("replay of %s by %s", ids, app).isEqualTo(Outcome.DONE);
				// A dead letter whose id is stored again stays dead.
				List<String> expected = ids.stream()
					.filter((id) -> this.dead.contains(id) && !this.pending.containsKey(id))
					.toList();
				assertThat(result.replayed()).as("replayed of %s", ids).containsExactlyInAnyOrderElementsOf(expected);
				for (String id : expected) {
					this.dead.remove(id);
					this.pending.put(id, new Pending(true, false));
				}
				count("replay by id");
			}
			catch (PartitionCountException ex) {
				assertThat(outcome).as("replay of %s by %s refused: %s", ids, app, ex.getMessage())
					.isNotEqualTo(Outcome.DONE);
				count("replay by id refused");
			}
		}

		private void purgeDeadById(App app) {
			List<String> ids = ids(this.dead);
			Outcome outcome = app.expect(this, false);
			try {
				long deleted = app.store.purgeDead(TOPIC, ids);
				assertThat(outcome).as("purge of %s by %s", ids, app).isEqualTo(Outcome.DONE);
				assertThat(deleted).as("purged of %s", ids).isEqualTo(ids.stream().filter(this.dead::contains).count());
				ids.forEach(this.dead::remove);
				count("purge dead by id");
			}
			catch (PartitionCountException ex) {
				assertThat(outcome).as("purge of %s by %s refused: %s", ids, app, ex.getMessage())
					.isNotEqualTo(Outcome.DONE);
				count("purge dead by id refused");
			}
		}

		private void purgeDead() {
			long deleted = current().purgeDead(TOPIC, 1000);
			assertThat(deleted).isEqualTo(deadLetters());
			this.dead.clear();
			this.deadBefore.clear();
			count("purge dead");
		}

		/**
		 * Pauses a group until it is resumed, for an hour, or for 1 ms (then awaits its
		 * end).
		 */
		private void pause(App app) {
			String group = group();
			int kind = this.random.nextInt(4);
			Outcome outcome = app.expect(this, false);
			try {
				DelayQueueGroups groups = new DelayQueueGroups(app.store);
				if (kind == 0) {
					groups.pause(TOPIC, group);
				}
				else {
					groups.pause(TOPIC, group, (kind == 3) ? Duration.ofMillis(1) : Duration.ofHours(1));
				}
				assertThat(outcome).as("pause of %s by %s", group, app).isEqualTo(Outcome.DONE);
				if (kind == 3) {
					this.paused.remove(group);
					RedisMessageStore store = current();
					await().atMost(Duration.ofSeconds(5))
						.pollInterval(Duration.ofMillis(2))
						.until(() -> !new DelayQueueGroups(store).group(TOPIC, group).paused());
					count("pause that ended");
				}
				else {
					this.paused.add(group);
					count("pause");
				}
			}
			catch (PartitionCountException ex) {
				assertThat(outcome).as("pause of %s by %s refused: %s", group, app, ex.getMessage())
					.isNotEqualTo(Outcome.DONE);
				count("pause refused");
			}
		}

		private void resume(App app) {
			String group = group();
			Outcome outcome = app.expect(this, false);
			try {
				boolean resumed = new DelayQueueGroups(app.store).resume(TOPIC, group);
				assertThat(outcome).as("resume of %s by %s", group, app).isEqualTo(Outcome.DONE);
				assertThat(resumed).as("resume of %s", group).isEqualTo(this.paused.remove(group));
				count("resume");
			}
			catch (PartitionCountException ex) {
				assertThat(outcome).as("resume of %s by %s refused: %s", group, app, ex.getMessage())
					.isNotEqualTo(Outcome.DONE);
				count("resume refused");
			}
		}

		/**
		 * Empties the topic: cancels every pending message and purges the dead; resumes
		 * the paused groups half of the time (otherwise a pause alone holds the count).
		 * Or, a third of the time, empties partitions 1 and up only (the pending messages
		 * and pauses of partition 0 stay), so that the count may go down to one with
		 * messages and pauses, of groups too, where they are.
		 */
		private void drain() {
			RedisMessageStore store = current();
			boolean onlyAbove0 = this.count > 1 && this.random.nextInt(3) == 0;
			for (String id : List.copyOf(this.pending.keySet())) {
				if (!onlyAbove0 || !partitionOf(id, this.count).equals(TOPIC)) {
					assertThat(store.cancel(TOPIC, id)).as("cancel of %s", id).isTrue();
					this.pending.remove(id);
				}
			}
			purgeDead();
			TopicPartitions current = TopicPartitions.of(Map.of(TOPIC, this.count));
			if (onlyAbove0 || this.random.nextBoolean()) {
				DelayQueueGroups groups = new DelayQueueGroups(store);
				for (String group : List.copyOf(this.paused)) {
					if (!onlyAbove0 || !current.nameForGroup(TOPIC, group).equals(TOPIC)) {
						assertThat(groups.resume(TOPIC, group)).as("resume of %s", group).isTrue();
						this.paused.remove(group);
					}
				}
			}
			count(onlyAbove0 ? "drain of partitions 1 and up" : "drain");
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

		@SuppressWarnings("unchecked")
		private void check() {
			List<String> everyPartition = everyPartition();
			// One round trip (one script): the count, then each partition's messages,
			// their
			// groups, dead letters and group pauses.
			List<String> keys = new ArrayList<>();
			keys.add(keys(TOPIC).partitionCount());
			for (String partition : everyPartition) {
				TopicKeys partitionKeys = keys(partition);
				keys.addAll(List.of(partitionKeys.messages(), partitionKeys.groups(), partitionKeys.dead(),
						partitionKeys.groupPauses()));
			}
			List<Object> read = this.redis.execute(READ_PARTITIONS, keys);
			String stored = ((String) read.get(0)).isEmpty() ? null : (String) read.get(0);
			assertThat((stored != null) ? Integer.parseInt(stored) : 1).as("count in Redis").isEqualTo(this.count);
			TopicPartitions current = TopicPartitions.of(Map.of(TOPIC, this.count));
			// Pauses are an hour long or until resumed, or have ended (1 ms long).
			long unendedAfter = System.currentTimeMillis() + Duration.ofMinutes(30).toMillis();
			int messages = 0;
			int deadLetters = 0;
			int pauses = 0;
			for (int i = 0; i < everyPartition.size(); i++) {
				String partition = everyPartition.get(i);
				Map<String, String> groups = pairs((List<String>) read.get(2 + 4 * i));
				for (String id : (Collection<String>) read.get(1 + 4 * i)) {
					assertThat(partitionOf(id, this.count))
						.as("partition of message %s (group %s)", id, this.groupOf.get(id))
						.isEqualTo(partition);
					assertThat(groups.get(id)).as("group of message %s in Redis", id).isEqualTo(this.groupOf.get(id));
					messages++;
				}
				for (String name : (Collection<String>) read.get(3 + 4 * i)) {
					String id = name.split("~", 2)[0];
					assertThat(partitionOf(id, this.count))
						.as("partition of dead letter %s (group %s)", name, this.groupOf.get(id))
						.isEqualTo(partition);
					deadLetters++;
				}
				for (Map.Entry<String, String> pause : pairs((List<String>) read.get(4 + 4 * i)).entrySet()) {
					String group = pause.getKey();
					String end = pause.getValue();
					if (end.equals("inf") || Double.parseDouble(end) > unendedAfter) {
						assertThat(this.paused).as("paused groups, one found in %s", partition).contains(group);
						assertThat(current.nameForGroup(TOPIC, group)).as("partition of the pause of %s", group)
							.isEqualTo(partition);
						pauses++;
					}
				}
			}
			assertThat(messages).as("stored messages").isEqualTo(this.pending.size());
			assertThat(deadLetters).as("dead letters").isEqualTo(deadLetters());
			assertThat(pauses).as("pauses that have not ended (paused: %s)", this.paused).isEqualTo(this.paused.size());
			RedisMessageStore store = current();
			for (Map.Entry<String, Pending> entry : this.pending.entrySet()) {
				MessageSnapshot snapshot = store.inspect(TOPIC, entry.getKey(), 10);
				assertThat(snapshot).as("message %s found by id", entry.getKey()).isNotNull();
				assertThat(snapshot.state()).as("state of %s", entry.getKey())
					.isEqualTo(entry.getValue().ready() ? MessageState.READY : MessageState.SCHEDULED);
			}
			for (String id : this.dead) {
				if (!this.pending.containsKey(id)) {
					MessageSnapshot snapshot = store.inspect(TOPIC, id, 10);
					assertThat(snapshot).as("dead letter %s found by id", id).isNotNull();
					assertThat(snapshot.state()).as("state of %s", id).isEqualTo(MessageState.DEAD);
				}
			}
			DelayQueueGroups groups = new DelayQueueGroups(store);
			for (String group : GROUPS) {
				assertThat(groups.group(TOPIC, group).paused()).as("group %s paused", group)
					.isEqualTo(this.paused.contains(group));
			}
		}

		/** A flat list of keys and values as a map. */
		private static Map<String, String> pairs(List<String> flat) {
			Map<String, String> pairs = new HashMap<>();
			for (int i = 0; i < flat.size(); i += 2) {
				pairs.put(flat.get(i), flat.get(i + 1));
			}
			return pairs;
		}

		/** The partitions of every count, each once. */
		private static List<String> everyPartition() {
			Set<String> every = new LinkedHashSet<>();
			for (int partitions = 1; partitions <= MAX_COUNT; partitions++) {
				every.addAll(TopicPartitions.names(TOPIC, partitions));
			}
			return List.copyOf(every);
		}

		/**
		 * The partition of a message under a count: its group's if it has one, else its
		 * id's.
		 */
		private String partitionOf(String id, int partitions) {
			TopicPartitions under = TopicPartitions.of(Map.of(TOPIC, partitions));
			String group = this.groupOf.get(id);
			return (group != null) ? under.nameForGroup(TOPIC, group) : under.nameFor(TOPIC, id);
		}

		/** Whether the count may change from the current one to another now. */
		boolean mayChangeTo(int partitions) {
			return messagesLetChangeTo(partitions) && pausesLetChangeTo(partitions);
		}

		/**
		 * Whether no message, stored or dead, would move: none at all, or, to go down to
		 * one partition, none outside partition 0.
		 */
		private boolean messagesLetChangeTo(int partitions) {
			List<String> ids = new ArrayList<>(this.pending.keySet());
			ids.addAll(this.dead);
			ids.addAll(this.deadBefore.keySet());
			return (partitions == 1) ? ids.stream().allMatch((id) -> partitionOf(id, this.count).equals(TOPIC))
					: ids.isEmpty();
		}

		/** The same for the pauses that have not ended. */
		private boolean pausesLetChangeTo(int partitions) {
			TopicPartitions under = TopicPartitions.of(Map.of(TOPIC, this.count));
			return (partitions == 1)
					? this.paused.stream().allMatch((group) -> under.nameForGroup(TOPIC, group).equals(TOPIC))
					: this.paused.isEmpty();
		}

		private long deadLetters() {
			return this.dead.size() + this.deadBefore.values().stream().mapToLong(Integer::longValue).sum();
		}

		/** A fresh store on the current count, agreed. */
		private RedisMessageStore current() {
			RedisMessageStore store = store(this.count);
			store.agreePartitions(TOPIC);
			return store;
		}

		/**
		 * A store on a count, not agreed yet. Its timeout is long enough for a loaded
		 * machine (one of 500 ms timed a send out on two busy CPUs); no call of the model
		 * waits for it.
		 */
		private RedisMessageStore store(int partitions) {
			RedisMessageStore store = new RedisMessageStore(this.connectionFactory, this.prefix, Duration.ofSeconds(2));
			store.usePartitions(TopicPartitions.of(Map.of(TOPIC, partitions)));
			return store;
		}

		private TopicKeys keys(String partition) {
			return new TopicKeys(this.prefix, partition);
		}

		/**
		 * The body of a message: a message of a group has its group in its header, as the
		 * template writes it (a replay reads it there).
		 */
		private byte[] body(String id) {
			byte[] payload = ("body of " + id).getBytes(StandardCharsets.UTF_8);
			String group = this.groupOf.get(id);
			return (group != null) ? MessageFormat.encodeBody(Map.of(MessageFormat.GROUP_HEADER, group), payload)
					: payload;
		}

		private String id() {
			return "m-" + this.random.nextInt(IDS);
		}

		/** One to three different ids. */
		/** An id, half of the time one of the given ones (if any). */
		private String idMostlyAmong(Set<String> some) {
			if (some.isEmpty() || this.random.nextBoolean()) {
				return id();
			}
			List<String> sorted = some.stream().sorted().toList();
			return sorted.get(this.random.nextInt(sorted.size()));
		}

		/** One to three different ids, each half of the time one of the given ones. */
		private List<String> ids(Set<String> some) {
			Set<String> ids = new LinkedHashSet<>();
			int most = 1 + this.random.nextInt(3);
			while (ids.size() < most) {
				ids.add(idMostlyAmong(some));
			}
			return List.copyOf(ids);
		}

		private String group() {
			return GROUPS.get(this.random.nextInt(GROUPS.size()));
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
						if (run.pending.keySet().stream().anyMatch(run.groupOf::containsKey)) {
							run.count("count changed holding messages of groups");
						}
						if (!run.paused.isEmpty()) {
							run.count("count changed holding a pause");
						}
						run.count = this.partitions;
						this.agreed = true;
						run.count("count changed to " + this.partitions);
					}
					else {
						if (mayChange && run.messagesLetChangeTo(this.partitions)) {
							run.count("count change held by a pause");
						}
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

	/** A pending message, by the model. */
	private record Pending(boolean due, boolean ready) {
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

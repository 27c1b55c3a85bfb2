package io.github.delayqueue.review;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;

import io.github.delayqueue.store.ClaimedMessage;
import io.github.delayqueue.store.MessageFormat;
import io.github.delayqueue.store.MessageSnapshot;
import io.github.delayqueue.store.MessageState;
import io.github.delayqueue.store.NewMessage;
import io.github.delayqueue.store.ReplayResult;
import io.github.delayqueue.store.TopicPartitions;
import io.github.delayqueue.store.redis.RedisMessageStore;
import io.github.delayqueue.test.redis.FaultyRedisProxy;
import io.github.delayqueue.test.redis.TestRedis;
import io.github.delayqueue.testsupport.OnOneServerVersion;
import io.github.delayqueue.testsupport.PartitionApps;
import io.github.delayqueue.testsupport.Transitions;
import org.junit.jupiter.api.Disabled;
import org.junit.jupiter.api.Test;

import static io.github.delayqueue.testsupport.PartitionApps.TOPIC;
import static io.github.delayqueue.testsupport.PartitionApps.idIn;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Adversarial review of groups on partitioned topics (commit 35d4e18): a grouped message
 * lives in its group's partition, and the calls by id that miss in the id's partition ask
 * every other partition in one pipelined round trip. Checks, on real Redis, that the
 * fan-out finds and acts on grouped messages when a cancel races the send, when a reply
 * is lost and the call runs twice, and when a partition refuses a stale count in the
 * middle of the fan-out; what replay and purge of dead letters report for repeated ids
 * and for an id sent in two groups; what a change of the number of partitions leaves
 * behind in the partitions it drops; and measures what the fan-out costs a cancel that
 * misses on an ungrouped topic.
 */
@OnOneServerVersion
class PartitionedGroupsReviewTests {

	private static final int COUNT = 4;

	private static final Duration LEASE = Duration.ofMinutes(1);

	private static final Duration TIMEOUT = Duration.ofSeconds(10);

	// --- 1. calls by id and the fan-out

	@Test
	void aCancelMadeRightAfterAnAsyncGroupedSendOfTheSameIdAlwaysCancelsIt() {
		TestRedis redis = TestRedis.shared();
		try (PartitionApps apps = new PartitionApps();
				FaultyRedisProxy proxy = FaultyRedisProxy.start(redis.host(), redis.port())) {
			RedisMessageStore store = apps.storeVia(proxy, COUNT, TIMEOUT);
			store.agreePartitions(TOPIC);
			proxy.latency(Duration.ofMillis(3));
			String group = groupIn(store, 2);
			for (int i = 0; i < 60; i++) {
				// Ids of every partition, the group's own included.
				String id = "paid-" + i;
				CompletableFuture<?> sent = store
					.sendAsync(Map.of(TOPIC, List.of(message(id, Duration.ofHours(1)).inGroup(group))));
				assertThat(store.cancel(TOPIC, id)).as("cancel of %s right after its send", id).isTrue();
				sent.join();
				assertThat(store.inspect(TOPIC, id, 10)).as("%s after its cancel", id).isNull();
			}
		}
	}

	/**
	 * The send's reply is lost (Lettuce sends it again after reconnecting, so it runs
	 * twice): a cancel made right after the asynchronous send waits for its outcome,
	 * finds the message in its group's partition, and no run of the send brings it back.
	 */
	@Test
	void aCancelRightAfterAGroupedSendWhoseReplyIsLostCancelsItForGood() {
		TestRedis redis = TestRedis.shared();
		try (PartitionApps apps = new PartitionApps();
				FaultyRedisProxy proxy = FaultyRedisProxy.start(redis.host(), redis.port())) {
			RedisMessageStore store = apps.storeVia(proxy, COUNT, TIMEOUT);
			store.agreePartitions(TOPIC);
			String group = groupIn(store, 3);
			String id = idIn(0, COUNT, "resent-");
			FaultyRedisProxy.Fault fault = proxy.dropNextReplyToCommand(FaultyRedisProxy.withArgumentContaining(
					"EVALSHA", store.keys(store.partitions().nameForGroup(TOPIC, group)).messages()));
			CompletableFuture<?> sent = store
				.sendAsync(Map.of(TOPIC, List.of(message(id, Duration.ofHours(1)).inGroup(group))));

			assertThat(store.cancel(TOPIC, id)).isTrue();

			assertThat(fault.hasFired()).isTrue();
			assertThat(sent).isDone();
			assertThat(store.inspect(TOPIC, id, 10)).isNull();
			assertThat(store.stats(TOPIC).scheduled()).isZero();
		}
	}

	@Test
	void aCancelWhoseFanOutReplyIsLostRunsTwiceAndReportsTheCancelOnce() {
		TestRedis redis = TestRedis.shared();
		try (PartitionApps apps = new PartitionApps();
				FaultyRedisProxy proxy = FaultyRedisProxy.start(redis.host(), redis.port())) {
			RedisMessageStore store = apps.storeVia(proxy, COUNT, TIMEOUT);
			String group = groupIn(store, 2);
			String groupPartition = store.partitions().nameForGroup(TOPIC, group);
			String id = idIn(0, COUNT, "lost-");
			store.send(TOPIC, List.of(message(id, Duration.ofHours(1)).inGroup(group)));
			FaultyRedisProxy.Fault fault = proxy.dropNextReplyToCommand(
					FaultyRedisProxy.withArgumentContaining("EVALSHA", store.keys(groupPartition).messages()));

			assertThat(store.cancel(TOPIC, id)).isTrue();

			assertThat(fault.hasFired()).as("the fan-out's reply from the group's partition was dropped").isTrue();
			assertThat(store.inspect(TOPIC, id, 10)).isNull();
			assertThat(store.cancel(TOPIC, id)).as("a second cancel request").isFalse();
			// The same id sent again is a new message: the first request's token does not
			// cancel it.
			store.send(TOPIC, List.of(message(id, Duration.ofHours(1)).inGroup(group)));
			assertThat(store.inspect(TOPIC, id, 10)).isNotNull();
		}
	}

	@Test
	void aReplayByIdWhoseFanOutMeetsARefusalReportsTheMessageItReplayed() {
		try (PartitionApps apps = new PartitionApps()) {
			RedisMessageStore store = apps.store(COUNT, TIMEOUT);
			String group = groupIn(store, 2);
			String id = idIn(0, COUNT, "replayed-");
			kill(store, group, id);
			// Partition 1's marker is gone (as Redis lost it, or a change left it
			// behind):
			// partition 1 refuses this application's count until the store repairs it.
			apps.redis().delete(apps.markerOf(store, 1, COUNT));

			ReplayResult result = store.replayDead(TOPIC, List.of(id));

			assertThat(store.inspect(TOPIC, id, 10).state()).as("the message").isNotEqualTo(MessageState.DEAD);
			assertThat(result.replayed()).as("the replayed ids").containsExactly(id);
			assertThat(result.skipped()).isZero();
		}
	}

	@Test
	void aPurgeByIdWhoseFanOutMeetsARefusalCountsTheMessageItDeleted() {
		try (PartitionApps apps = new PartitionApps()) {
			RedisMessageStore store = apps.store(COUNT, TIMEOUT);
			String group = groupIn(store, 2);
			String id = idIn(0, COUNT, "purged-");
			kill(store, group, id);
			apps.redis().delete(apps.markerOf(store, 3, COUNT));

			long deleted = store.purgeDead(TOPIC, List.of(id));

			assertThat(store.inspect(TOPIC, id, 10)).as("the message").isNull();
			assertThat(deleted).as("messages deleted").isEqualTo(1);
		}
	}

	@Test
	void aCancelAndARescheduleWhoseFanOutMeetsARefusalAreRunAgainSafely() {
		try (PartitionApps apps = new PartitionApps()) {
			RedisMessageStore store = apps.store(COUNT, TIMEOUT);
			String group = groupIn(store, 2);
			String id = idIn(0, COUNT, "again-");
			store.send(TOPIC, List.of(message(id, Duration.ofHours(1)).inGroup(group)));
			apps.redis().delete(apps.markerOf(store, 1, COUNT));
			assertThat(store.reschedule(TOPIC, id, Duration.ofHours(2))).isPositive();
			apps.redis().delete(apps.markerOf(store, 3, COUNT));
			assertThat(store.inspect(TOPIC, id, 10)).isNotNull();
			apps.redis().delete(apps.markerOf(store, 1, COUNT));
			assertThat(store.cancel(TOPIC, id)).isTrue();
			assertThat(store.inspect(TOPIC, id, 10)).isNull();
		}
	}

	@Test
	void aReplayOfAnIdNamedTwiceCountsItOnceOnATopicOfOnePartition() {
		try (PartitionApps apps = new PartitionApps()) {
			RedisMessageStore store = apps.store(1, TIMEOUT);
			PartitionApps.deadLetter(store, "twice");

			ReplayResult result = store.replayDead(TOPIC, List.of("twice", "twice"));

			assertThat(result.replayed()).containsExactly("twice");
			assertThat(result.skipped()).as("ids left dead or not found (an id named twice counts once)").isZero();
		}
	}

	@Test
	void aReplayOfAnIdNamedTwiceCountsItOnceOnAPartitionedTopic() {
		try (PartitionApps apps = new PartitionApps()) {
			RedisMessageStore store = apps.store(COUNT, TIMEOUT);
			String group = groupIn(store, 2);
			String id = idIn(0, COUNT, "twice-");
			kill(store, group, id);

			ReplayResult result = store.replayDead(TOPIC, List.of(id, "missing", id, "missing"));

			assertThat(result.replayed()).containsExactly(id);
			assertThat(result.skipped()).as("ids left dead or not found (an id named twice counts once)").isEqualTo(1);
		}
	}

	@Test
	void theDeadLettersOfAnIdOfBothKindsAreReplayedAndPurgedWhereverTheyAre() {
		try (PartitionApps apps = new PartitionApps()) {
			RedisMessageStore store = apps.store(COUNT, TIMEOUT);
			String group = groupIn(store, 2);
			String grouped = idIn(0, COUNT, "g-dead-");
			String plain = idIn(1, COUNT, "p-dead-");
			String groupedHere = idIn(2, COUNT, "gh-dead-");
			kill(store, group, grouped);
			kill(store, group, groupedHere);
			PartitionApps.deadLetter(store, plain);

			ReplayResult replayed = store.replayDead(TOPIC, List.of(plain, grouped, "missing", groupedHere));
			assertThat(replayed.replayed()).containsExactlyInAnyOrder(plain, grouped, groupedHere);
			assertThat(replayed.skipped()).isEqualTo(1);

			for (String id : List.of(plain, grouped, groupedHere)) {
				assertThat(store.cancel(TOPIC, id)).as("cancel of the replayed %s", id).isTrue();
			}
			kill(store, group, grouped);
			assertThat(store.purgeDead(TOPIC, List.of("missing", grouped, plain))).isEqualTo(1);
			assertThat(store.stats(TOPIC).dead()).isZero();
		}
	}

	/**
	 * A fan-out whose reply from the group's partition is held past the store's timeout
	 * fails with a timeout within it (plus a round trip), and does not hang; the cancel
	 * ran, and a cancel made again reports the message gone.
	 */
	@Test
	void aFanOutWhoseReplyIsHeldFailsWithinTheStoresTimeout() {
		TestRedis redis = TestRedis.shared();
		Duration timeout = Duration.ofMillis(500);
		try (PartitionApps apps = new PartitionApps();
				FaultyRedisProxy proxy = FaultyRedisProxy.start(redis.host(), redis.port())) {
			RedisMessageStore direct = apps.store(COUNT, TIMEOUT);
			// Agreed first without the proxy, so that the first calls of the JVM do not
			// spend the short timeout on loading the client.
			direct.agreePartitions(TOPIC);
			RedisMessageStore store = apps.storeVia(proxy, COUNT, timeout);
			store.agreePartitions(TOPIC);
			String group = groupIn(store, 2);
			String id = idIn(0, COUNT, "held-");
			direct.send(TOPIC, List.of(message(id, Duration.ofHours(1)).inGroup(group)));
			FaultyRedisProxy.Fault fault = proxy.delayNextReplyToCommand(
					FaultyRedisProxy.withArgumentContaining("EVALSHA",
							store.keys(store.partitions().nameForGroup(TOPIC, group)).messages()),
					Duration.ofSeconds(3));
			long started = System.nanoTime();

			Throwable failure = org.assertj.core.api.Assertions.catchThrowable(() -> store.cancel(TOPIC, id));

			long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
			assertThat(fault.hasFired()).isTrue();
			assertThat(failure).isInstanceOf(org.springframework.dao.QueryTimeoutException.class)
				.hasMessageContaining(id);
			assertThat(tookMillis).as("ms the cancel took").isLessThan(timeout.toMillis() + 300);
			assertThat(direct.inspect(TOPIC, id, 10)).as("the message, cancelled by the call that timed out").isNull();
		}
	}

	/**
	 * Inspect and reschedule of a grouped message outside its id's partition in each
	 * state: pending (found, rescheduled), in flight and dead (found, not rescheduled),
	 * replayed (pending again).
	 */
	@Test
	void aGroupedMessageIsInspectedAndRescheduledInEachStateOutsideItsIdsPartition() {
		try (PartitionApps apps = new PartitionApps()) {
			RedisMessageStore store = apps.store(COUNT, TIMEOUT);
			String group = groupIn(store, 3);
			String partition = store.partitions().nameForGroup(TOPIC, group);
			String id = idIn(1, COUNT, "states-");
			store.send(TOPIC, List.of(grouped(id, group)));
			assertThat(store.inspect(TOPIC, id, 10).state()).isIn(MessageState.SCHEDULED, MessageState.READY);
			Transitions.promote(store, partition, 10);
			List<ClaimedMessage> claimed = Transitions.claim(store, partition, 10, LEASE);
			assertThat(store.inspect(TOPIC, id, 10).state()).isEqualTo(MessageState.IN_FLIGHT);
			assertThat(store.reschedule(TOPIC, id, Duration.ofHours(1))).as("reschedule in flight").isNegative();
			assertThat(store.cancel(TOPIC, id)).as("cancel in flight").isFalse();
			assertThat(Transitions.deadLetter(store, partition, id, claimed.get(0).leaseToken(), "failed")).isTrue();
			assertThat(store.inspect(TOPIC, id, 10).state()).isEqualTo(MessageState.DEAD);
			assertThat(store.reschedule(TOPIC, id, Duration.ofHours(1))).as("reschedule of a dead letter").isNegative();
			assertThat(store.cancel(TOPIC, id)).as("cancel of a dead letter").isFalse();
			assertThat(store.replayDead(TOPIC, 10, 0).replayed()).containsExactly(id);
			assertThat(store.reschedule(TOPIC, id, Duration.ofHours(1))).as("reschedule once replayed").isPositive();
			assertThat(store.inspect(TOPIC, id, 10).state()).isEqualTo(MessageState.SCHEDULED);
		}
	}

	/**
	 * Replay by rank and purge of the oldest on a topic whose dead letters are grouped,
	 * in several partitions, some under the name an earlier dead letter of an id is kept
	 * as ({@code <id>~<time>}, in the group's partition, not the id's).
	 */
	@Test
	void groupedDeadLettersAndTheirEarlierNamesAreReplayedByRankAndPurgedOldestFirst() {
		try (PartitionApps apps = new PartitionApps()) {
			RedisMessageStore store = apps.store(COUNT, TIMEOUT);
			String again = idIn(0, COUNT, "again-");
			kill(store, groupIn(store, 2), again);
			kill(store, groupIn(store, 2), again);
			kill(store, groupIn(store, 1), idIn(3, COUNT, "one-"));
			PartitionApps.deadLetter(store, idIn(2, COUNT, "plain-"));
			List<String> dead = store.page(TOPIC, MessageState.DEAD, 0, 10)
				.messages()
				.stream()
				.map(io.github.delayqueue.store.MessageSummary::id)
				.toList();
			assertThat(dead).hasSize(4).anyMatch((name) -> name.startsWith(again + "~"));
			String buried = dead.stream().filter((name) -> name.startsWith(again + "~")).findFirst().orElseThrow();
			assertThat(store.inspect(TOPIC, buried, 10)).as("the earlier dead letter %s", buried).isNotNull();

			ReplayResult replayed = store.replayDead(TOPIC, 2, 1);
			assertThat(replayed.replayed()).as("the 2nd and 3rd oldest").containsExactlyElementsOf(dead.subList(1, 3));
			assertThat(replayed.skipped()).isZero();
			assertThat(store.purgeDead(TOPIC, 10)).isEqualTo(2);
			assertThat(store.stats(TOPIC).dead()).isZero();
		}
	}

	/**
	 * A group of a partitioned topic that nothing was sent to yet (Redis still holds the
	 * count of one partition) is paused, read and resumed, as the commit's own
	 * {@code GroupPauseReviewTests.badInputIsRefusedAndEdgeLengthsHold} expects. The
	 * pause agrees the count by a call that may not change it, and is refused with a
	 * {@code PartitionCountException}. Letting a pause change the count as a send does
	 * would fix this, but would let an operations application that does not configure the
	 * topic's partitions take an empty topic to one partition with its pause, after which
	 * the applications' sends are refused until the pause ends: a design question.
	 */
	@Test
	@Disabled("Finding: pausing a group of a partitioned topic before its first send fails with PartitionCountException; GroupPauseReviewTests.badInputIsRefusedAndEdgeLengthsHold fails on main")
	void aGroupOfAPartitionedTopicIsPausedBeforeTheFirstSend() {
		try (PartitionApps apps = new PartitionApps()) {
			RedisMessageStore store = apps.store(COUNT, TIMEOUT);
			io.github.delayqueue.group.DelayQueueGroups groups = new io.github.delayqueue.group.DelayQueueGroups(store);
			groups.pause(TOPIC, "early");
			assertThat(groups.group(TOPIC, "early").paused()).isTrue();
			assertThat(groups.resume(TOPIC, "early")).isTrue();
		}
	}

	// --- an id in two groups

	/**
	 * The same id sent in two groups is two messages. A cancel that finds one in the id's
	 * partition stops there; one that does not asks the others and cancels every copy.
	 * Which happens depends on whether one of the groups falls in the id's partition.
	 */
	@Test
	@Disabled("Finding: a cancel of an id sent in two groups cancels both copies only when neither group falls in the id's partition; else one copy stays pending")
	void aCancelOfAnIdSentInTwoGroupsLeavesNoCopyPendingWhateverPartitionsTheGroupsFallIn() {
		try (PartitionApps apps = new PartitionApps()) {
			RedisMessageStore store = apps.store(COUNT, TIMEOUT);
			String id = idIn(0, COUNT, "twice-");
			// Neither group in the id's partition: both copies are cancelled.
			store.send(TOPIC, List.of(message(id, Duration.ofHours(1)).inGroup(groupIn(store, 1))));
			store.send(TOPIC, List.of(message(id, Duration.ofHours(1)).inGroup(groupIn(store, 2))));
			assertThat(store.cancel(TOPIC, id)).isTrue();
			assertThat(store.inspect(TOPIC, id, 10)).as("a copy after the cancel (groups in partitions 1, 2)").isNull();
			// One group in the id's partition: only that copy is cancelled.
			store.send(TOPIC, List.of(message(id, Duration.ofHours(1)).inGroup(groupIn(store, 0))));
			store.send(TOPIC, List.of(message(id, Duration.ofHours(1)).inGroup(groupIn(store, 2))));
			assertThat(store.cancel(TOPIC, id)).isTrue();
			assertThat(store.inspect(TOPIC, id, 10)).as("a copy after the cancel (groups in partitions 0, 2)").isNull();
		}
	}

	/**
	 * {@code purgeDead(topic, limit)} reads the ids of the oldest dead letters and purges
	 * those ids, "so that a call sent twice never deletes more than the ones it read". An
	 * id that died in two groups (in two partitions) is one name read, and the purge by
	 * id deletes every copy it finds once the id's partition misses.
	 */
	@Test
	@Disabled("Finding: purgeDead(topic, 1) deletes two dead letters when the oldest one's id also died in another group (another partition)")
	void purgingTheOldestDeadLetterDeletesOneWhenItsIdDiedInTwoGroups() {
		try (PartitionApps apps = new PartitionApps()) {
			RedisMessageStore store = apps.store(COUNT, TIMEOUT);
			String id = idIn(0, COUNT, "dead-twice-");
			kill(store, groupIn(store, 1), id);
			kill(store, groupIn(store, 2), id);
			assertThat(store.stats(TOPIC).dead()).isEqualTo(2);

			assertThat(store.purgeDead(TOPIC, 1)).as("dead letters purged by a purge of the oldest one").isOne();
			assertThat(store.stats(TOPIC).dead()).isOne();
		}
	}

	// --- 6. the cost of the fan-out on an ungrouped topic

	/**
	 * Prints the mean time of a cancel that finds its message (one call) and of one that
	 * does not (one call, then one to each other partition, pipelined), directly on Redis
	 * and through a proxy that puts it 3 ms away. The proxy does not set TCP_NODELAY on
	 * its sockets, so its numbers for pipelined calls include Nagle's delays.
	 */
	@Test
	void aCancelThatMissesOnAnUngroupedPartitionedTopicCostsOneMoreRoundTripToEveryOtherPartition() {
		for (int count : List.of(4, 16)) {
			measureCancels(count, -1);
			measureCancels(count, 3);
		}
	}

	/** Measures cancels directly on Redis (latency -1) or through a proxy. */
	private static void measureCancels(int count, int latencyMillis) {
		TestRedis redis = TestRedis.shared();
		try (PartitionApps apps = new PartitionApps();
				FaultyRedisProxy proxy = FaultyRedisProxy.start(redis.host(), redis.port())) {
			RedisMessageStore store = (latencyMillis < 0) ? apps.store(count, TIMEOUT)
					: apps.storeVia(proxy, count, TIMEOUT);
			store.agreePartitions(TOPIC);
			for (int i = 0; i < 20; i++) {
				store.send(TOPIC, List.of(message("warm-" + i, Duration.ofHours(1))));
				store.cancel(TOPIC, "warm-" + i);
				store.cancel(TOPIC, "warm-" + i);
			}
			proxy.latency(Duration.ofMillis(Math.max(0, latencyMillis)));
			int rounds = 40;
			long[] hit = new long[rounds];
			long[] miss = new long[rounds];
			int before = proxy.forwardedCount(FaultyRedisProxy.named("EVALSHA", "EVAL"));
			for (int i = 0; i < rounds; i++) {
				String id = "order-" + i;
				store.send(TOPIC, List.of(message(id, Duration.ofHours(1))));
				long started = System.nanoTime();
				assertThat(store.cancel(TOPIC, id)).isTrue();
				hit[i] = System.nanoTime() - started;
				started = System.nanoTime();
				assertThat(store.cancel(TOPIC, id)).as("a cancel of a message gone").isFalse();
				miss[i] = System.nanoTime() - started;
			}
			int calls = proxy.forwardedCount(FaultyRedisProxy.named("EVALSHA", "EVAL")) - before;
			java.util.Arrays.sort(hit);
			java.util.Arrays.sort(miss);
			System.out.printf(
					"PGR cancel, ungrouped topic of %d partitions, %s: hit median %.2f ms (mean %.2f), miss median"
							+ " %.2f ms (mean %.2f), of %d each%s%n",
					count, (latencyMillis < 0) ? "Redis direct" : "Redis " + latencyMillis + " ms away (proxy)",
					hit[rounds / 2] / 1e6, java.util.Arrays.stream(hit).average().orElse(0) / 1e6,
					miss[rounds / 2] / 1e6, java.util.Arrays.stream(miss).average().orElse(0) / 1e6, rounds,
					(latencyMillis < 0) ? ""
							: String.format("; script calls a round (send, hit, miss): %.1f", (double) calls / rounds));
			if (latencyMillis >= 0) {
				assertThat(calls).as("script calls: a send, a hit, a miss").isEqualTo(rounds * (1 + 1 + count));
			}
		}
	}

	// --- 4. count changes

	/**
	 * Going down to one partition while partition 0 holds grouped messages (one in
	 * flight) and partitions 1 and up held groups whose messages were all handled and a
	 * pause that ended: allowed; every group then maps to partition 0, where its limit
	 * and read hold at once, and nothing of the groups' state is left in the other
	 * partitions but what a partition keeps once empty.
	 */
	@Test
	void goingDownToOnePartitionLeavesTheGroupsWorkingInPartitionZero() {
		try (PartitionApps apps = new PartitionApps()) {
			RedisMessageStore four = apps.store(COUNT, TIMEOUT);
			String g0 = groupIn(four, 0);
			String g2 = groupIn(four, 2);
			String g3 = groupIn(four, 3);
			List<NewMessage> messages = new ArrayList<>();
			for (int i = 0; i < 3; i++) {
				messages.add(message(g0 + "-" + i, Duration.ZERO).inGroup(g0));
				messages.add(message(g2 + "-" + i, Duration.ZERO).inGroup(g2));
			}
			four.send(TOPIC, messages);
			String p2 = four.partitions().nameForGroup(TOPIC, g2);
			Transitions.promote(four, p2, 10);
			for (int i = 0; i < 3; i++) {
				List<ClaimedMessage> claimed = claim(four, p2, 1);
				assertThat(claimed).extracting(ClaimedMessage::id).containsExactly(g2 + "-" + i);
				assertThat(Transitions.ack(four, p2, claimed.get(0).id(), claimed.get(0).leaseToken())).isTrue();
			}
			new io.github.delayqueue.group.DelayQueueGroups(four).pause(TOPIC, g3, Duration.ofMillis(20));
			Transitions.promote(four, TOPIC, 10);
			assertThat(claim(four, TOPIC, 1)).extracting(ClaimedMessage::id).containsExactly(g0 + "-0");
			org.awaitility.Awaitility.await()
				.pollDelay(Duration.ofMillis(30))
				.until(() -> !new io.github.delayqueue.group.DelayQueueGroups(four).group(TOPIC, g3).paused());

			RedisMessageStore one = apps.store(1, TIMEOUT);
			one.send(TOPIC, List.of(message("plain", Duration.ofHours(1))));

			io.github.delayqueue.group.DelayQueueGroups groups = new io.github.delayqueue.group.DelayQueueGroups(one);
			assertThat(groups.group(TOPIC, g0).inFlight()).isOne();
			assertThat(groups.group(TOPIC, g0).ready()).isEqualTo(2);
			assertThat(groups.group(TOPIC, g2).ready()).isZero();
			one.send(TOPIC, List.of(message(g2 + "-again", Duration.ZERO).inGroup(g2),
					message(g3 + "-again", Duration.ZERO).inGroup(g3)));
			Transitions.promote(one, TOPIC, 10);
			assertThat(claim(one, TOPIC, 1)).as("claimed with g0 at its limit of 1")
				.extracting(ClaimedMessage::id)
				.containsExactlyInAnyOrder(g2 + "-again", g3 + "-again");
			List<String> left = new ArrayList<>();
			for (String name : TopicPartitions.names(TOPIC, COUNT).subList(1, COUNT)) {
				var keys = one.keys(name);
				for (String key : List.of(keys.groups(), keys.groupReady(), keys.groupCounts(), keys.groupTags(),
						keys.groupRotation(), keys.groupSlots(), keys.groupPauses(), keys.messages())) {
					if (Boolean.TRUE.equals(apps.redis().hasKey(key))) {
						left.add(key + "=" + apps.redis().type(key));
					}
				}
			}
			System.out.println("PGR group keys left in partitions 1-3 after going down to 1: " + left);
			assertThat(left).as("group keys of messages left in partitions 1-3")
				.noneMatch((key) -> key.contains(":gr=") || key.contains(":gc="));
		}
	}

	@Test
	void goingUpFromOnePartitionWaitsForAPauseInPartitionZeroButNotForOneThatEnded() {
		try (PartitionApps apps = new PartitionApps()) {
			RedisMessageStore one = apps.store(1, TIMEOUT);
			one.agreePartitions(TOPIC);
			io.github.delayqueue.group.DelayQueueGroups groups = new io.github.delayqueue.group.DelayQueueGroups(one);
			groups.pause(TOPIC, "ended", Duration.ofMillis(1));
			groups.pause(TOPIC, "held", Duration.ofHours(1));
			RedisMessageStore four = apps.store(COUNT, TIMEOUT);
			assertThat(org.assertj.core.api.Assertions
				.catchThrowable(() -> four.send(TOPIC, List.of(message("x", Duration.ofHours(1))))))
				.isInstanceOf(io.github.delayqueue.store.PartitionCountException.class)
				.hasMessageContaining("paused groups");
			assertThat(groups.resume(TOPIC, "held")).isTrue();
			four.send(TOPIC, List.of(message("x", Duration.ofHours(1))));
			assertThat(four.inspect(TOPIC, "x", 10)).isNotNull();
			// The group read and pause of a group outside partition 0, by the new count.
			io.github.delayqueue.group.DelayQueueGroups fourGroups = new io.github.delayqueue.group.DelayQueueGroups(
					four);
			String g3 = groupIn(four, 3);
			fourGroups.pause(TOPIC, g3);
			assertThat(fourGroups.group(TOPIC, g3).paused()).isTrue();
			assertThat(four.stats(TOPIC).pausedGroups()).isOne();
		}
	}

	// --- 3. group semantics across partitions, end to end

	private final Map<String, java.util.concurrent.atomic.AtomicInteger> running = new java.util.concurrent.ConcurrentHashMap<>();

	private final Map<String, List<String>> handled = new java.util.concurrent.ConcurrentHashMap<>();

	private final java.util.concurrent.atomic.AtomicInteger mostAtOnce = new java.util.concurrent.atomic.AtomicInteger();

	private final java.util.Set<String> slowedDown = java.util.concurrent.ConcurrentHashMap.newKeySet();

	private final java.util.concurrent.atomic.AtomicInteger done = new java.util.concurrent.atomic.AtomicInteger();

	/**
	 * Three applications consume a topic of four partitions, each every partition, with a
	 * group concurrency of 1 and strict order; the second message of every other group
	 * slows its group down once. Each group's messages are handled one at a time, in the
	 * order they were due, however the groups fall on the partitions, and every pause
	 * ends.
	 */
	@Test
	void strictOrderAndALimitOfOneHoldAcrossThreeApplicationsOnFourPartitionsThroughSlowDowns() {
		int groupsCount = 8;
		int each = 5;
		try (io.github.delayqueue.testsupport.TestStore fixture = io.github.delayqueue.testsupport.TestStore.builder()
			.partitions(Map.of("hooks", COUNT))
			.build()) {
			List<io.github.delayqueue.runtime.DelayQueueRuntime> runtimes = new ArrayList<>();
			try {
				for (int i = 0; i < 3; i++) {
					runtimes.add(start(fixture));
				}
				java.time.Instant start = java.time.Instant.now();
				List<io.github.delayqueue.producer.DelayMessage> messages = new ArrayList<>();
				for (int i = 0; i < each; i++) {
					for (int g = 0; g < groupsCount; g++) {
						messages.add(io.github.delayqueue.producer.DelayMessage.builder("hooks", "x")
							.id("g" + g + "-" + i)
							.group("g" + g)
							.dueAt(start.plusMillis(i))
							.build());
					}
				}
				fixture.template().sendAll(messages);
				org.awaitility.Awaitility.await()
					.atMost(Duration.ofSeconds(30))
					.until(() -> this.done.get() == groupsCount * each);
			}
			finally {
				runtimes.forEach(io.github.delayqueue.runtime.DelayQueueRuntime::stop);
			}
			assertThat(this.mostAtOnce).as("most of one group handled at once").hasValue(1);
			assertThat(this.slowedDown).hasSize(groupsCount / 2);
			for (int g = 0; g < groupsCount; g++) {
				List<String> expected = new ArrayList<>();
				for (int i = 0; i < each; i++) {
					expected.add("g" + g + "-" + i);
				}
				assertThat(this.handled.get("g" + g))
					.as("group g%d, in partition %s", g, fixture.store().partitions().nameForGroup("hooks", "g" + g))
					.containsExactlyElementsOf(expected);
			}
			assertThat(fixture.store().stats("hooks").pausedGroups()).as("groups paused at the end").isZero();
		}
	}

	void handle(io.github.delayqueue.listener.Delivery<String> delivery) throws InterruptedException {
		String group = String.valueOf(delivery.group());
		java.util.concurrent.atomic.AtomicInteger inGroup = this.running.computeIfAbsent(group,
				(name) -> new java.util.concurrent.atomic.AtomicInteger());
		int now = inGroup.incrementAndGet();
		this.mostAtOnce.accumulateAndGet(now, Math::max);
		try {
			int index = Integer.parseInt(group.substring(1));
			if (index % 2 == 0 && delivery.id().endsWith("-1") && this.slowedDown.add(delivery.id())) {
				throw new io.github.delayqueue.listener.SlowDownException(Duration.ofMillis(300));
			}
			this.handled.computeIfAbsent(group, (name) -> java.util.Collections.synchronizedList(new ArrayList<>()))
				.add(delivery.id());
			Thread.sleep(3);
			this.done.incrementAndGet();
		}
		finally {
			inGroup.decrementAndGet();
		}
	}

	private io.github.delayqueue.runtime.DelayQueueRuntime start(io.github.delayqueue.testsupport.TestStore sender) {
		io.github.delayqueue.testsupport.TestStore store = io.github.delayqueue.testsupport.TestStore.builder()
			.prefix(sender.prefix())
			.partitions(Map.of("hooks", COUNT))
			.build();
		this.closing.add(store);
		io.github.delayqueue.convert.JsonPayloadConverter converter = new io.github.delayqueue.convert.JsonPayloadConverter(
				new tools.jackson.databind.json.JsonMapper());
		io.github.delayqueue.listener.DelayListenerEndpointRegistry registry = new io.github.delayqueue.listener.DelayListenerEndpointRegistry(
				converter);
		io.github.delayqueue.listener.ListenerSettings settings = new io.github.delayqueue.listener.ListenerSettings(8,
				16, 3, Duration.ofSeconds(30),
				new io.github.delayqueue.time.RetryBackoff(Duration.ofMillis(100), 1.0, Duration.ofMillis(100)),
				Duration.ofSeconds(1), Duration.ofSeconds(2), Duration.ofMinutes(5),
				io.github.delayqueue.listener.LatePolicy.DELIVER, Duration.ofHours(1))
			.withGroupConcurrency(1)
			.withStrictGroupOrder(true);
		registry.register(new io.github.delayqueue.listener.DelayListenerEndpoint("hooks", this,
				org.springframework.util.ReflectionUtils.findMethod(getClass(), "handle",
						io.github.delayqueue.listener.Delivery.class),
				settings));
		io.github.delayqueue.runtime.DelayQueueRuntime runtime = new io.github.delayqueue.runtime.DelayQueueRuntime(
				store.store(), converter,
				new io.github.delayqueue.runtime.broker.BrokerSettings(100, Duration.ofSeconds(1), Duration.ZERO),
				registry);
		runtime.start();
		return runtime;
	}

	private final List<AutoCloseable> closing = new java.util.concurrent.CopyOnWriteArrayList<>();

	@org.junit.jupiter.api.AfterEach
	void closeStores() throws Exception {
		for (AutoCloseable closeable : this.closing) {
			closeable.close();
		}
	}

	/**
	 * Stats of twelve groups spread over four partitions, group {@code i} with
	 * {@code i + 1} ready messages, and a paused group in each of three partitions: the
	 * busiest ten across all partitions in order, every paused group counted, the pauses
	 * that end first first, until-resumed last.
	 */
	@Test
	void statsMergeTheBusiestGroupsAndThePausesOfEveryPartition() {
		try (PartitionApps apps = new PartitionApps()) {
			RedisMessageStore store = apps.store(COUNT, TIMEOUT);
			List<NewMessage> messages = new ArrayList<>();
			java.util.Set<String> partitionsUsed = new java.util.HashSet<>();
			for (int g = 0; g < 12; g++) {
				partitionsUsed.add(store.partitions().nameForGroup(TOPIC, "busy-" + g));
				for (int i = 0; i <= g; i++) {
					messages.add(message("busy-" + g + "-" + i, Duration.ZERO).inGroup("busy-" + g));
				}
			}
			assertThat(partitionsUsed).as("partitions of the groups").hasSizeGreaterThan(1);
			store.send(TOPIC, messages);
			io.github.delayqueue.group.DelayQueueGroups groups = new io.github.delayqueue.group.DelayQueueGroups(store);
			groups.pause(TOPIC, groupIn(store, 1), Duration.ofHours(2));
			groups.pause(TOPIC, groupIn(store, 2), Duration.ofHours(1));
			groups.pause(TOPIC, groupIn(store, 3));

			io.github.delayqueue.store.TopicStats stats = store.stats(TOPIC);

			List<String> busiest = new ArrayList<>();
			for (int g = 11; g >= 2; g--) {
				busiest.add("busy-" + g);
			}
			assertThat(stats.busiestGroups().keySet()).containsExactlyElementsOf(busiest);
			assertThat(stats.busiestGroups()).containsEntry("busy-11", 12L);
			assertThat(stats.groupsWithReady()).isEqualTo(12);
			assertThat(stats.pausedGroups()).isEqualTo(3);
			assertThat(stats.firstPausesToEnd().keySet()).containsExactly(groupIn(store, 2), groupIn(store, 1),
					groupIn(store, 3));
			assertThat(groups.group(TOPIC, "busy-11").ready()).isEqualTo(12);
		}
	}

	/**
	 * A pause from an application whose count is stale (Redis spreads the topic over four
	 * partitions and holds a message, it configures two) is refused, pausing nothing: now
	 * that a pause may set the count, it must not change one that holds messages.
	 */
	@Test
	void aPauseFromAnApplicationWithAStaleCountIsRefusedWhileTheTopicHoldsMessages() {
		try (PartitionApps apps = new PartitionApps()) {
			RedisMessageStore four = apps.store(COUNT, TIMEOUT);
			four.send(TOPIC, List.of(message(idIn(2, COUNT, "held-"), Duration.ofHours(1))));
			RedisMessageStore two = apps.store(2, TIMEOUT);
			assertThat(org.assertj.core.api.Assertions
				.catchThrowable(() -> new io.github.delayqueue.group.DelayQueueGroups(two).pause(TOPIC, "late")))
				.isInstanceOf(io.github.delayqueue.store.PartitionCountException.class);
			assertThat(four.stats(TOPIC).pausedGroups()).isZero();
			assertThat(four.partitions().count(TOPIC)).isEqualTo(COUNT);
			assertThat(four.inspect(TOPIC, idIn(2, COUNT, "held-"), 10)).isNotNull();
		}
	}

	// --- 5. dead letters with a listener of them

	/**
	 * A grouped message dead-lettered on a partitioned topic whose dead letters are
	 * listened to: its copy waits in its group's partition's dead-letter queue, where a
	 * call by id on the queue finds it, and the dead letter is replayed by id into its
	 * group.
	 */
	@Test
	void aGroupedDeadLetterIsCopiedToItsPartitionsQueueAndReplayedById() {
		try (PartitionApps apps = new PartitionApps()) {
			RedisMessageStore store = apps.store(COUNT, TIMEOUT);
			store.watchDeadLetters(TOPIC);
			String group = groupIn(store, 3);
			String partition = store.partitions().nameForGroup(TOPIC, group);
			String id = idIn(1, COUNT, "watched-");
			kill(store, group, id);
			String queue = TopicPartitions.deadLettersOf(TOPIC);
			assertThat(apps.redis()
				.opsForHash()
				.hasKey(store.keys(TopicPartitions.deadLettersOf(partition)).messages(), id))
				.as("the copy in %s", TopicPartitions.deadLettersOf(partition))
				.isTrue();
			MessageSnapshot copy = store.inspect(queue, id, 10);
			assertThat(copy).as("the copy, inspected by id on %s", queue).isNotNull();

			assertThat(store.replayDead(TOPIC, List.of(id)).replayed()).containsExactly(id);
			assertThat(apps.redis().opsForHash().get(store.keys(partition).groups(), id)).isEqualTo(group);
			assertThat(new io.github.delayqueue.group.DelayQueueGroups(store).group(TOPIC, group).ready()
					+ store.stats(TOPIC).scheduled())
				.as("the replayed message, in its group")
				.isPositive();
			assertThat(store.cancel(queue, id)).as("the copy, cancelled by id on %s", queue).isTrue();
			assertThat(store.inspect(queue, id, 10)).isNull();
		}
	}

	// --- helpers

	/** The first group name of the form {@code g-<n>} that falls in a partition. */
	private static String groupIn(RedisMessageStore store, int index) {
		String wanted = TopicPartitions.names(TOPIC, store.partitions().count(TOPIC)).get(index);
		return IntStream.iterate(0, (i) -> i + 1)
			.mapToObj((i) -> "g-" + i)
			.filter((group) -> store.partitions().nameForGroup(TOPIC, group).equals(wanted))
			.findFirst()
			.orElseThrow();
	}

	private static NewMessage message(String id, Duration delay) {
		return PartitionApps.message(id, delay);
	}

	/** Claims up to 10 ready messages of a partition with a group concurrency. */
	private static List<ClaimedMessage> claim(RedisMessageStore store, String partition, int groupConcurrency) {
		String consumer = io.github.delayqueue.store.LeaseTokens.newToken();
		return Transitions.claim(store, partition, consumer, consumer + ".1", 10, 0, LEASE, null, groupConcurrency)
			.messages();
	}

	/** A grouped message due now, its group in its header as the template writes it. */
	private static NewMessage grouped(String id, String group) {
		byte[] body = MessageFormat.encodeBody(Map.of(MessageFormat.GROUP_HEADER, group),
				("body of " + id).getBytes(StandardCharsets.UTF_8));
		return NewMessage.afterDelay(id, Duration.ZERO, body).inGroup(group);
	}

	/** Sends a grouped message due now and lets it fail for good, in its partition. */
	private static void kill(RedisMessageStore store, String group, String id) {
		String partition = store.partitions().nameForGroup(TOPIC, group);
		store.send(TOPIC, List.of(grouped(id, group)));
		Transitions.promote(store, partition, 10);
		List<ClaimedMessage> claimed = Transitions.claim(store, partition, 10, LEASE);
		assertThat(claimed).extracting(ClaimedMessage::id).containsExactly(id);
		assertThat(Transitions.deadLetter(store, partition, id, claimed.get(0).leaseToken(), "failed")).isTrue();
	}

}

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
class PartitionedGroupsReviewTests {

	private static final int COUNT = 4;

	private static final Duration LEASE = Duration.ofMinutes(1);

	private static final Duration TIMEOUT = Duration.ofSeconds(5);

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

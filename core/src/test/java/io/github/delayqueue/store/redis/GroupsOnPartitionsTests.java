package io.github.delayqueue.store.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;

import io.github.delayqueue.group.DelayQueueGroups;
import io.github.delayqueue.store.ClaimedMessage;
import io.github.delayqueue.store.MessageFormat;
import io.github.delayqueue.store.MessageSnapshot;
import io.github.delayqueue.store.MessageState;
import io.github.delayqueue.store.NewMessage;
import io.github.delayqueue.store.PartitionCountException;
import io.github.delayqueue.store.TopicPartitions;
import io.github.delayqueue.store.TopicStats;
import io.github.delayqueue.testsupport.PartitionApps;
import io.github.delayqueue.testsupport.Transitions;
import org.junit.jupiter.api.Test;

import static io.github.delayqueue.testsupport.PartitionApps.TOPIC;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Groups on a topic spread over four partitions, on real Redis: a group's messages live
 * in its group's partition whatever their ids, where its limit and pause hold; the calls
 * by id (inspect, reschedule, cancel, replay and purge of dead letters) find a grouped
 * message outside its id's partition; the stats count every partition's groups; and the
 * topic's number of partitions does not change while a group's pause would be left in a
 * partition the group no longer maps to.
 */
class GroupsOnPartitionsTests {

	private static final int COUNT = 4;

	private static final Duration LEASE = Duration.ofMinutes(1);

	@Test
	void aGroupsMessagesLiveInItsGroupsPartitionWhereItsLimitHolds() {
		try (PartitionApps apps = new PartitionApps()) {
			RedisMessageStore store = apps.store(COUNT, Duration.ofSeconds(5));
			String group = "shop-1";
			String partition = store.partitions().nameForGroup(TOPIC, group);
			List<NewMessage> messages = new ArrayList<>();
			IntStream.range(0, 40).forEach((i) -> messages.add(message("m-" + i, Duration.ZERO).inGroup(group)));
			store.send(TOPIC, messages);
			for (String name : TopicPartitions.names(TOPIC, COUNT)) {
				long held = apps.redis().opsForHash().size(store.keys(name).messages());
				assertThat(held).as("messages in %s", name).isEqualTo(name.equals(partition) ? 40 : 0);
			}
			Transitions.promote(store, partition, 100);
			String consumer = "c";
			List<ClaimedMessage> claimed = Transitions
				.claim(store, partition, consumer, consumer + ".1", 10, 0, LEASE, null, 1)
				.messages();
			assertThat(claimed).extracting(ClaimedMessage::id).containsExactly("m-0");
			assertThat(Transitions.claim(store, partition, consumer, consumer + ".2", 10, 0, LEASE, null, 1).messages())
				.as("a second claim while the group's one slot is taken")
				.isEmpty();
		}
	}

	@Test
	void callsByIdFindAGroupedMessageOutsideItsIdsPartition() {
		try (PartitionApps apps = new PartitionApps()) {
			RedisMessageStore store = apps.store(COUNT, Duration.ofSeconds(5));
			String group = groupIn(store, 2);
			String id = PartitionApps.idIn(0, COUNT, "order-");
			store.send(TOPIC, List.of(message(id, Duration.ofHours(1)).inGroup(group)));

			MessageSnapshot found = store.inspect(TOPIC, id, 100);
			assertThat(found).isNotNull();
			assertThat(found.state()).isEqualTo(MessageState.SCHEDULED);
			assertThat(groupOf(apps, store, group, id)).isEqualTo(group);
			assertThat(store.reschedule(TOPIC, id, Duration.ofHours(2))).isPositive();
			assertThat(store.cancel(TOPIC, id)).isTrue();
			assertThat(store.inspect(TOPIC, id, 100)).isNull();
			assertThat(store.cancel(TOPIC, id)).as("a second cancel").isFalse();
			assertThat(store.reschedule(TOPIC, id, Duration.ofHours(2))).as("a reschedule of no message").isNegative();
		}
	}

	@Test
	void aDeadLetterOfAGroupIsReplayedIntoItsGroupAndPurgedById() {
		try (PartitionApps apps = new PartitionApps()) {
			RedisMessageStore store = apps.store(COUNT, Duration.ofSeconds(5));
			String group = groupIn(store, 3);
			String partition = store.partitions().nameForGroup(TOPIC, group);
			String id = PartitionApps.idIn(1, COUNT, "hook-");
			kill(store, partition, id, group);

			assertThat(store.replayDead(TOPIC, List.of(id, "missing")).replayed()).containsExactly(id);
			assertThat(store.inspect(TOPIC, id, 100)).isNotNull();
			assertThat(groupOf(apps, store, group, id)).as("its group, in its group's partition").isEqualTo(group);

			Transitions.promote(store, partition, 10);
			List<ClaimedMessage> again = Transitions.claim(store, partition, 10, LEASE);
			assertThat(Transitions.deadLetter(store, partition, id, again.get(0).leaseToken(), "failed")).isTrue();
			assertThat(store.purgeDead(TOPIC, List.of(id))).isEqualTo(1);
			assertThat(store.stats(TOPIC).dead()).isZero();
		}
	}

	@Test
	void aGroupIsPausedReadAndResumedInItsPartition() {
		try (PartitionApps apps = new PartitionApps()) {
			RedisMessageStore store = apps.store(COUNT, Duration.ofSeconds(5));
			DelayQueueGroups groups = new DelayQueueGroups(store);
			String group = groupIn(store, 1);
			String partition = store.partitions().nameForGroup(TOPIC, group);
			store.send(TOPIC, List.of(message(PartitionApps.idIn(0, COUNT, "a-"), Duration.ZERO).inGroup(group)));
			Transitions.promote(store, partition, 10);

			groups.pause(TOPIC, group);
			assertThat(apps.redis().opsForZSet().score(store.keys(partition).groupPauses(), group)).isNotNull();
			assertThat(groups.group(TOPIC, group).paused()).isTrue();
			assertThat(groups.group(TOPIC, group).ready()).isEqualTo(1);
			assertThat(Transitions.claim(store, partition, 10, LEASE)).isEmpty();
			assertThat(store.stats(TOPIC).pausedGroups()).isEqualTo(1);

			assertThat(groups.resume(TOPIC, group)).isTrue();
			assertThat(Transitions.claim(store, partition, 10, LEASE)).hasSize(1);
		}
	}

	@Test
	void statsNameTheBusiestGroupsOfEveryPartition() {
		try (PartitionApps apps = new PartitionApps()) {
			RedisMessageStore store = apps.store(COUNT, Duration.ofSeconds(5));
			List<NewMessage> messages = new ArrayList<>();
			for (int p = 0; p < COUNT; p++) {
				String group = groupIn(store, p);
				for (int i = 0; i <= p; i++) {
					messages.add(message(group + "-" + i, Duration.ZERO).inGroup(group));
				}
			}
			store.send(TOPIC, messages);
			TopicStats stats = store.stats(TOPIC);
			assertThat(stats.groupsWithReady()).isEqualTo(COUNT);
			assertThat(stats.ready()).isEqualTo(10);
			assertThat(stats.busiestGroups()).hasSize(COUNT).containsEntry(groupIn(store, 3), 4L);
		}
	}

	@Test
	void thePartitionCountDoesNotChangeWhileAGroupIsPausedInAPartitionItWouldLeave() {
		try (PartitionApps apps = new PartitionApps()) {
			RedisMessageStore two = apps.store(2, Duration.ofSeconds(5));
			// The send takes the topic to two partitions; the cancel empties it again.
			two.send(TOPIC, List.of(message("first", Duration.ofHours(1))));
			assertThat(two.cancel(TOPIC, "first")).isTrue();
			String group = groupIn(two, 1);
			new DelayQueueGroups(two).pause(TOPIC, group, Duration.ofHours(1));
			RedisMessageStore one = apps.store(1, Duration.ofSeconds(5));
			assertThatExceptionOfType(PartitionCountException.class)
				.isThrownBy(() -> one.send(TOPIC, List.of(message("x", Duration.ofHours(1)))))
				.withMessageContaining("paused groups");
			assertThat(new DelayQueueGroups(two).resume(TOPIC, group)).isTrue();
			one.send(TOPIC, List.of(message("x", Duration.ofHours(1))));
			assertThat(one.inspect(TOPIC, "x", 10)).isNotNull();
		}
	}

	/** The first group name of the form {@code g-<n>} that falls in a partition. */
	private static String groupIn(RedisMessageStore store, int index) {
		String wanted = TopicPartitions.names(TOPIC, store.partitions().count(TOPIC)).get(index);
		return IntStream.iterate(0, (i) -> i + 1)
			.mapToObj((i) -> "g-" + i)
			.filter((group) -> store.partitions().nameForGroup(TOPIC, group).equals(wanted))
			.findFirst()
			.orElseThrow();
	}

	/** The group the groups hash of a group's partition names for a message. */
	private static Object groupOf(PartitionApps apps, RedisMessageStore store, String group, String id) {
		return apps.redis().opsForHash().get(store.keys(store.partitions().nameForGroup(TOPIC, group)).groups(), id);
	}

	private static NewMessage message(String id, Duration delay) {
		return PartitionApps.message(id, delay);
	}

	/**
	 * Sends a grouped message due now, its group in its header as the template writes it
	 * (a replay reads it there), and lets it fail for good, in its partition.
	 */
	private static void kill(RedisMessageStore store, String partition, String id, String group) {
		byte[] body = MessageFormat.encodeBody(Map.of(MessageFormat.GROUP_HEADER, group),
				"x".getBytes(StandardCharsets.UTF_8));
		store.send(TOPIC, List.of(NewMessage.afterDelay(id, Duration.ZERO, body).inGroup(group)));
		Transitions.promote(store, partition, 10);
		List<ClaimedMessage> claimed = Transitions.claim(store, partition, 10, LEASE);
		assertThat(claimed).extracting(ClaimedMessage::id).containsExactly(id);
		assertThat(Transitions.deadLetter(store, partition, id, claimed.get(0).leaseToken(), "failed")).isTrue();
		assertThat(store.page(TOPIC, MessageState.DEAD, 0, 10).messages()).hasSize(1);
	}

}

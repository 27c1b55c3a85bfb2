package io.github.delayqueue.store.redis;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;

import io.github.delayqueue.producer.DelayMessage;
import io.github.delayqueue.store.ClaimedMessage;
import io.github.delayqueue.store.MessageState;
import io.github.delayqueue.store.MessageSummary;
import io.github.delayqueue.store.TopicPartitions;
import io.github.delayqueue.testsupport.PartitionApps;
import io.github.delayqueue.testsupport.TestStore;
import io.github.delayqueue.testsupport.Transitions;
import org.junit.jupiter.api.Test;

import static io.github.delayqueue.testsupport.PartitionApps.TOPIC;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.SoftAssertions.assertSoftly;
import static org.awaitility.Awaitility.await;

/**
 * The routing of ids ending in {@code ~<digits>} on a partitioned topic: the earlier dead
 * letters of an id, kept as {@code <id>~<time>}, sit in the partition of the id whatever
 * the id ends in, so calls by name find them.
 */
class PartitionedDeadLetterTests {

	/**
	 * An id may itself end in {@code ~<digits>} (here {@code order-0~7}). When it dies a
	 * second time, the earlier dead letter is kept as {@code order-0~7~<time>} in the
	 * id's partition, and that name routes there too (every {@code ~<digits>} end is left
	 * out, not only the last): the dead letter is inspected, replayed and purged by name
	 * and by the "oldest N" calls of the endpoint.
	 */
	@Test
	void theEarlierDeadLetterOfAnIdEndingInTildeDigitsIsFoundReplayedAndPurged() {
		try (PartitionApps apps = new PartitionApps()) {
			RedisMessageStore three = apps.store(3, Duration.ofSeconds(5));
			// Under the rule that stripped only one ~<digits> end, the buried names of
			// this
			// id routed to another partition than the id.
			String id = "order-0~7";
			PartitionApps.deadLetter(three, id);
			PartitionApps.deadLetter(three, id);
			List<String> names = three.page(TOPIC, MessageState.DEAD, 0, 10)
				.messages()
				.stream()
				.map(MessageSummary::id)
				.toList();
			assertThat(names).hasSize(2).contains(id);
			String buried = names.stream().filter((name) -> !name.equals(id)).findFirst().orElseThrow();

			assertSoftly((softly) -> {
				softly.assertThat(three.inspect(TOPIC, buried, 10)).as("inspect %s", buried).isNotNull();
				softly.assertThat(three.replayDead(TOPIC, List.of(buried)).replayed())
					.as("replay %s", buried)
					.containsExactly(buried);
				softly.assertThat(three.purgeDead(TOPIC, 10)).as("purge of the oldest dead letters").isEqualTo(1);
				softly.assertThat(three.stats(TOPIC).dead()).as("dead letters left").isZero();
			});
		}
	}

	/**
	 * {@code purgeDead(topic, limit)} (and the endpoint's {@code purge-dead} with a
	 * limit) deletes the oldest dead letters, and {@code replayDead} replays the oldest,
	 * reading them with {@code page}, oldest first: on a partitioned topic the pages of
	 * the partitions are merged in order (they were read partition after partition, so
	 * purging the oldest deleted partition 0's newest dead letter).
	 */
	@Test
	void purgingTheOldestDeadLetterOfAPartitionedTopicDeletesTheOldestOne() {
		try (TestStore fixture = TestStore.builder().partitions(Map.of("split", 2)).build()) {
			RedisMessageStore store = fixture.store();
			String older = idOfTwo(1);
			String newer = idOfTwo(0);
			kill(fixture, older);
			// A millisecond apart at least.
			await().pollDelay(Duration.ofMillis(5)).until(() -> true);
			kill(fixture, newer);
			List<String> dead = store.page("split", MessageState.DEAD, 0, 10)
				.messages()
				.stream()
				.map(MessageSummary::id)
				.toList();
			assertThat(dead).as("dead letters, oldest first").containsExactlyInAnyOrder(older, newer);
			assertThat(store.purgeDead("split", 1)).isOne();
			assertThat(store.inspect("split", older, 100)).as("the oldest dead letter, purged").isNull();
		}
	}

	/** An id that falls in the given one of two partitions. */
	private static String idOfTwo(int partition) {
		return IntStream.range(0, 100)
			.mapToObj((i) -> "id" + i)
			.filter((id) -> TopicPartitions.indexOf(id, 2) == partition)
			.findFirst()
			.orElseThrow();
	}

	/** Sends a message and dead-letters it, through the store. */
	private static void kill(TestStore fixture, String id) {
		fixture.template().send(DelayMessage.builder("split", id).id(id).build());
		RedisMessageStore store = fixture.store();
		String partition = store.partitions().nameFor("split", id);
		assertThat(Transitions.promote(store, partition, 10).moved()).isOne();
		List<ClaimedMessage> claimed = Transitions.claim(store, partition, 1, Duration.ofMinutes(1));
		assertThat(claimed).hasSize(1);
		assertThat(Transitions.deadLetter(store, partition, id, claimed.get(0).leaseToken(), "failed")).isTrue();
	}

}

package io.github.delayqueue.store.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.IntStream;

import io.github.delayqueue.store.ClaimedMessage;
import io.github.delayqueue.store.MessageState;
import io.github.delayqueue.store.MessageSummary;
import io.github.delayqueue.store.NewMessage;
import io.github.delayqueue.store.PartitionCountException;
import io.github.delayqueue.store.ReplayResult;
import io.github.delayqueue.store.TopicPartitions;
import io.github.delayqueue.testsupport.TestStore;
import io.github.delayqueue.testsupport.Transitions;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * Changes of a topic's number of partitions, with stores standing for applications that
 * configure different counts on the same Redis: a change that is accepted keeps every
 * message within reach of the calls that find it by id and delivered once; one that
 * cannot be made safely is refused; and an application whose count went stale can neither
 * store a message where no consumer looks nor miss one it looks for.
 */
class PartitionCountTests {

	private static final String TOPIC = "clicks";

	private final String prefix = TestStore.uniquePrefix();

	@Test
	void gainingPartitionsIsRefusedWhileTheTopicHoldsMessages() throws Exception {
		run((apps) -> {
			RedisMessageStore one = apps.store(1);
			List<String> ids = ids("old-", 30);
			one.send(TOPIC, ids.stream().map((id) -> message(id, Duration.ofHours(1))).toList());

			RedisMessageStore three = apps.store(3);
			assertThatThrownBy(() -> three.agreePartitions(TOPIC)).isInstanceOf(PartitionCountException.class)
				.hasMessageStartingWith("Topic 'clicks' has 1 partitions in Redis, but 3 are configured here")
				.hasMessageContaining("it can change only while the topic is empty");
			assertThatThrownBy(() -> three.send(TOPIC, List.of(message("new", Duration.ZERO))))
				.isInstanceOf(PartitionCountException.class);
			assertThatThrownBy(() -> three.cancel(TOPIC, ids.get(1))).isInstanceOf(PartitionCountException.class);
			assertThat(apps.redis().opsForValue().get(one.keys(TOPIC).partitionCount())).isNull();
			assertThat(ids).allSatisfy((id) -> assertThat(one.inspect(TOPIC, id, 10)).isNotNull());
			assertThat(ids).allSatisfy((id) -> assertThat(one.cancel(TOPIC, id)).isTrue());
		});
	}

	@Test
	void gainingPartitionsOfAnEmptyTopicSpreadsItAndFindsEachMessageById() throws Exception {
		run((apps) -> {
			RedisMessageStore one = apps.store(1);
			one.send(TOPIC, List.of(message("delivered", Duration.ZERO)));
			Transitions.promote(one, TOPIC, 10);
			ClaimedMessage claimed = Transitions.claim(one, TOPIC, 1, Duration.ofMinutes(1)).get(0);
			Transitions.ack(one, TOPIC, claimed.id(), claimed.leaseToken());

			RedisMessageStore three = apps.store(3);
			List<String> ids = ids("new-", 60);
			three.send(TOPIC, ids.stream().map((id) -> message(id, Duration.ofHours(1))).toList());
			assertThat(ids.stream().map((id) -> TopicPartitions.indexOf(id, 3)).distinct()).hasSize(3);
			assertThat(ids).allSatisfy((id) -> assertThat(three.inspect(TOPIC, id, 10)).isNotNull());
			assertThat(three.stats(TOPIC).scheduled()).isEqualTo(60);
			assertThat(ids).allSatisfy((id) -> assertThat(three.cancel(TOPIC, id)).isTrue());
		});
	}

	@Test
	void goingDownToOnePartitionKeepsTheMessagesOfPartitionZeroWithinReach() throws Exception {
		run((apps) -> {
			RedisMessageStore three = apps.store(3);
			List<String> inZero = ids("zero-", 300).stream()
				.filter((id) -> TopicPartitions.indexOf(id, 3) == 0)
				.limit(10)
				.toList();
			three.send(TOPIC, inZero.stream().map((id) -> message(id, Duration.ofHours(1))).toList());

			RedisMessageStore one = apps.store(1);
			one.agreePartitions(TOPIC);
			assertThat(apps.redis().opsForValue().get(one.keys(TOPIC).partitionCount())).isNull();
			assertThat(inZero).allSatisfy((id) -> assertThat(one.inspect(TOPIC, id, 10)).isNotNull());
			assertThat(one.stats(TOPIC).scheduled()).isEqualTo(10);
			assertThat(inZero).allSatisfy((id) -> assertThat(one.cancel(TOPIC, id)).isTrue());
		});
	}

	@Test
	void anApplicationOnAStaleCountCanNeitherStoreNorMissAMessage() throws Exception {
		run((apps) -> {
			RedisMessageStore three = apps.store(3);
			String kept = idIn(0, 3, "kept-");
			three.send(TOPIC, List.of(message(kept, Duration.ofHours(1))));

			RedisMessageStore one = apps.store(1);
			one.agreePartitions(TOPIC);

			String elsewhere = idIn(1, 3, "late-");
			assertThatThrownBy(() -> three.send(TOPIC, List.of(message(elsewhere, Duration.ZERO))))
				.isInstanceOf(PartitionCountException.class)
				.hasMessage("Topic 'clicks' has 1 partitions in Redis, but 3 are configured here"
						+ " (delay-queue.topics.clicks.partitions): another application changed the count. Every"
						+ " application must use the same count: restart this one with 1");
			assertThatThrownBy(() -> three.send(TOPIC, List.of(message(idIn(0, 3, "zero-"), Duration.ZERO))))
				.isInstanceOf(PartitionCountException.class);
			assertThatThrownBy(() -> three.cancel(TOPIC, kept)).isInstanceOf(PartitionCountException.class);
			assertThatThrownBy(() -> three.inspect(TOPIC, kept, 10)).isInstanceOf(PartitionCountException.class);
			assertThatThrownBy(() -> three.reschedule(TOPIC, kept, Duration.ZERO))
				.isInstanceOf(PartitionCountException.class);
			for (String partition : TopicPartitions.names(TOPIC, 3)) {
				assertThat(apps.redis().hasKey(three.keys(partition).messages())).as("messages of %s", partition)
					.isEqualTo(partition.equals(TOPIC));
			}
			assertThat(one.inspect(TOPIC, elsewhere, 10)).isNull();
			assertThat(one.cancel(TOPIC, kept)).isTrue();
		});
	}

	@Test
	void aBrokerOnAStaleCountLearnsThatTheCountChanged() throws Exception {
		run((apps) -> {
			RedisMessageStore one = apps.store(1);
			one.agreePartitions(TOPIC);
			assertThat(Transitions.promote(one, TOPIC, 10, Duration.ZERO).countAgreed()).isTrue();
			apps.store(3).agreePartitions(TOPIC);
			assertThat(Transitions.promote(one, TOPIC, 10, Duration.ZERO).countAgreed()).isFalse();
			assertThatThrownBy(() -> one.checkPartitions(TOPIC)).isInstanceOf(PartitionCountException.class)
				.hasMessageContaining("another application changed the count");
		});
	}

	@Test
	void aMarkerLeftByAChangeThatNeverTookEffectIsRepairedByTheCallItRefuses() throws Exception {
		run((apps) -> {
			RedisMessageStore three = apps.store(3);
			three.agreePartitions(TOPIC);
			String partition = TopicPartitions.names(TOPIC, 3).get(2);
			String marker = three.keys(partition).partitionCount();
			apps.redis().opsForValue().set(marker, "1:a0b1c2d3");
			String id = idIn(2, 3, "repaired-");

			three.send(TOPIC, List.of(message(id, Duration.ZERO)));

			assertThat(apps.redis().opsForValue().get(marker)).isEqualTo("3");
			assertThat(three.inspect(TOPIC, id, 10)).isNotNull();
		});
	}

	@Test
	void aCallRefusedWhileAChangeIsOnItsWayWaitsForItToEnd() throws Exception {
		run((apps) -> {
			RedisMessageStore three = apps.store(3);
			three.agreePartitions(TOPIC);
			String partition = TopicPartitions.names(TOPIC, 3).get(1);
			apps.redis().opsForValue().set(three.keys(partition).partitionCount(), "1:f0e1d2c3");
			apps.redis().opsForValue().set(three.keys(TOPIC).partitionChange(), "f0e1d2c3:1", Duration.ofSeconds(30));
			String id = idIn(1, 3, "waiting-");

			assertThatThrownBy(() -> three.send(TOPIC, List.of(message(id, Duration.ZERO))))
				.isInstanceOf(PartitionCountException.class)
				.hasMessageContaining("an application is changing the count (f0e1d2c3:1)");

			apps.redis().delete(three.keys(TOPIC).partitionChange());
			three.send(TOPIC, List.of(message(id, Duration.ZERO)));
			assertThat(three.inspect(TOPIC, id, 10)).isNotNull();
		});
	}

	@Test
	void deadLettersOfAPartitionedTopicAreFoundReplayedAndPurgedUnderEveryName() throws Exception {
		run((apps) -> {
			RedisMessageStore three = apps.store(3);
			List<String> ids = List.of(idIn(1, 3, "dead-"), idIn(2, 3, "dead-"), idIn(0, 3, "dead-"));
			for (int death = 0; death < 2; death++) {
				three.send(TOPIC, ids.stream().map((id) -> message(id, Duration.ZERO)).toList());
				for (String id : ids) {
					String partition = three.partitions().nameFor(TOPIC, id);
					Transitions.promote(three, partition, 10);
					ClaimedMessage claimed = Transitions.claim(three, partition, 10, Duration.ofMinutes(1)).get(0);
					assertThat(Transitions.deadLetter(three, partition, claimed.id(), claimed.leaseToken(), "failed"))
						.isTrue();
				}
			}
			List<String> names = three.page(TOPIC, MessageState.DEAD, 0, 100)
				.messages()
				.stream()
				.map(MessageSummary::id)
				.toList();
			assertThat(names).hasSize(6).containsAll(ids);
			assertThat(names).allSatisfy((name) -> assertThat(three.inspect(TOPIC, name, 10)).isNotNull());

			List<String> buried = names.stream().filter((name) -> !ids.contains(name)).toList();
			ReplayResult replayed = three.replayDead(TOPIC, buried);
			assertThat(replayed.replayed()).containsExactlyInAnyOrderElementsOf(buried);
			assertThat(replayed.skipped()).isZero();
			assertThat(three.stats(TOPIC).scheduled()).isEqualTo(3);

			assertThat(three.purgeDead(TOPIC, 1000)).isEqualTo(3);
			assertThat(three.purgeDead(TOPIC, 1000)).isZero();
			assertThat(three.stats(TOPIC).dead()).isZero();
			buried.forEach((name) -> assertThat(three.cancel(TOPIC, name)).isTrue());
			apps.store(1).agreePartitions(TOPIC);
		});
	}

	@Test
	void aChangeRacingSendsOnTheOldCountStrandsNoMessage() throws Exception {
		run((apps) -> {
			RedisMessageStore three = apps.store(3);
			three.agreePartitions(TOPIC);
			List<String> others = TopicPartitions.names(TOPIC, 3).subList(1, 3);
			Set<String> stored = ConcurrentHashMap.newKeySet();
			Set<String> consumed = ConcurrentHashMap.newKeySet();
			AtomicBoolean changed = new AtomicBoolean();
			AtomicBoolean done = new AtomicBoolean();
			Thread sender = new Thread(() -> {
				for (int i = 0; !done.get(); i++) {
					String id = "race-" + i;
					try {
						three.send(TOPIC, List.of(message(id, Duration.ZERO)));
						stored.add(id);
					}
					catch (PartitionCountException ex) {
						// Refused: stored nowhere.
					}
					if (i % 20 == 19) {
						sleep(5);
					}
				}
			});
			// The old count's listener of partitions 1 and 2, gone once the count
			// changed.
			Thread consumer = new Thread(() -> {
				while (!changed.get()) {
					for (String partition : others) {
						Transitions.promote(three, partition, 100);
						for (ClaimedMessage claimed : Transitions.claim(three, partition, 100, Duration.ofMinutes(1))) {
							Transitions.ack(three, partition, claimed.id(), claimed.leaseToken());
							consumed.add(claimed.id());
						}
					}
				}
			});
			sender.start();
			consumer.start();
			RedisMessageStore one = apps.store(1);
			await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(1)).until(() -> {
				try {
					one.agreePartitions(TOPIC);
					return true;
				}
				catch (PartitionCountException ex) {
					return false;
				}
			});
			changed.set(true);
			consumer.join();
			sleep(200);
			done.set(true);
			sender.join();

			for (String partition : others) {
				assertThat(apps.redis().opsForHash().size(three.keys(partition).messages())).as(partition).isZero();
			}
			List<String> stranded = stored.stream()
				.filter((id) -> !consumed.contains(id) && one.inspect(TOPIC, id, 10) == null)
				.toList();
			assertThat(stranded).isEmpty();
			assertThat(stored).isNotEmpty();
		});
	}

	private void run(AppsTest test) throws Exception {
		try (TestStore fixture = TestStore.builder().prefix(this.prefix).build()) {
			test.run(new Apps(fixture.connectionFactory(), fixture.redis()));
		}
	}

	/** A test on stores standing for applications. */
	private interface AppsTest {

		void run(Apps apps) throws Exception;

	}

	private static NewMessage message(String id, Duration delay) {
		return NewMessage.afterDelay(id, delay, ("body of " + id).getBytes(StandardCharsets.UTF_8));
	}

	private static List<String> ids(String prefix, int count) {
		return IntStream.range(0, count).mapToObj((i) -> prefix + i).toList();
	}

	/** The first id with the prefix that falls in a partition of a count. */
	private static String idIn(int partition, int count, String prefix) {
		return IntStream.iterate(0, (i) -> i + 1)
			.mapToObj((i) -> prefix + i)
			.filter((id) -> TopicPartitions.indexOf(id, count) == partition)
			.findFirst()
			.orElseThrow();
	}

	private static void sleep(long millis) {
		try {
			TimeUnit.MILLISECONDS.sleep(millis);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	/** Stores standing for applications on one Redis and key prefix. */
	private final class Apps {

		private final RedisConnectionFactory connectionFactory;

		private final StringRedisTemplate redis;

		private final List<RedisMessageStore> stores = new ArrayList<>();

		Apps(RedisConnectionFactory connectionFactory, StringRedisTemplate redis) {
			this.connectionFactory = connectionFactory;
			this.redis = redis;
		}

		/** A store whose application spreads the topic over a number of partitions. */
		RedisMessageStore store(int partitions) {
			RedisMessageStore store = new RedisMessageStore(this.connectionFactory, PartitionCountTests.this.prefix,
					Duration.ofMillis(1500));
			store.usePartitions(TopicPartitions.of(Map.of(TOPIC, partitions)));
			this.stores.add(store);
			return store;
		}

		StringRedisTemplate redis() {
			return this.redis;
		}

	}

}

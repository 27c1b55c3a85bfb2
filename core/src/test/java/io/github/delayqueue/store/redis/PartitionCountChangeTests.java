package io.github.delayqueue.store.redis;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.delayqueue.store.ClaimedMessage;
import io.github.delayqueue.store.NewMessage;
import io.github.delayqueue.store.PartitionCountException;
import io.github.delayqueue.store.TopicInspector;
import io.github.delayqueue.test.redis.FaultyRedisProxy;
import io.github.delayqueue.test.redis.TestRedis;
import io.github.delayqueue.testsupport.PartitionApps;
import io.github.delayqueue.testsupport.Transitions;
import org.junit.jupiter.api.Test;

import org.springframework.dao.DataAccessException;

import static io.github.delayqueue.testsupport.PartitionApps.TOPIC;
import static io.github.delayqueue.testsupport.PartitionApps.idIn;
import static io.github.delayqueue.testsupport.PartitionApps.message;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;

/**
 * Changes of a topic's number of partitions ({@code store.PartitionCounts}) under faults
 * and races, found by a review: stores stand for applications with different counts.
 * "Stale" is an application that agreed on 3 partitions and kept running after another
 * application took the topic back to 1; it can neither store a message where no listener
 * looks nor miss one, whatever happens to a change meanwhile.
 */
class PartitionCountChangeTests {

	private static final Duration TIMEOUT = Duration.ofSeconds(5);

	/**
	 * An application that does not configure the topic's partitions (an operations
	 * application, or a producer that forgot the property) reads a message by id through
	 * the {@code TopicInspector} that the endpoint's GET uses: the read is refused while
	 * the counts differ, and leaves the count as it is (it used to change it to 1, so
	 * every application on 3 was refused from then on).
	 */
	@Test
	void readingAMessageByIdLeavesTheTopicsCountAsItIs() {
		try (PartitionApps apps = new PartitionApps()) {
			RedisMessageStore running = apps.store(3, TIMEOUT);
			running.send(TOPIC, List.of(message(idIn(0, 3, "order-"), Duration.ofHours(1))));
			RedisMessageStore operations = apps.store(1, TIMEOUT);

			assertThatThrownBy(() -> operations.inspector(TOPIC).inspect("some-id", 100))
				.isInstanceOf(PartitionCountException.class)
				.hasMessageContaining("only a send or a listener starting changes it");

			assertThat(apps.redis().opsForValue().get(running.keys(TOPIC).partitionCount())).isEqualTo("3");
			running.send(TOPIC, List.of(message(idIn(1, 3, "order-"), Duration.ofHours(1))));
		}
	}

	/**
	 * An id remembered for its deduplication window (key {@code rm}) in partition 0 of an
	 * empty topic: a raise to 3 partitions would route it to partition 1, which does not
	 * remember it, and the id would be stored and delivered again within its window.
	 */
	@Test
	void aRaiseOfTheCountIsRefusedWhileAPartitionRemembersAnIdWithinItsWindowAndTheIdStaysDeduplicated() {
		try (PartitionApps apps = new PartitionApps()) {
			RedisMessageStore one = apps.store(1, TIMEOUT);
			String id = idIn(1, 3, "order-");
			remember(one, id);
			RedisMessageStore three = apps.store(3, TIMEOUT);

			assertThatThrownBy(() -> three.agreePartitions(TOPIC)).isInstanceOf(PartitionCountException.class)
				.hasMessageContainingAll("remembers 1 id", id, "the last window ends at");

			assertThat(apps.redis().opsForValue().get(one.keys(TOPIC).partitionCount())).isNull();
			assertThat(one.send(TOPIC, List.of(windowed(id))).get(0).duplicate()).isTrue();
		}
	}

	@Test
	void aCutOfTheCountIsRefusedWhileAPartitionBeyondTheFirstRemembersAnIdWithinItsWindow() {
		try (PartitionApps apps = new PartitionApps()) {
			RedisMessageStore three = apps.store(3, TIMEOUT);
			String id = idIn(2, 3, "order-");
			remember(three, id);
			RedisMessageStore one = apps.store(1, TIMEOUT);

			assertThatThrownBy(() -> one.agreePartitions(TOPIC)).isInstanceOf(PartitionCountException.class)
				.hasMessageContainingAll("remembers 1 id", id);

			assertThat(apps.redis().opsForValue().get(three.keys(TOPIC).partitionCount())).isEqualTo("3");
			assertThat(three.send(TOPIC, List.of(windowed(id))).get(0).duplicate()).isTrue();
		}
	}

	/** Sends, claims and acknowledges a message with a day's deduplication window. */
	private static void remember(RedisMessageStore store, String id) {
		store.send(TOPIC, List.of(windowed(id)));
		String partition = store.partitions().nameFor(TOPIC, id);
		Transitions.promote(store, partition, 10);
		List<ClaimedMessage> claimed = Transitions.claim(store, partition, 10, Duration.ofMinutes(1));
		assertThat(claimed).extracting(ClaimedMessage::id).containsExactly(id);
		assertThat(Transitions.ack(store, partition, id, claimed.get(0).leaseToken())).isTrue();
		assertThat(store.stats(partition).rememberedIds()).isOne();
	}

	private static NewMessage windowed(String id) {
		return DeduplicationScriptTests.windowed(id, Long.toString(Duration.ofDays(1).toMillis()), "payload");
	}

	/**
	 * A change from 1 to 3 partitions marks partitions 1 and 2, then its commit is
	 * refused because partition 0 holds a message, and it puts the markers back. A stale
	 * application on 3 sending to partition 1 meanwhile (widened here by holding the
	 * commit's reply for a second) is refused by the change's marker, which refuses every
	 * call; had it been accepted (as with the old marker {@code 3:<token>}), the put-back
	 * would have stranded the message where applications on 1 never look.
	 */
	@Test
	void aChangeRefusedAfterItsMarksStrandsNoMessageThatAStaleApplicationSentMeanwhile() {
		TestRedis redis = TestRedis.shared();
		try (PartitionApps apps = new PartitionApps();
				FaultyRedisProxy proxy = FaultyRedisProxy.start(redis.host(), redis.port())) {
			RedisMessageStore stale = apps.store(3, TIMEOUT);
			stale.agreePartitions(TOPIC);
			RedisMessageStore current = apps.store(1, TIMEOUT);
			current.agreePartitions(TOPIC);
			current.send(TOPIC, List.of(message("held", Duration.ofHours(1))));
			RedisMessageStore starting = apps.storeVia(proxy, 3, TIMEOUT);
			// Replies 1-2 read markers, 3 the count, 4 begin, 5-6 read, 7-8 mark, 9
			// commit.
			AtomicInteger replies = new AtomicInteger();
			FaultyRedisProxy.Fault held = proxy.delayNextReplyTo(
					(name) -> name.equals("EVALSHA") && replies.incrementAndGet() == 9, Duration.ofSeconds(1));
			CompletableFuture<Void> change = CompletableFuture.runAsync(() -> starting.agreePartitions(TOPIC));
			assertThat(held.awaitFired(Duration.ofSeconds(10))).isTrue();
			String id = idIn(1, 3, "stale-");

			Throwable refused = catchThrowable(() -> stale.send(TOPIC, List.of(message(id, Duration.ofHours(1)))));

			assertThatThrownBy(change::join).isInstanceOf(CompletionException.class)
				.hasCauseInstanceOf(PartitionCountException.class);
			assertThat(apps.redis().opsForValue().get(stale.keys(TOPIC).partitionCount())).isNull();
			if (refused == null) {
				assertThat(current.inspect(TOPIC, id, 10)).as("%s, stored by the stale application", id).isNotNull();
			}
		}
	}

	/**
	 * A change from 1 to 3 partitions whose marking calls time out (their replies come
	 * after the timeout; Redis ran them): the change aborts without putting the markers
	 * back. They refuse every call, so the stale application's send to partition 1 is
	 * refused and stored nowhere, while applications on 1 go on.
	 */
	@Test
	void aChangeWhoseMarksTimedOutLeavesNoMarkerThatAcceptsAStaleApplication() {
		TestRedis redis = TestRedis.shared();
		try (PartitionApps apps = new PartitionApps();
				FaultyRedisProxy proxy = FaultyRedisProxy.start(redis.host(), redis.port())) {
			RedisMessageStore stale = apps.store(3, TIMEOUT);
			stale.agreePartitions(TOPIC);
			RedisMessageStore current = apps.store(1, TIMEOUT);
			current.agreePartitions(TOPIC);
			current.send(TOPIC, List.of(message("held", Duration.ofHours(1))));
			Duration shortTimeout = Duration.ofMillis(500);
			RedisMessageStore starting = apps.storeVia(proxy, 3, shortTimeout);
			AtomicInteger replies = new AtomicInteger();
			FaultyRedisProxy.Fault held = proxy.delayNextReplyTo(
					(name) -> name.equals("EVALSHA") && replies.incrementAndGet() == 7, Duration.ofSeconds(2));

			assertThatThrownBy(() -> starting.agreePartitions(TOPIC)).isInstanceOf(DataAccessException.class);
			assertThat(held.hasFired()).isTrue();
			await().atMost(Duration.ofSeconds(10))
				.until(() -> !apps.redis().hasKey(stale.keys(TOPIC).partitionChange()));
			// Applications on the current count keep working meanwhile.
			current.send(TOPIC, List.of(message("later", Duration.ofHours(1))));
			String id = idIn(1, 3, "stale-");

			Throwable refused = catchThrowable(() -> stale.send(TOPIC, List.of(message(id, Duration.ofHours(1)))));

			if (refused == null) {
				assertThat(current.inspect(TOPIC, id, 10)).as("%s, stored by the stale application", id).isNotNull();
			}
		}
	}

	/**
	 * The first send of an application to a topic whose count it changes makes several
	 * script calls one after the other (read markers, read the count, begin, read, mark,
	 * commit, then the send); all of them together wait for Redis at most the send
	 * timeout. With every reply taking 300 ms and a 1 s timeout they cannot all be done:
	 * the send fails within the timeout instead of taking about 3 s.
	 */
	@Test
	void theFirstSendToAPartitionedTopicWaitsForRedisAtMostTheSendTimeout() {
		TestRedis redis = TestRedis.shared();
		try (PartitionApps apps = new PartitionApps();
				FaultyRedisProxy proxy = FaultyRedisProxy.start(redis.host(), redis.port())) {
			try (PartitionApps elsewhere = new PartitionApps()) {
				// Loads the scripts into the server's cache, under another prefix.
				elsewhere.store(3, TIMEOUT).send(TOPIC, List.of(message("first", Duration.ofHours(1))));
			}
			Duration timeout = Duration.ofSeconds(1);
			RedisMessageStore three = apps.storeVia(proxy, 3, timeout);
			for (int i = 0; i < 10; i++) {
				proxy.delayNextReplyTo(FaultyRedisProxy.named("EVALSHA", "EVAL"), Duration.ofMillis(300));
			}
			long start = System.nanoTime();

			// It cannot be done in time: it gives up at the timeout.
			Throwable failure = catchThrowable(() -> three.send(TOPIC, List.of(message("first", Duration.ofHours(1)))));

			assertThat(failure).isInstanceOf(DataAccessException.class);
			long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
			assertThat(tookMillis).as("ms the send waited for Redis, with a send timeout of %s", timeout)
				.isLessThanOrEqualTo(2 * timeout.toMillis());
		}
	}

	/**
	 * A change from 3 partitions to 1 while partitions 1 and up are empty. Partition 2
	 * has a marker left behind by an earlier change; between the change's read of the
	 * markers and its marks (widened here by holding a reply), an application on 3
	 * repairs that marker, so the change's compare-and-set on it fails. The change is
	 * then tried again, and takes effect, instead of being reported as "another
	 * application changed the count".
	 */
	@Test
	void aChangeThatLostARaceWithARepairIsNotReportedAsAChangeByAnotherApplication() {
		TestRedis redis = TestRedis.shared();
		try (PartitionApps apps = new PartitionApps();
				FaultyRedisProxy proxy = FaultyRedisProxy.start(redis.host(), redis.port())) {
			RedisMessageStore three = apps.store(3, TIMEOUT);
			three.agreePartitions(TOPIC);
			String marker = apps.markerOf(three, 2, 3);
			apps.redis().opsForValue().set(marker, "1:a0b1c2d3");
			RedisMessageStore one = apps.storeVia(proxy, 1, TIMEOUT);
			// Replies 1: the count; 2: begin; 3-4: the markers read; 5-6: the marks.
			AtomicInteger replies = new AtomicInteger();
			FaultyRedisProxy.Fault held = proxy.delayNextReplyTo(
					(name) -> name.equals("EVALSHA") && replies.incrementAndGet() == 3, Duration.ofSeconds(1));
			CompletableFuture<Void> change = CompletableFuture.runAsync(() -> one.agreePartitions(TOPIC));
			assertThat(held.awaitFired(Duration.ofSeconds(10))).isTrue();
			// What the settle of a refused call of the application on 3 does.
			apps.redis().opsForValue().set(marker, "3");

			Throwable failure = catchThrowable(change::join);

			assertThat(failure).as("the change, or a failure that says why")
				.satisfiesAnyOf((thrown) -> assertThat(thrown).isNull(),
						(thrown) -> assertThat(thrown).hasRootCauseInstanceOf(PartitionCountException.class)
							.rootCause()
							.message()
							.doesNotContain("another application changed the count"));
		}
	}

}

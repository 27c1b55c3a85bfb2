package io.github.delayqueue.review;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import io.github.delayqueue.store.ClaimedMessage;
import io.github.delayqueue.store.Failures;
import io.github.delayqueue.store.MessagePage;
import io.github.delayqueue.store.MessageState;
import io.github.delayqueue.store.PartialStats;
import io.github.delayqueue.store.TopicInspector;
import io.github.delayqueue.store.TopicPartitions;
import io.github.delayqueue.store.redis.RedisMessageStore;
import io.github.delayqueue.test.redis.FaultyRedisProxy;
import io.github.delayqueue.test.redis.TestRedis;
import io.github.delayqueue.testsupport.OnOneServerVersion;
import io.github.delayqueue.testsupport.PartitionApps;
import io.github.delayqueue.testsupport.Transitions;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Disabled;
import org.junit.jupiter.api.Test;

import org.springframework.dao.QueryTimeoutException;
import org.springframework.data.redis.RedisSystemException;

import static io.github.delayqueue.testsupport.PartitionApps.TOPIC;
import static io.github.delayqueue.testsupport.PartitionApps.idIn;
import static io.github.delayqueue.testsupport.PartitionApps.message;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;

/**
 * Final adversarial review of the partial-outage reads (a partitioned topic's stats and
 * pages while one partition does not answer, replay and purge by rank that must stay
 * strict) and of the dead-letter call sent in full ({@code ScriptRunner.runInFull}). Real
 * Redis, behind a {@link FaultyRedisProxy} where a reply must be delayed or dropped.
 */
@OnOneServerVersion
class FinalReviewTests {

	private static final Duration TIMEOUT = Duration.ofMillis(500);

	private static final Duration PAST_TIMEOUT = Duration.ofMillis(1500);

	private static String keyOf(int index) {
		// The hash tag names the partition alone: partition 0's name is in the others'.
		return "{" + TopicPartitions.names(TOPIC, 3).get(index) + "}";
	}

	@Test
	void statsOfAPartitionedTopicWithItsLastPartitionSlowShowTheOthersAndNameTheSlowOneWithinTheTimeout() {
		try (PartitionApps apps = new PartitionApps();
				FaultyRedisProxy proxy = FaultyRedisProxy.start(TestRedis.shared().host(), TestRedis.shared().port())) {
			RedisMessageStore direct = apps.store(3, Duration.ofSeconds(5));
			direct.agreePartitions(TOPIC);
			for (int i = 0; i < 3; i++) {
				direct.send(TOPIC, List.of(message(idIn(i, 3, "m"), Duration.ofHours(1))));
			}
			RedisMessageStore slow = apps.storeVia(proxy, 3, TIMEOUT);
			slow.agreePartitions(TOPIC);
			TopicInspector inspector = slow.inspector(TOPIC);
			assertThat(inspector.partialStats().complete()).isTrue();
			int threadsBefore = Thread.activeCount();
			for (int round = 0; round < 5; round++) {
				proxy.delayNextReplyToCommand(FaultyRedisProxy.withArgumentContaining("EVALSHA", keyOf(2)),
						PAST_TIMEOUT);
				long started = System.nanoTime();

				PartialStats partial = inspector.partialStats();

				long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
				assertThat(tookMillis).as("ms the partial stats took").isLessThan(TIMEOUT.toMillis() + 400);
				assertThat(partial.unreachable()).as("round %d", round)
					.containsOnlyKeys(TopicPartitions.names(TOPIC, 3).get(2));
				assertThat(partial.unreachable().values().iterator().next().describe()).contains("did not answer")
					.doesNotContain("null");
				assertThat(partial.stats()).isNotNull();
				assertThat(partial.stats().scheduled()).isEqualTo(2);
				// The held reply, and every later one on that connection, pass before the
				// next round.
				await().atMost(Duration.ofSeconds(3)).until(() -> inspector.partialStats().complete());
			}
			assertThat(Thread.activeCount()).as("live threads after the slow reads")
				.isLessThanOrEqualTo(threadsBefore + 4);
		}
	}

	@Test
	void aPageOfTheDeadStateWithOnePartitionSlowLeavesItOutAndNamesItWithinTheWait() {
		try (PartitionApps apps = new PartitionApps();
				FaultyRedisProxy proxy = FaultyRedisProxy.start(TestRedis.shared().host(), TestRedis.shared().port())) {
			RedisMessageStore direct = apps.store(3, Duration.ofSeconds(5));
			direct.agreePartitions(TOPIC);
			for (int i = 0; i < 3; i++) {
				PartitionApps.deadLetter(direct, idIn(i, 3, "dead"));
			}
			RedisMessageStore slow = apps.storeVia(proxy, 3, TIMEOUT);
			slow.agreePartitions(TOPIC);
			// The page script in Redis's cache first: a NOSCRIPT sent again in full would
			// queue behind the held reply on the one shared connection.
			assertThat(slow.inspector(TOPIC).page(MessageState.DEAD, 0, 10, TIMEOUT).unreachable()).isEmpty();
			proxy.delayNextReplyToCommand(FaultyRedisProxy.withArgumentContaining("EVALSHA", keyOf(2)), PAST_TIMEOUT);
			long started = System.nanoTime();

			MessagePage page = slow.inspector(TOPIC).page(MessageState.DEAD, 0, 10, TIMEOUT);

			long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
			assertThat(tookMillis).as("ms the page took").isLessThan(TIMEOUT.toMillis() + 400);
			assertThat(page.unreachable()).containsOnlyKeys(TopicPartitions.names(TOPIC, 3).get(2));
			assertThat(page.messages()).extracting((summary) -> summary.id())
				.containsExactlyInAnyOrder(idIn(0, 3, "dead"), idIn(1, 3, "dead"));
		}
	}

	@Test
	void replayingAndPurgingTheOldestDeadWhileOnePartitionDoesNotAnswerFailAndLeaveEveryDeadMessageDead() {
		try (PartitionApps apps = new PartitionApps();
				FaultyRedisProxy proxy = FaultyRedisProxy.start(TestRedis.shared().host(), TestRedis.shared().port())) {
			RedisMessageStore direct = apps.store(3, Duration.ofSeconds(5));
			direct.agreePartitions(TOPIC);
			for (int i = 0; i < 3; i++) {
				PartitionApps.deadLetter(direct, idIn(i, 3, "dead"));
			}
			RedisMessageStore slow = apps.storeVia(proxy, 3, TIMEOUT);
			slow.agreePartitions(TOPIC);

			proxy.delayNextReplyToCommand(FaultyRedisProxy.withArgumentContaining("EVALSHA", keyOf(1)), PAST_TIMEOUT);
			Throwable replay = catchThrowable(() -> slow.replayDead(TOPIC, 10, 0));
			await().atMost(Duration.ofSeconds(3)).until(() -> slow.inspector(TOPIC).partialStats().complete());
			proxy.delayNextReplyToCommand(FaultyRedisProxy.withArgumentContaining("EVALSHA", keyOf(1)), PAST_TIMEOUT);
			Throwable purge = catchThrowable(() -> slow.purgeDead(TOPIC, 10));

			assertThat(replay).as("replay by rank with partition 1 silent").isNotNull();
			assertThat(purge).as("purge by rank with partition 1 silent").isNotNull();
			assertThat(direct.inspector(TOPIC).stats().dead()).as("dead messages left").isEqualTo(3);
		}
	}

	@Test
	void aPartitionCountKeyOfTheWrongTypeFailsStatsAndPagesWithRedisReasonNeverNull() {
		try (PartitionApps apps = new PartitionApps()) {
			RedisMessageStore store = apps.store(3, TIMEOUT);
			apps.redis().opsForHash().put(apps.markerOf(store, 0, 3), "x", "y");
			long started = System.nanoTime();

			Throwable stats = catchThrowable(() -> store.inspector(TOPIC).partialStats());
			Throwable page = catchThrowable(() -> store.inspector(TOPIC).page(MessageState.DEAD, 0, 10, TIMEOUT));

			assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started)).isLessThan(3 * TIMEOUT.toMillis());
			// The stats do not throw: each partition waits on the count's agreement,
			// which
			// fails, and is named with Redis's reply.
			assertThat(stats).as("partial stats with a wrong-type count key").isNull();
			PartialStats partial = store.inspector(TOPIC).partialStats();
			assertThat(partial.stats()).isNull();
			assertThat(partial.unreachable()).containsOnlyKeys(TopicPartitions.names(TOPIC, 3));
			assertThat(partial.unreachable().values())
				.allSatisfy((failure) -> assertThat(failure.describe()).contains("WRONGTYPE").doesNotContain("null"));
			assertThat(page).as("page with a wrong-type count key").isNotNull();
			assertThat(Failures.describe(page)).contains("WRONGTYPE").doesNotContain("null");
		}
	}

	@Test
	void manyStatsReadsOfATopicNotYetAgreedWhileRedisIsCutOffEachEndInBoundAndLeakNoThreads() {
		try (PartitionApps apps = new PartitionApps();
				FaultyRedisProxy proxy = FaultyRedisProxy.start(TestRedis.shared().host(), TestRedis.shared().port())) {
			// The count set in Redis by another application; this one has not agreed it
			// yet.
			apps.store(3, Duration.ofSeconds(5)).agreePartitions(TOPIC);
			RedisMessageStore store = apps.storeVia(proxy, 3, TIMEOUT);
			// Connected and its scripts loaded, but the topic's count not yet agreed.
			store.agreePartitions("other");
			proxy.pause();
			try {
				for (int round = 0; round < 8; round++) {
					long started = System.nanoTime();

					PartialStats partial = store.inspector(TOPIC).partialStats();

					long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
					assertThat(tookMillis).as("ms read %d took", round).isLessThan(TIMEOUT.toMillis() + 400);
					assertThat(partial.unreachable()).containsOnlyKeys(TopicPartitions.names(TOPIC, 3));
					assertThat(partial.unreachable().values())
						.allSatisfy((failure) -> assertThat(failure.describe()).doesNotContain("null"));
				}
				assertThat(readThreads()).as("threads of the partition-count pool").isLessThanOrEqualTo(4);
			}
			finally {
				proxy.resume();
			}
			await().atMost(Duration.ofSeconds(5)).until(() -> store.inspector(TOPIC).partialStats().complete());
		}
	}

	@Test
	void aStaleApplicationsPageOfTheDeadStateAfterTheCountChangedFailsOrShowsOnlyWhatIsDead() {
		try (PartitionApps apps = new PartitionApps()) {
			RedisMessageStore stale = apps.store(3, TIMEOUT);
			stale.agreePartitions(TOPIC);
			for (int i = 0; i < 3; i++) {
				PartitionApps.deadLetter(stale, idIn(i, 3, "dead"));
			}
			RedisMessageStore current = apps.store(1, Duration.ofSeconds(5));
			Throwable changed = catchThrowable(() -> current.agreePartitions(TOPIC));

			Throwable page = catchThrowable(() -> stale.inspector(TOPIC).page(MessageState.DEAD, 0, 10, TIMEOUT));

			System.out.println("COUNT-CHANGE-PROBE changed=" + changed + " / page=" + page);
			if (page == null) {
				MessagePage read = stale.inspector(TOPIC).page(MessageState.DEAD, 0, 10, TIMEOUT);
				assertThat(read.messages()).extracting((summary) -> summary.id())
					.isSubsetOf(idIn(0, 3, "dead"), idIn(1, 3, "dead"), idIn(2, 3, "dead"));
				assertThat(read.total()).isLessThanOrEqualTo(3);
			}
			else {
				assertThat(Failures.describe(page)).doesNotContain("null");
			}
		}
	}

	@Test
	@Disabled("hole: reads agree the count without changing it, and a partitioned topic nothing was sent to"
			+ " reads as 1 partition in Redis: PartitionCountException (the health check reports a declared"
			+ " topic DOWN until its first send, see FinalReviewHealthTests)")
	void statsOfAPartitionedTopicNeverSentToReadWithoutAnOutage() {
		try (PartitionApps apps = new PartitionApps()) {
			RedisMessageStore store = apps.store(3, TIMEOUT);
			Throwable failure = catchThrowable(() -> store.inspector(TOPIC).partialStats());
			assertThat(failure).isNull();
		}
	}

	private static long readThreads() {
		return Thread.getAllStackTraces()
			.keySet()
			.stream()
			.filter((thread) -> thread.getName().startsWith("delay-queue-read-"))
			.count();
	}

	@Test
	void aDeadLetterCallInterruptedWhileWaitingKeepsTheInterruptFailsInBoundAndBuriesOnce() throws Exception {
		try (PartitionApps apps = new PartitionApps();
				FaultyRedisProxy proxy = FaultyRedisProxy.start(TestRedis.shared().host(), TestRedis.shared().port())) {
			RedisMessageStore direct = apps.store(1, Duration.ofSeconds(5));
			direct.agreePartitions(TOPIC);
			RedisMessageStore slow = apps.storeVia(proxy, 1, Duration.ofSeconds(2));
			slow.agreePartitions(TOPIC);
			String id = "interrupted";
			slow.send(TOPIC, List.of(message(id, Duration.ZERO)));
			Transitions.promote(slow, TOPIC, 10);
			List<ClaimedMessage> claimed = Transitions.claim(slow, TOPIC, 10, Duration.ofMinutes(1));
			proxy.delayNextReplyTo(FaultyRedisProxy.named("EVAL"), Duration.ofSeconds(5));
			AtomicReference<Throwable> failure = new AtomicReference<>();
			AtomicBoolean interruptKept = new AtomicBoolean();
			Thread caller = new Thread(() -> {
				try {
					Transitions.deadLetter(slow, TOPIC, id, claimed.get(0).leaseToken(), "failed");
				}
				catch (RuntimeException ex) {
					failure.set(ex);
				}
				interruptKept.set(Thread.currentThread().isInterrupted());
			});
			caller.start();
			await().atMost(Duration.ofSeconds(2)).until(() -> proxy.forwardedCount(FaultyRedisProxy.named("EVAL")) > 0);
			long interrupted = System.nanoTime();
			caller.interrupt();
			caller.join(3000);

			assertThat(caller.isAlive()).isFalse();
			assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - interrupted)).isLessThan(1000);
			assertThat(failure.get()).isInstanceOf(QueryTimeoutException.class);
			assertThat(interruptKept).isTrue();
			await().atMost(Duration.ofSeconds(8))
				.untilAsserted(() -> assertThat(direct.inspector(TOPIC).stats().dead()).isEqualTo(1));
			assertThat(direct.inspector(TOPIC).stats().inFlight()).isZero();
			assertThat(proxy.forwardedCount(FaultyRedisProxy.named("EVAL"))).as("dead_letter calls forwarded")
				.isEqualTo(1);
		}
	}

	@Test
	void aDeadLetterCallWhoseReplyIsDroppedAfterRedisRanItBuriesTheMessageOnce() {
		deadLetterWithItsReplyDropped();
	}

	@Test
	@Disabled("hole: Lettuce re-sends the in-full dead_letter after the reconnect; its second run finds no lease"
			+ " and answers 0, so the consumer logs 'could not be dead-lettered: its lease had expired' for a"
			+ " message this very call buried")
	void aDeadLetterCallWhoseReplyIsDroppedAfterRedisRanItTellsTheCallerItWasBuried() {
		assertThat(deadLetterWithItsReplyDropped()).as("what deadLetter returned").isTrue();
	}

	private static @Nullable Boolean deadLetterWithItsReplyDropped() {
		try (PartitionApps apps = new PartitionApps();
				FaultyRedisProxy proxy = FaultyRedisProxy.start(TestRedis.shared().host(), TestRedis.shared().port())) {
			RedisMessageStore direct = apps.store(1, Duration.ofSeconds(5));
			direct.agreePartitions(TOPIC);
			RedisMessageStore flaky = apps.storeVia(proxy, 1, Duration.ofSeconds(2));
			flaky.agreePartitions(TOPIC);
			String id = "dropped";
			flaky.send(TOPIC, List.of(message(id, Duration.ZERO)));
			Transitions.promote(flaky, TOPIC, 10);
			List<ClaimedMessage> claimed = Transitions.claim(flaky, TOPIC, 10, Duration.ofMinutes(1));
			proxy.dropNextReplyTo(FaultyRedisProxy.named("EVAL"));

			AtomicReference<Boolean> buried = new AtomicReference<>();
			Throwable failure = catchThrowable(
					() -> buried.set(Transitions.deadLetter(flaky, TOPIC, id, claimed.get(0).leaseToken(), "failed")));

			await().atMost(Duration.ofSeconds(5))
				.untilAsserted(() -> assertThat(direct.inspector(TOPIC).stats().dead()).isEqualTo(1));
			assertThat(direct.inspector(TOPIC).page(MessageState.DEAD, 0, 10).messages()).hasSize(1);
			assertThat(direct.inspector(TOPIC).stats().inFlight()).isZero();
			System.out.println("DROP-PROBE failure=" + failure + " / buried " + buried.get() + " / EVAL forwarded "
					+ proxy.forwardedCount(FaultyRedisProxy.named("EVAL")));
			if (failure != null) {
				assertThat(Failures.describe(failure)).doesNotContain("null");
			}
			return buried.get();
		}
	}

	@Test
	void describingNestedFailuresWithoutMessagesNeverReadsNull() {
		Throwable nested = new CompletionException(
				new RedisSystemException(null, new IllegalStateException(new RuntimeException((String) null))));

		assertThat(Failures.describe(nested)).isNotBlank().doesNotContain("null");
		assertThat(Failures.describe(new RuntimeException((String) null, new IllegalStateException()))).isNotBlank()
			.doesNotContain("null");
		assertThat(Failures.describe(new CompletionException(null))).isNotBlank().doesNotContain("null");
		assertThat(Failures.describe(new RuntimeException("outer", new RuntimeException("null")))).isEqualTo("outer");
	}

}

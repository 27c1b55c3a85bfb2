package io.github.delayqueue.review;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.stream.IntStream;

import io.github.delayqueue.producer.DelayMessage;
import io.github.delayqueue.producer.DelayQueueTemplate;
import io.github.delayqueue.store.MessageSnapshot;
import io.github.delayqueue.store.NewMessage;
import io.github.delayqueue.store.PartitionCountException;
import io.github.delayqueue.store.StoreCalls;
import io.github.delayqueue.store.redis.RedisMessageStore;
import io.github.delayqueue.test.redis.FaultyRedisProxy;
import io.github.delayqueue.test.redis.TestRedis;
import io.github.delayqueue.testsupport.NoResourceTransactionManager;
import io.github.delayqueue.testsupport.OnOneServerVersion;
import io.github.delayqueue.testsupport.PartitionApps;
import io.github.delayqueue.testsupport.TestStore;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Disabled;
import org.junit.jupiter.api.Test;

import org.springframework.dao.QueryTimeoutException;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.transaction.support.TransactionTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Adversarial review of 225b4c54: a call by id (cancel, reschedule, inspect) that had to
 * wait for an unanswered earlier send of its id ({@code UnansweredSends.awaitEarlier})
 * now has its whole timeout from when that send's outcome is known, so docs/api.md
 * promises at most twice its timeout in all. Attacked, on real Redis behind
 * {@link FaultyRedisProxy}: the bound on every path after the wait (several unanswered
 * sends of one id chained, a partitioned topic whose call fans out to the other
 * partitions, a partition that refuses the call and the settling of its count, a send and
 * a call sent again in full after {@code NOSCRIPT}); whether the call ever overtakes the
 * earlier send (its reply delayed past its timeout, dropped after Redis ran it); whether
 * the other docs still promise one timeout. Bounds are generous (2 x timeout + 1 s): the
 * machine is loaded.
 */
@OnOneServerVersion
class CallByIdDeadlineReviewTests {

	private static final String TOPIC = "byid";

	private static final Duration TIMEOUT = Duration.ofMillis(800);

	/** Room for a loaded machine on top of a bound. */
	private static final Duration SLACK = Duration.ofSeconds(1);

	/** What docs/api.md promises a call by id at most: twice its timeout. */
	private static final long TWICE_MILLIS = 2 * TIMEOUT.toMillis() + SLACK.toMillis();

	// ---- 1. The 2x bound, path by path
	// -------------------------------------------------

	/**
	 * The cancel waits for the replacing send of its id (one latency), asks the id's
	 * partition (one more), then the other two, where the group's message is (one more):
	 * about 0.9-1.1 s of an 800 ms timeout, fine since it started after the wait.
	 */
	@Test
	void aCancelOfAGroupedMessageThatWaitedForItsSendFindsItInTheOtherPartitionsWithinTwiceItsTimeout() {
		try (TestStore fixture = partitioned()) {
			RedisMessageStore store = fixture.store();
			String group = storedAndWarm(store, "first");
			fixture.proxy().latency(Duration.ofMillis(300));
			CompletableFuture<?> send = store.sendAsync(Map.of(TOPIC, List.of(grouped("x", group, "second", true))));
			Timed<Boolean> cancel = Timed.of(() -> store.cancel(TOPIC, "x"));
			System.out.printf("fan-out cancel after a send: %s in %d ms; the send %s%n", cancel.outcome(),
					cancel.millis, outcomeOf(send));
			assertThat(cancel.failure).isNull();
			assertThat(cancel.value).isTrue();
			assertThat(cancel.millis).isLessThan(TWICE_MILLIS);
			fixture.proxy().latency(Duration.ZERO);
			assertThat(store.inspect(TOPIC, "x", 10)).isNull();
		}
	}

	/**
	 * As above with Redis 600 ms away: after the wait (600 ms) the cancel's two round
	 * trips (1.2 s) do not fit its 800 ms, so it fails at its own deadline, 1.4 s after
	 * it was made: within the bound, not later.
	 */
	@Test
	void aCancelWhoseFanOutOutlastsItsOwnTimeoutAfterTheWaitFailsWithinTwiceItsTimeout() {
		try (TestStore fixture = partitioned()) {
			RedisMessageStore store = fixture.store();
			String group = storedAndWarm(store, "first");
			fixture.proxy().latency(Duration.ofMillis(600));
			CompletableFuture<?> send = store.sendAsync(Map.of(TOPIC, List.of(grouped("x", group, "second", true))));
			Timed<Boolean> cancel = Timed.of(() -> store.cancel(TOPIC, "x"));
			System.out.printf("fan-out cancel past its timeout: %s in %d ms; the send %s%n", cancel.outcome(),
					cancel.millis, outcomeOf(send));
			assertThat(cancel.failure).isInstanceOf(QueryTimeoutException.class);
			assertThat(cancel.millis).isGreaterThanOrEqualTo(TIMEOUT.toMillis()).isLessThan(TWICE_MILLIS);
		}
	}

	/**
	 * Reschedule and inspect take the same path: the inspect after a replacing send of a
	 * grouped message finds it in the group's partition, the reschedule after it too;
	 * neither past twice its timeout.
	 */
	@Test
	void aRescheduleAndAnInspectThatWaitedForTheirSendFanOutWithinTwiceTheirTimeout() {
		try (TestStore fixture = partitioned()) {
			RedisMessageStore store = fixture.store();
			String group = storedAndWarm(store, "first");
			fixture.proxy().latency(Duration.ofMillis(300));
			store.sendAsync(Map.of(TOPIC, List.of(grouped("x", group, "second", true))));
			Timed<String> inspect = Timed.of(() -> body(store, "x"));
			store.sendAsync(Map.of(TOPIC, List.of(grouped("x", group, "third", true))));
			Timed<Long> reschedule = Timed.of(() -> store.reschedule(TOPIC, "x", Duration.ofHours(2)));
			System.out.printf("inspect %s in %d ms; reschedule %s in %d ms%n", inspect.outcome(), inspect.millis,
					reschedule.outcome(), reschedule.millis);
			assertThat(inspect.value).contains("second");
			assertThat(inspect.millis).isLessThan(TWICE_MILLIS);
			assertThat(reschedule.value).isPositive();
			assertThat(reschedule.millis).isLessThan(TWICE_MILLIS);
		}
	}

	/**
	 * Three replacing sends of one id, chained (each waits while the one before is on its
	 * way: 200, 400, 600 ms); the cancel waits for all three in one wait within its first
	 * timeout, then has its own: it cancels the last version.
	 */
	@Test
	void aCancelAfterThreeChainedSendsOfItsIdWaitsForAllWithinItsFirstTimeoutAndCancelsTheLast() {
		try (TestStore fixture = partitioned()) {
			RedisMessageStore store = fixture.store();
			String group = storedAndWarm(store, "v0");
			fixture.proxy().latency(Duration.ofMillis(200));
			List<CompletableFuture<?>> sends = new ArrayList<>();
			for (int i = 1; i <= 3; i++) {
				sends.add(store.sendAsync(Map.of(TOPIC, List.of(grouped("x", group, "v" + i, true)))));
			}
			Timed<Boolean> cancel = Timed.of(() -> store.cancel(TOPIC, "x"));
			List<String> outcomes = sends.stream().map(CallByIdDeadlineReviewTests::outcomeOf).toList();
			System.out.printf("cancel after 3 chained sends: %s in %d ms; the sends %s%n", cancel.outcome(),
					cancel.millis, outcomes);
			assertThat(outcomes).allMatch((outcome) -> outcome.startsWith("ok"));
			assertThat(cancel.value).isTrue();
			assertThat(cancel.millis).isLessThan(TWICE_MILLIS);
			fixture.proxy().latency(Duration.ZERO);
			assertThat(store.inspect(TOPIC, "x", 10)).isNull();
		}
	}

	/**
	 * Redis lost its scripts: the send's EVALSHA meets NOSCRIPT and goes again in full
	 * (two round trips of 300 ms), and so does the cancel's after the wait: 1.2 s in all,
	 * past one timeout, within two, and the message is cancelled.
	 */
	@Test
	void aCancelAfterASendSentAgainInFullAfterNoscriptIsSentAgainItselfWithinTwiceItsTimeout() {
		try (TestStore fixture = TestStore.builder().behindProxy().sendTimeout(TIMEOUT).build()) {
			RedisMessageStore store = fixture.store();
			setUp(store, message("x", "first", false));
			fixture.redis().execute((RedisCallback<Void>) (connection) -> {
				connection.scriptingCommands().scriptFlush();
				return null;
			});
			fixture.proxy().latency(Duration.ofMillis(300));
			CompletableFuture<?> send = store.sendAsync(Map.of(TOPIC, List.of(message("x", "second", true))));
			Timed<Boolean> cancel = Timed.of(() -> store.cancel(TOPIC, "x"));
			System.out.printf("cancel after NOSCRIPT: %s in %d ms; the send %s; EVAL forwarded %d%n", cancel.outcome(),
					cancel.millis, outcomeOf(send), fixture.proxy().forwardedCount(FaultyRedisProxy.named("EVAL")));
			assertThat(outcomeOf(send)).startsWith("ok");
			assertThat(cancel.value).isTrue();
			assertThat(cancel.millis).isLessThan(TWICE_MILLIS);
			assertThat(fixture.proxy().forwardedCount(FaultyRedisProxy.named("EVAL"))).isGreaterThanOrEqualTo(2);
			fixture.proxy().latency(Duration.ZERO);
			assertThat(store.inspect(TOPIC, "x", 10)).isNull();
		}
	}

	/**
	 * Another application took the topic from 3 partitions to 1 while this one's send of
	 * x (partition 0) was unanswered: the cancel made right after waits for the send,
	 * then its partition refuses it, and it settles the count (two more round trips):
	 * with Redis 280 ms away that does not fit its own timeout; it fails by twice its
	 * timeout.
	 */
	@Test
	void aCancelRefusedByItsPartitionAfterTheWaitSettlesWithinTwiceItsTimeout() {
		TestRedis redis = TestRedis.shared();
		try (PartitionApps apps = new PartitionApps();
				FaultyRedisProxy proxy = FaultyRedisProxy.start(redis.host(), redis.port())) {
			RedisMessageStore stale = apps.storeVia(proxy, 3, TIMEOUT);
			stale.agreePartitions(PartitionApps.TOPIC);
			RedisMessageStore current = apps.store(1, Duration.ofSeconds(5));
			String id = PartitionApps.idIn(0, 3, "x-");
			stale.send(PartitionApps.TOPIC, List.of(PartitionApps.message(id, Duration.ofHours(1))));
			stale.cancel(PartitionApps.TOPIC, "warm-up");
			proxy.latency(Duration.ofMillis(280));
			int before = proxy.forwardedCount(FaultyRedisProxy.named("EVALSHA"));
			CompletableFuture<?> send = stale.sendAsync(Map.of(PartitionApps.TOPIC,
					List.of(PartitionApps.message(id, Duration.ofHours(2)).replacingPending())));
			await().atMost(Duration.ofSeconds(5))
				.until(() -> proxy.forwardedCount(FaultyRedisProxy.named("EVALSHA")) > before);
			current.agreePartitions(PartitionApps.TOPIC);
			Timed<Boolean> cancel = Timed.of(() -> stale.cancel(PartitionApps.TOPIC, id));
			System.out.printf("refused cancel: %s in %d ms; the send %s%n", cancel.outcome(), cancel.millis,
					outcomeOf(send));
			assertThat(cancel.failure).isInstanceOfAny(PartitionCountException.class, QueryTimeoutException.class);
			assertThat(cancel.millis).isLessThan(TWICE_MILLIS);
			proxy.latency(Duration.ZERO);
		}
	}

	/**
	 * Redis lost the topic's data (restarted empty, flushed) while this application's
	 * send of x (partition 1 of 3) was unanswered. The cancel made right after waits for
	 * the send (2.7 s of its 3 s), then has its own 3 s: partition 1 refuses it (no
	 * marker), settling finds the count lost and agrees it again
	 * ({@code PartitionCounts.settle}, {@code isLost}): the change's begin gets no answer
	 * by the deadline, and {@code PartitionCounts.abort} then waits a whole timeout more
	 * of its own ({@code max(deadline, now + timeout)}) before the cancel fails: about
	 * three timeouts (4.9 and 5.6 s with a 2 s timeout; 8.3 and 8.5 s with 3 s), where
	 * docs/api.md promises at most two.
	 */
	@Test
	@Disabled("finding: a call by id that waited for an earlier send and then settles a lost partition count "
			+ "(PartitionCounts.settle -> change -> abort) takes up to three timeouts: abort has a fresh timeout of "
			+ "its own past the call's deadline, beyond the 2x of docs/api.md")
	void aCancelThatWaitedForItsSendAndThenAgreesALostCountAgainEndsWithinTwiceItsTimeout() {
		Duration timeout = Duration.ofSeconds(3);
		try (TestStore fixture = TestStore.builder()
			.behindProxy()
			.sendTimeout(timeout)
			.partitions(Map.of(TOPIC, 3))
			.build()) {
			RedisMessageStore store = fixture.store();
			String id = PartitionApps.idIn(1, 3, "x-");
			setUp(store, message(id, "first", false));
			warmUp(store);
			String changeKey = store.keys(TOPIC).partitionChange();
			String expiry = String.valueOf(4 * timeout.toMillis());
			FaultyRedisProxy proxy = fixture.proxy();
			proxy.delayNextReplyTo(FaultyRedisProxy.named("EVALSHA"), timeout.minus(timeout.dividedBy(10)));
			FaultyRedisProxy.Fault begin = proxy.delayNextReplyToCommand(
					(command) -> command.contains(changeKey) && command.get(command.size() - 1).equals(expiry),
					timeout.multipliedBy(2));
			int before = proxy.forwardedCount(FaultyRedisProxy.named("EVALSHA"));
			CompletableFuture<?> send = store.sendAsync(Map.of(TOPIC, List.of(message(id, "second", true))));
			await().atMost(Duration.ofSeconds(5))
				.until(() -> proxy.forwardedCount(FaultyRedisProxy.named("EVALSHA")) > before);
			TestRedis redis = TestRedis.shared();
			LettuceConnectionFactory direct = TestStore.connect(redis.host(), redis.port());
			try {
				StringRedisTemplate lost = new StringRedisTemplate(direct);
				lost.afterPropertiesSet();
				lost.delete(lost.keys(fixture.prefix() + "*"));
			}
			finally {
				direct.destroy();
			}
			Timed<Boolean> cancel = Timed.of(() -> store.cancel(TOPIC, id));
			System.out.printf("cancel after a lost count: %s in %d ms (timeout %d ms); the send %s; begin held %s%n",
					cancel.outcome(), cancel.millis, timeout.toMillis(), outcomeOf(send),
					begin.awaitFired(Duration.ZERO));
			assertThat(cancel.millis).isLessThan(2 * timeout.toMillis() + SLACK.toMillis());
		}
	}

	/**
	 * A template's cancel in a transaction, right after a sendAsync of its id made before
	 * it and a send of the id held in it: the held send is dropped, and the store's
	 * cancel waits for the earlier send and then fans out, within twice its timeout;
	 * nothing of x is left after the commit.
	 */
	@Test
	void aCancelInATransactionAfterAnAsyncSendOfItsIdDropsTheHeldSendAndCancelsTheStoredOneWithinTwiceItsTimeout() {
		try (TestStore fixture = partitioned()) {
			RedisMessageStore store = fixture.store();
			DelayQueueTemplate template = fixture.template();
			String group = storedAndWarm(store, "first");
			fixture.proxy().latency(Duration.ofMillis(300));
			CompletableFuture<?> send = template.sendAsync(
					DelayMessage.builder(TOPIC, "second").id("x").group(group).delay(Duration.ofHours(1)).build());
			TransactionTemplate transactions = new TransactionTemplate(new NoResourceTransactionManager());
			Timed<Boolean> cancel = Timed.of(() -> transactions.execute((status) -> {
				template
					.send(DelayMessage.builder(TOPIC, "held").id("x").group(group).delay(Duration.ofHours(1)).build());
				return template.cancel(TOPIC, "x");
			}));
			System.out.printf("cancel in a transaction: %s in %d ms; the send %s%n", cancel.outcome(), cancel.millis,
					outcomeOf(send));
			assertThat(cancel.value).isTrue();
			assertThat(cancel.millis).isLessThan(TWICE_MILLIS);
			fixture.proxy().latency(Duration.ZERO);
			assertThat(store.inspect(TOPIC, "x", 10)).isNull();
		}
	}

	// ---- 3. Ordering
	// -------------------------------------------------------------------

	/**
	 * The send's reply is held 1.5 timeouts: the send fails at its timeout, though Redis
	 * ran it. The cancel made right after either is not made (the send's outcome came at
	 * its own first deadline) or, made after it on the connection, runs after it in
	 * Redis: a cancel that answered must have cancelled the replacing send's message.
	 */
	@Test
	void aCancelAfterASendWhoseReplyIsHeldPastItsTimeoutNeverRunsBeforeIt() {
		try (TestStore fixture = TestStore.builder().behindProxy().sendTimeout(TIMEOUT).build()) {
			RedisMessageStore store = fixture.store();
			setUp(store, message("x", "first", false));
			fixture.proxy().delayNextReplyTo(FaultyRedisProxy.named("EVALSHA"), TIMEOUT.plus(TIMEOUT.dividedBy(2)));
			CompletableFuture<?> send = store.sendAsync(Map.of(TOPIC, List.of(message("x", "second", true))));
			Timed<Boolean> cancel = Timed.of(() -> store.cancel(TOPIC, "x"));
			System.out.printf("cancel after a held send: %s in %d ms; the send %s%n", cancel.outcome(), cancel.millis,
					outcomeOf(send));
			assertThat(cancel.millis).isLessThan(TWICE_MILLIS);
			if (cancel.failure == null) {
				assertThat(cancel.value).isTrue();
				assertThat(store.inspect(TOPIC, "x", 10)).isNull();
			}
			else {
				assertThat(cancel.failure).isInstanceOf(QueryTimeoutException.class);
				assertThat(body(store, "x")).contains("second");
			}
		}
	}

	/**
	 * The same, five times, with a 300 ms timeout: the send's outcome (its timeout) comes
	 * at its own deadline, a few microseconds before the cancel's first deadline, both
	 * from timers; when the send's timer is late by more than those microseconds, the
	 * cancel gives up, not made ("an earlier send of this id ... had no answer from Redis
	 * in time"), though the outcome was due within its timeout. docs/api.md: "so
	 * sendAsync(x) followed by cancel(x) cancels x". The enabled
	 * SendExpiryReviewTests.aCancelRightAfterAQueuedReplicatedSendOfItsIdCancelsIt races
	 * the same way (the send taken by a thread with 105 ms left and timing out at its
	 * deadline, or its expiry timer late): it failed on Redis 6.2 in 1 of 2 runs here.
	 * Not made here in 2 to 5 of 5 rounds in each of nine runs (Redis 7 and 6.2)
	 * (finding, fixed: the wait for the earlier send goes a fifth of a second past the
	 * first deadline).
	 */
	@Test
	void aCancelRightAfterASendThatTimesOutIsMadeEveryTime() {
		Duration timeout = Duration.ofMillis(300);
		try (TestStore fixture = TestStore.builder().behindProxy().sendTimeout(timeout).build()) {
			RedisMessageStore store = fixture.store();
			List<String> notMade = new ArrayList<>();
			for (int round = 0; round < 5; round++) {
				String id = "x" + round;
				store.send(TOPIC, List.of(message(id, "first", false)));
				FaultyRedisProxy.Fault held = fixture.proxy()
					.delayNextReplyTo(FaultyRedisProxy.named("EVALSHA"), timeout.plus(timeout.dividedBy(2)));
				CompletableFuture<?> send = store.sendAsync(Map.of(TOPIC, List.of(message(id, "second", true))));
				Timed<Boolean> cancel = Timed.of(() -> store.cancel(TOPIC, id));
				System.out.printf("round %d: cancel %s in %d ms; the send %s%n", round, cancel.outcome(), cancel.millis,
						outcomeOf(send));
				assertThat(held.awaitFired(Duration.ofSeconds(5))).isTrue();
				if (cancel.failure != null) {
					notMade.add("round " + round + ": " + cancel.failure.getMessage());
				}
				// The held reply passed, so the next round starts afresh.
				await().atMost(Duration.ofSeconds(5)).until(() -> store.inspect(TOPIC, "probe", 10) == null);
			}
			assertThat(notMade).isEmpty();
		}
	}

	/**
	 * The send's reply is dropped after Redis ran it and the connection closed: the
	 * client sends it again on a new connection. The cancel made right after waits for
	 * that, runs after both runs, and the message stays cancelled.
	 */
	@Test
	void aCancelAfterASendWhoseReplyWasDroppedRunsAfterTheSendIsSentAgain() {
		try (TestStore fixture = TestStore.builder().behindProxy().sendTimeout(TIMEOUT).build()) {
			RedisMessageStore store = fixture.store();
			setUp(store, message("x", "first", false));
			int before = fixture.proxy().forwardedCount(FaultyRedisProxy.named("EVALSHA", "EVAL"));
			FaultyRedisProxy.Fault dropped = fixture.proxy().dropNextReplyTo(FaultyRedisProxy.named("EVALSHA"));
			CompletableFuture<?> send = store.sendAsync(Map.of(TOPIC, List.of(message("x", "second", true))));
			Timed<Boolean> cancel = Timed.of(() -> store.cancel(TOPIC, "x"));
			int forwarded = fixture.proxy().forwardedCount(FaultyRedisProxy.named("EVALSHA", "EVAL")) - before;
			System.out.printf("cancel after a dropped reply: %s in %d ms; the send %s; calls forwarded %d%n",
					cancel.outcome(), cancel.millis, outcomeOf(send), forwarded);
			assertThat(dropped.awaitFired(Duration.ofSeconds(5))).isTrue();
			assertThat(cancel.failure).isNull();
			assertThat(cancel.value).isTrue();
			assertThat(cancel.millis).isLessThan(TWICE_MILLIS);
			assertThat(store.inspect(TOPIC, "x", 10)).isNull();
		}
	}

	// ---- 2. Who relies on one timeout
	// --------------------------------------------------

	/**
	 * docs/configuration.md: "Every call of the queue waits for Redis at most
	 * delay-queue.producer.send-timeout" and the property's row: "longest a send, cancel
	 * or reschedule (and any other queue call) waits for Redis"; docs/operations.md: the
	 * endpoint's "Every read waits for Redis at most send-timeout" (its message read is
	 * an inspect). An inspect or cancel made right after a send of its id waits for that
	 * send's reply and then has a whole timeout: here 1.06-1.2 s of an 800 ms timeout,
	 * every wait a wait for Redis. docs/api.md says twice (finding, fixed: the others
	 * said once; they say twice now).
	 */
	@Test
	void anInspectRightAfterASendOfItsIdWaitsForRedisAtMostTwiceTheSendTimeoutAsTheDocsSay() {
		try (TestStore fixture = partitioned()) {
			RedisMessageStore store = fixture.store();
			String group = storedAndWarm(store, "first");
			fixture.proxy().latency(Duration.ofMillis(380));
			store.sendAsync(Map.of(TOPIC, List.of(grouped("x", group, "second", true))));
			Timed<Object> inspect = Timed.of(() -> store.inspect(TOPIC, "x", 100));
			System.out.printf("inspect right after a send: %s in %d ms (timeout %d ms)%n", inspect.outcome(),
					inspect.millis, TIMEOUT.toMillis());
			assertThat(inspect.millis).isLessThan(2 * TIMEOUT.toMillis() + 1000);
		}
	}

	// ---- helpers
	// -----------------------------------------------------------------------

	/**
	 * Stores a message before the faults, sent again while the loaded machine keeps the
	 * first calls of a new connection past the short timeout (the same message: stored
	 * once).
	 */
	private static void setUp(RedisMessageStore store, NewMessage message) {
		StoreCalls.withRetries(() -> store.send(TOPIC, List.of(message)));
	}

	/**
	 * Stores message x, with the given body, in a group of another partition than the
	 * id's (so a call by id fans out), and loads the scripts of the calls by id.
	 * @return the group
	 */
	private static String storedAndWarm(RedisMessageStore store, String body) {
		String group = groupElsewhere(store, "x");
		setUp(store, grouped("x", group, body, false));
		warmUp(store);
		return group;
	}

	/**
	 * Loads the scripts of the calls by id, so that none meets NOSCRIPT behind the proxy.
	 */
	private static void warmUp(RedisMessageStore store) {
		StoreCalls.withRetries(() -> store.cancel(TOPIC, "warm-up"));
		StoreCalls.withRetries(() -> store.reschedule(TOPIC, "warm-up", Duration.ofHours(1)));
		StoreCalls.withRetries(() -> Optional.ofNullable(store.inspect(TOPIC, "warm-up", 10)));
	}

	private static TestStore partitioned() {
		return TestStore.builder().behindProxy().sendTimeout(TIMEOUT).partitions(Map.of(TOPIC, 3)).build();
	}

	/** A group whose partition is not the id's, so a call by id asks the others. */
	private static String groupElsewhere(RedisMessageStore store, String id) {
		String partition = store.partitions().nameFor(TOPIC, id);
		return IntStream.iterate(0, (i) -> i + 1)
			.mapToObj((i) -> "g" + i)
			.filter((group) -> !store.partitions().nameForGroup(TOPIC, group).equals(partition))
			.findFirst()
			.orElseThrow();
	}

	private static NewMessage message(String id, String body, boolean replacing) {
		return new NewMessage(id, true, Duration.ofHours(1).toMillis(), body.getBytes(StandardCharsets.UTF_8),
				replacing);
	}

	private static NewMessage grouped(String id, String group, String body, boolean replacing) {
		return message(id, body, replacing).inGroup(group);
	}

	private static String body(RedisMessageStore store, String id) {
		MessageSnapshot found = store.inspect(TOPIC, id, 1000);
		return (found != null) ? new String(found.storedPrefix(), StandardCharsets.UTF_8) : null;
	}

	/** How a send ended, once it did (at most 5 s from now). */
	private static String outcomeOf(CompletableFuture<?> send) {
		try {
			send.get(5, TimeUnit.SECONDS);
			return "ok";
		}
		catch (ExecutionException ex) {
			return "failed: " + ex.getCause();
		}
		catch (Exception ex) {
			return "not ended: " + ex;
		}
	}

	/** A call, its result or failure, and how long it took. */
	private static final class Timed<T> {

		final T value;

		final RuntimeException failure;

		final long millis;

		private Timed(T value, RuntimeException failure, long millis) {
			this.value = value;
			this.failure = failure;
			this.millis = millis;
		}

		static <T> Timed<T> of(Supplier<T> call) {
			long start = System.nanoTime();
			T value = null;
			RuntimeException failure = null;
			try {
				value = call.get();
			}
			catch (RuntimeException ex) {
				failure = ex;
			}
			return new Timed<>(value, failure, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
		}

		String outcome() {
			return (this.failure != null) ? this.failure.toString() : String.valueOf(this.value);
		}

	}

}

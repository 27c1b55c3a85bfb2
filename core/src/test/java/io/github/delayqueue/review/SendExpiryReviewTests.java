package io.github.delayqueue.review;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;

import io.github.delayqueue.store.NewMessage;
import io.github.delayqueue.store.NotReplicatedException;
import io.github.delayqueue.store.redis.RedisMessageStore;
import io.github.delayqueue.test.redis.FaultyRedisProxy;
import io.github.delayqueue.test.redis.RedisServerProcess;
import io.github.delayqueue.test.redis.TestRedis;
import io.github.delayqueue.testsupport.OnOneServerVersion;
import io.github.delayqueue.testsupport.TestStore;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Disabled;
import org.junit.jupiter.api.Test;

import org.springframework.dao.QueryTimeoutException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Adversarial review of 8f611ad: with confirmed replication, an asynchronous send still
 * queued for one of the store's four threads at its deadline fails then, unsent, by a
 * timer on a thread of the store ({@code delay-queue-send-expiry-}); a flag decides
 * whether the timer or a thread has it. Attacked: a send both written and reported unsent
 * (a thread taking it as the timer fires), a send that never completes (the store closed
 * under queued sends), the timer thread's life across stores, calls by id and replacing
 * sends behind a queued send, and what a send without replication pays.
 */
@OnOneServerVersion
class SendExpiryReviewTests {

	private static final String TOPIC = "expiry";

	/** What the timer's failure says, and only the timer's. */
	private static final String NOT_SENT = "was not sent";

	private static final String EXPIRY_THREAD = "delay-queue-send-expiry-";

	/**
	 * How much later than its bound a send may complete: timers were seen to fire up to
	 * 78 ms late on this machine, loaded by other builds.
	 */
	private static final Duration SLACK = Duration.ofMillis(400);

	/** A primary without replica: every replicated send waits the replication timeout. */
	private static RedisServerProcess alone;

	private static RedisServerProcess primary;

	private static RedisServerProcess replica;

	@BeforeAll
	static void startServers() {
		alone = TestRedis.startPrivateServer();
		primary = TestRedis.startPrivateServer();
		replica = TestRedis.startPrivateServer("--replicaof", primary.host(), String.valueOf(primary.port()));
		replica.awaitReplicaOf(primary, Duration.ofSeconds(10));
	}

	@AfterAll
	static void stopServers() {
		for (RedisServerProcess server : new RedisServerProcess[] { replica, primary, alone }) {
			if (server != null) {
				server.close();
			}
		}
	}

	// ---- 1. Written and reported unsent ----------------------------------------------

	/**
	 * Redis 20 ms away: each replicated send holds a thread for two round trips, so the
	 * four threads free up one after the other while a stream of sends, made every 2 ms,
	 * reaches its 150 ms deadline in the queue. Threads take sends at every distance from
	 * their deadlines, some at the instant their timers fire. A send the timer failed
	 * ("was not sent") must not be in Redis; every send completes.
	 */
	@Test
	void aReplicatedSendReportedUnsentIsNeverStoredWhenThreadsFreeUpAroundItsDeadline() throws Exception {
		Race race = race();
		assertThat(race.wrong).isEmpty();
		assertThat(race.late).isEmpty();
		assertThat(race.unsent).as("sends the timer failed").isPositive();
		assertThat(race.stored).as("sends stored").isPositive();
	}

	/**
	 * The same stream: a send a thread takes with less time left than a connection takes
	 * (Redis 20 ms away) still connects, fails ("Could not connect to Redis within
	 * PT0.00...") and closes the connection when it comes. The pool of idle connections
	 * is emptied by each call that timed out (its connection is closed), so once sends
	 * are taken near their deadlines every one of them connects in vain: in one run 103
	 * of 180 sends failed so and the proxy accepted 112 connections, against 11 calls
	 * that timed out (57 and 68 of 120 in runs of 40 sends a round). A connection is
	 * needed only to replace one closed after a call that timed out.
	 */
	@Test
	@Disabled("finding: a replicated send taken with too little time left still opens a connection it cannot use "
			+ "(RedisSends.replicated skips only expired sends; ReplicatedWrites.borrow closes a late connection)")
	void aReplicatedSendTakenNearItsDeadlineDoesNotOpenAConnectionInVain() throws Exception {
		Race race = race();
		assertThat(race.connections).as("connections opened, %d calls timed out", race.timedOutCalls)
			.isLessThanOrEqualTo(4 + race.timedOutCalls);
	}

	private static Race race() throws Exception {
		Duration sendTimeout = Duration.ofMillis(150);
		Duration replicationTimeout = Duration.ofSeconds(1);
		try (FaultyRedisProxy proxy = FaultyRedisProxy.start(primary.host(), primary.port());
				TestStore fixture = TestStore.builder()
					.on(proxy.host(), proxy.port())
					.confirmReplication(1, replicationTimeout)
					.sendTimeout(sendTimeout)
					.build();
				TestStore inspector = TestStore.builder()
					.on(primary.host(), primary.port())
					.prefix(fixture.prefix())
					.build()) {
			RedisMessageStore store = fixture.store();
			// Connections for the four threads, the script loaded, the count agreed.
			List<Timed> warm = new ArrayList<>();
			for (int i = 0; i < 4; i++) {
				String id = "warm-" + i;
				warm.add(Timed.of(id, () -> store.sendAsync(Map.of(TOPIC, List.of(message(id, "w", false))))));
			}
			awaitAll(warm);
			proxy.latency(Duration.ofMillis(20));
			int connectionsBefore = proxy.acceptedConnections();
			List<Timed> sends = new ArrayList<>();
			for (int round = 0; round < 3; round++) {
				long start = System.nanoTime();
				List<Timed> ofRound = new ArrayList<>();
				for (int i = 0; i < 60; i++) {
					LockSupport.parkNanos(start + TimeUnit.MILLISECONDS.toNanos(2L * i) - System.nanoTime());
					String id = "r" + round + "-" + i;
					ofRound.add(Timed.of(id, () -> store.sendAsync(Map.of(TOPIC, List.of(message(id, "A", false))))));
				}
				awaitAll(ofRound);
				sends.addAll(ofRound);
			}
			Race race = new Race();
			race.connections = proxy.acceptedConnections() - connectionsBefore;
			proxy.latency(Duration.ZERO);
			Map<String, Integer> kinds = new TreeMap<>();
			for (Timed one : sends) {
				boolean inRedis = inspector.store().inspect(TOPIC, one.name, 10) != null;
				Throwable failure = one.failure();
				if (failure == null) {
					race.stored++;
					if (!inRedis) {
						race.wrong.add(one.name + " succeeded, not in Redis");
					}
				}
				else if (failure instanceof QueryTimeoutException && failure.getMessage().contains(NOT_SENT)) {
					race.unsent++;
					if (inRedis) {
						race.wrong.add(one.name + " reported unsent after " + one.tookMillis() + " ms, in Redis");
					}
				}
				else {
					if (inRedis) {
						race.failedStored++;
					}
					else {
						race.failedNotStored++;
					}
					if (failure.getMessage().contains("did not answer within")) {
						race.timedOutCalls++;
					}
					kinds.merge((inRedis ? "stored: " : "not stored: ") + kind(failure), 1, Integer::sum);
				}
			}
			race.late.addAll(late(sends, sendTimeout.plus(replicationTimeout)));
			System.out.printf(
					"race: %d stored, %d unsent by the timer, %d failed but stored, %d failed not stored, "
							+ "%d connections opened %s%n",
					race.stored, race.unsent, race.failedStored, race.failedNotStored, race.connections, kinds);
			return race;
		}
	}

	/** What a stream of sends around their deadlines came to. */
	private static final class Race {

		int stored;

		int unsent;

		int failedStored;

		int failedNotStored;

		int connections;

		/** The calls that timed out once written: each closes its connection. */
		int timedOutCalls;

		final List<String> wrong = new ArrayList<>();

		final List<String> late = new ArrayList<>();

	}

	/**
	 * The timer thread is one per store and may be late: loaded by other work (timers
	 * were seen 78 ms late on this machine) or held by what a caller chained on a send it
	 * failed (here 500 ms, though docs/api.md asks not to block there). Four sends hold
	 * the threads 400 ms (the replies to their WAITs held); behind them, sends with a 200
	 * ms timeout are past their deadline when the threads free up, their timers not yet
	 * run. A thread takes them, as the flag is still down, and writes them with the 1 ms
	 * left. The thread could check the deadline it takes a send at, as the timer does.
	 */
	@Test
	void aQueuedReplicatedSendPastItsDeadlineIsNotWrittenWhileItsTimerIsLate() throws Exception {
		try (FaultyRedisProxy proxy = FaultyRedisProxy.start(primary.host(), primary.port());
				TestStore fixture = TestStore.builder()
					.on(proxy.host(), proxy.port())
					.confirmReplication(1, Duration.ofSeconds(1))
					.sendTimeout(Duration.ofMillis(200))
					.build()) {
			RedisMessageStore store = fixture.store();
			failureOf(() -> store.send(TOPIC, List.of(message("warm", "w", false))));
			for (int i = 0; i < 4; i++) {
				proxy.delayNextReplyTo("WAIT"::equals, Duration.ofMillis(400));
			}
			List<Timed> holding = holdTheThreads(store, 4);
			// Expires first; what is chained on it holds the timer thread.
			Timed blocking = Timed.of("blocking",
					() -> store.sendAsync(Map.of(TOPIC, List.of(message("blocking", "A", false))))
						.whenComplete((result, failure) -> LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(500))));
			List<Timed> behind = new ArrayList<>();
			for (int i = 0; i < 4; i++) {
				String id = "behind-" + i;
				behind.add(Timed.of(id, () -> store.sendAsync(Map.of(TOPIC, List.of(message(id, "A", false))))));
			}
			awaitAll(holding);
			awaitAll(behind);
			awaitAll(List.of(blocking));
			List<String> written = new ArrayList<>();
			for (Timed one : behind) {
				if (store.inspect(TOPIC, one.name, 10) != null) {
					Throwable failure = one.failure();
					written.add(one.name + ": " + ((failure != null) ? kind(failure) : "stored") + " after "
							+ one.tookMillis() + " ms");
				}
			}
			System.out.println("written past their deadline: " + written + "; holding: "
					+ holding.stream().map((one) -> one.tookMillis() + " ms " + one.failure()).toList() + "; behind: "
					+ behind.stream().map((one) -> one.tookMillis() + " ms " + one.failure()).toList());
			assertThat(written).isEmpty();
			assertThat(behind).allSatisfy((one) -> assertThat(one.failure()).hasMessageContaining(NOT_SENT));
		}
	}

	// ---- 2. Never completed -------------------------------------------------------

	/**
	 * No replica: four sends hold the four threads for the 400 ms replication timeout.
	 * Six sends queue behind them with a 1.5 s send timeout, and the store closes at
	 * once: the threads, once free, still take them (the pool is shut down, not stopped).
	 * Each completes within its bound; what the close does to them is printed.
	 */
	@Test
	void replicatedSendsQueuedWhenTheStoreClosesAllComplete() throws Exception {
		Duration sendTimeout = Duration.ofMillis(1500);
		Duration replicationTimeout = Duration.ofMillis(400);
		try (FaultyRedisProxy proxy = FaultyRedisProxy.start(alone.host(), alone.port());
				TestStore fixture = TestStore.builder()
					.on(proxy.host(), proxy.port())
					.confirmReplication(1, replicationTimeout)
					.sendTimeout(sendTimeout)
					.build()) {
			RedisMessageStore store = fixture.store();
			assertThat(failureOf(() -> store.send(TOPIC, List.of(message("warm", "w", false)))))
				.isInstanceOf(NotReplicatedException.class);
			List<Timed> holding = holdTheThreads(store, 4);
			List<Timed> behind = new ArrayList<>();
			for (int i = 0; i < 6; i++) {
				String id = "behind-" + i;
				behind.add(Timed.of(id, () -> store.sendAsync(Map.of(TOPIC, List.of(message(id, "A", false))))));
			}
			int connectionsAtClose = proxy.acceptedConnections();
			store.close();
			awaitAll(holding);
			awaitAll(behind);
			assertThat(late(holding, sendTimeout.plus(replicationTimeout))).isEmpty();
			assertThat(late(behind, sendTimeout.plus(replicationTimeout))).isEmpty();
			List<String> outcomes = new ArrayList<>();
			for (Timed one : behind) {
				Throwable failure = one.failure();
				outcomes.add(one.name + ": " + ((failure != null) ? failure.getClass().getSimpleName() : "stored")
						+ " after " + one.tookMillis() + " ms, in Redis: " + inRedis(fixture, one.name));
			}
			System.out.println("after close: " + outcomes + ", connections opened after the close: "
					+ (proxy.acceptedConnections() - connectionsAtClose));
		}
	}

	/**
	 * The timer thread of a store with confirmed replication is started by its first
	 * asynchronous send and ends when the store closes: ten stores made, used and closed
	 * one after the other leave none behind.
	 */
	@Test
	void closedStoresLeaveNoExpiryThreadBehind() throws Exception {
		long before = threads(EXPIRY_THREAD);
		int most = 0;
		for (int i = 0; i < 10; i++) {
			try (TestStore fixture = TestStore.builder()
				.on(alone.host(), alone.port())
				.confirmReplication(1, Duration.ofMillis(50))
				.sendTimeout(Duration.ofSeconds(2))
				.build()) {
				CompletableFuture<?> sent = fixture.store()
					.sendAsync(Map.of(TOPIC, List.of(message("s" + i, "A", false))));
				most = Math.max(most, (int) (threads(EXPIRY_THREAD) - before));
				assertThat(sent).failsWithin(Duration.ofSeconds(5));
			}
		}
		assertThat(most).as("expiry threads started at once").isBetween(1, 2);
		await().atMost(Duration.ofSeconds(3))
			.untilAsserted(() -> assertThat(threads(EXPIRY_THREAD)).isLessThanOrEqualTo(before));
	}

	// ---- 3. Calls by id and replacing sends behind a queued send ---------------------

	/**
	 * x is stored (on the primary: no replica confirms). Four sends hold the threads for
	 * a second; a send replacing x queues behind them and expires unsent at its 400 ms; a
	 * cancel of x made 100 ms after it waits for that and cancels the x first stored. The
	 * replacing send is never written later.
	 */
	@Test
	void aCancelBehindAQueuedReplacingSendOfItsIdRunsOnceThatSendExpiredUnsent() throws Exception {
		Duration sendTimeout = Duration.ofMillis(400);
		Duration replicationTimeout = Duration.ofSeconds(1);
		try (TestStore fixture = TestStore.builder()
			.on(alone.host(), alone.port())
			.confirmReplication(1, replicationTimeout)
			.sendTimeout(sendTimeout)
			.build()) {
			RedisMessageStore store = fixture.store();
			assertThat(failureOf(() -> store.send(TOPIC, List.of(message("x", "first", false)))))
				.isInstanceOf(NotReplicatedException.class);
			List<Timed> holding = holdTheThreads(store, 4);
			Timed replacing = Timed.of("x",
					() -> store.sendAsync(Map.of(TOPIC, List.of(message("x", "second", true)))));
			LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(100));
			long cancelStart = System.nanoTime();
			boolean cancelled = store.cancel(TOPIC, "x");
			long cancelMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - cancelStart);
			assertThat(cancelled).as("cancelled, after %d ms", cancelMillis).isTrue();
			assertThat(replacing.future).failsWithin(Duration.ZERO)
				.withThrowableThat()
				.havingCause()
				.isInstanceOf(QueryTimeoutException.class)
				.withMessageContaining(NOT_SENT);
			awaitAll(holding);
			assertThat(store.inspect(TOPIC, "x", 100)).isNull();
		}
	}

	/**
	 * As above, but the cancel is made right after the queued send, as in docs/api.md
	 * ("sendAsync(x) followed by cancel(x) cancels x"). The cancel waits for the send's
	 * outcome until its own deadline, the send timeout after it; the send's expiry comes
	 * the send timeout after the send, that is a few microseconds before. The cancel is
	 * then made with its own timeout from then on (it was made with what was left, at
	 * least 1 ms, and failed: "the cancel was not confirmed in time; Redis did not answer
	 * within 1ms (the call may still have run on the server)", 405 ms after it was made;
	 * before 8f611ad it failed too, but cleanly: the send's outcome came after the
	 * cancel's deadline, so the cancel was not made).
	 */
	@Test
	void aCancelRightAfterAQueuedReplicatedSendOfItsIdCancelsIt() throws Exception {
		Duration sendTimeout = Duration.ofMillis(400);
		try (TestStore fixture = TestStore.builder()
			.on(alone.host(), alone.port())
			.confirmReplication(1, Duration.ofSeconds(1))
			.sendTimeout(sendTimeout)
			.build()) {
			RedisMessageStore store = fixture.store();
			failureOf(() -> store.send(TOPIC, List.of(message("x", "first", false))));
			List<Timed> holding = holdTheThreads(store, 4);
			Timed queued = Timed.of("x", () -> store.sendAsync(Map.of(TOPIC, List.of(message("x", "second", true)))));
			long cancelStart = System.nanoTime();
			Throwable failure = failureOf(() -> store.cancel(TOPIC, "x"));
			System.out.printf("cancel right after: %s after %d ms; the send %s after %d ms%n", failure,
					TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - cancelStart), queued.failure(),
					queued.tookMillis());
			awaitAll(holding);
			assertThat(failure).isNull();
			assertThat(store.inspect(TOPIC, "x", 100)).isNull();
		}
	}

	/**
	 * A synchronous send with confirmed replication is written on the caller's thread,
	 * not queued behind asynchronous sends holding the store's threads.
	 */
	@Test
	void aSyncReplicatedSendIsNotQueuedBehindAsyncSendsHoldingTheThreads() throws Exception {
		Duration sendTimeout = Duration.ofMillis(300);
		Duration replicationTimeout = Duration.ofMillis(600);
		try (TestStore fixture = TestStore.builder()
			.on(alone.host(), alone.port())
			.confirmReplication(1, replicationTimeout)
			.sendTimeout(sendTimeout)
			.build()) {
			RedisMessageStore store = fixture.store();
			failureOf(() -> store.send(TOPIC, List.of(message("warm", "w", false))));
			List<Timed> holding = holdTheThreads(store, 12);
			long start = System.nanoTime();
			Throwable failure = failureOf(() -> store.send(TOPIC, List.of(message("sync", "A", false))));
			long took = System.nanoTime() - start;
			assertThat(failure).isInstanceOf(NotReplicatedException.class);
			assertThat(Duration.ofNanos(took)).isLessThan(sendTimeout.plus(replicationTimeout).plus(SLACK));
			assertThat(store.inspect(TOPIC, "sync", 10)).isNotNull();
			awaitAll(holding);
		}
	}

	// ---- 4. Cost ----------------------------------------------------------------------

	/**
	 * 10,000 asynchronous sends without confirmed replication start no timer thread.
	 */
	@Test
	void tenThousandSendsWithoutReplicationStartNoExpiryThread() throws Exception {
		long before = threads(EXPIRY_THREAD);
		try (TestStore fixture = TestStore.builder().sendTimeout(Duration.ofSeconds(10)).build()) {
			RedisMessageStore store = fixture.store();
			store.send(TOPIC, List.of(message("warm", "w", false)));
			long start = System.nanoTime();
			List<CompletableFuture<?>> sent = new ArrayList<>();
			for (int i = 0; i < 10_000; i++) {
				sent.add(store.sendAsync(Map.of(TOPIC, List.of(message("n" + i, "A", false)))));
			}
			CompletableFuture.allOf(sent.toArray(CompletableFuture[]::new)).get(20, TimeUnit.SECONDS);
			System.out.printf("10,000 plain sendAsync: %d ms, expiry threads %d -> %d%n",
					TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start), before, threads(EXPIRY_THREAD));
			assertThat(threads(EXPIRY_THREAD)).isLessThanOrEqualTo(before);
		}
	}

	/**
	 * 2,000 asynchronous sends with a replica that confirms: one timer thread beside the
	 * four, all sends stored.
	 */
	@Test
	void twoThousandReplicatedSendsTakeOneExpiryThread() throws Exception {
		try (TestStore fixture = TestStore.builder()
			.on(primary.host(), primary.port())
			.confirmReplication(1, Duration.ofSeconds(1))
			.sendTimeout(Duration.ofSeconds(10))
			.build()) {
			RedisMessageStore store = fixture.store();
			store.send(TOPIC, List.of(message("warm", "w", false)));
			long before = threads(EXPIRY_THREAD);
			long start = System.nanoTime();
			List<CompletableFuture<?>> sent = new ArrayList<>();
			int most = 0;
			for (int i = 0; i < 2_000; i++) {
				sent.add(store.sendAsync(Map.of(TOPIC, List.of(message("r" + i, "A", false)))));
				if (i % 100 == 0) {
					most = Math.max(most, (int) (threads(EXPIRY_THREAD) - before));
				}
			}
			CompletableFuture.allOf(sent.toArray(CompletableFuture[]::new)).get(20, TimeUnit.SECONDS);
			System.out.printf("2,000 replicated sendAsync: %d ms, most expiry threads added %d%n",
					TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start), most);
			assertThat(most).isEqualTo(1);
		}
	}

	// ---- helpers ------------------------------------------------------------------

	private static NewMessage message(String id, String body, boolean replacing) {
		return new NewMessage(id, true, Duration.ofHours(1).toMillis(), body.getBytes(StandardCharsets.UTF_8),
				replacing);
	}

	private static String kind(Throwable failure) {
		String message = String.valueOf(failure.getMessage());
		return failure.getClass().getSimpleName() + " " + message.substring(0, Math.min(36, message.length()));
	}

	private static String inRedis(TestStore fixture, String id) {
		return String.valueOf(fixture.store().inspect(TOPIC, id, 10) != null);
	}

	private static Throwable failureOf(Runnable call) {
		try {
			call.run();
			return null;
		}
		catch (RuntimeException ex) {
			return ex;
		}
	}

	private static long threads(String prefix) {
		return Thread.getAllStackTraces().keySet().stream().filter((t) -> t.getName().startsWith(prefix)).count();
	}

	private static void awaitAll(List<Timed> timed) {
		await().atMost(Duration.ofSeconds(15))
			.pollInterval(Duration.ofMillis(10))
			.until(() -> timed.stream().allMatch((one) -> one.completed > 0));
	}

	/** The sends that completed later than their bound allows. */
	private static List<String> late(List<Timed> timed, Duration bound) {
		List<String> late = new ArrayList<>();
		for (Timed one : timed) {
			if (one.took() > bound.plus(SLACK).toNanos()) {
				late.add(one.name + " after " + one.tookMillis() + " ms");
			}
		}
		return late;
	}

	/** A send, when it was made and when it completed. */
	private static final class Timed {

		final String name;

		final long started;

		final CompletableFuture<?> future;

		volatile long completed;

		private Timed(String name, long started, CompletableFuture<?> sent) {
			this.name = name;
			this.started = started;
			this.future = sent.whenComplete((result, failure) -> this.completed = System.nanoTime());
		}

		static Timed of(String name, Supplier<CompletableFuture<?>> send) {
			long started = System.nanoTime();
			return new Timed(name, started, send.get());
		}

		long took() {
			return this.completed - this.started;
		}

		long tookMillis() {
			return TimeUnit.NANOSECONDS.toMillis(took());
		}

		Throwable failure() {
			try {
				this.future.get();
				return null;
			}
			catch (ExecutionException ex) {
				return ex.getCause();
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw new IllegalStateException(ex);
			}
		}

	}

	/**
	 * Sends that hold the store's threads (each waits for a replica that never answers):
	 * {@code holding-0}, {@code holding-1}, ...
	 */
	private static List<Timed> holdTheThreads(RedisMessageStore store, int sends) {
		List<Timed> holding = new ArrayList<>();
		for (int i = 0; i < sends; i++) {
			String id = "holding-" + i;
			holding.add(Timed.of(id, () -> store.sendAsync(Map.of(TOPIC, List.of(message(id, "A", false))))));
		}
		return holding;
	}

}

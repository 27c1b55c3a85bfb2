package io.github.delayqueue.runtime.consumer;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntFunction;

import io.github.delayqueue.listener.LatePolicy;
import io.github.delayqueue.listener.ListenerSettings;
import io.github.delayqueue.time.RetryBackoff;
import io.github.delayqueue.metrics.DelayQueueMetrics;
import io.github.delayqueue.runtime.support.OutageLog;
import io.github.delayqueue.store.ClaimResult;
import io.github.delayqueue.store.ClaimedMessage;
import io.github.delayqueue.store.RateLimit;
import io.github.delayqueue.store.WriteGate;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The fetcher against an in-memory fake of the topic store, at moments and with failures
 * a test on Redis cannot choose.
 */
class FetcherTests {

	private final List<Thread> schedulerThreads = new CopyOnWriteArrayList<>();

	private final ScheduledExecutorService scheduler = Executors.newScheduledThreadPool(2, (task) -> {
		Thread thread = new Thread(task);
		thread.setDaemon(true);
		this.schedulerThreads.add(thread);
		return thread;
	});

	@AfterEach
	void stopScheduler() {
		this.scheduler.shutdownNow();
	}

	/**
	 * The claim's reply came before the stop (so the stop has no claim to hand back) and
	 * is handed over after it (so the stop did not find its messages queued): they go
	 * back at once, not when the lease keeper hands back what is unfinished, after the
	 * running handlers (up to the shutdown timeout).
	 */
	@Test
	void messagesOfAClaimAnsweredJustBeforeTheStopAreHandedBackAtOnce() {
		CompletableFuture<ClaimResult> reply = new CompletableFuture<>();
		ClaimingStore store = new ClaimingStore(reply);
		OutageLog outageLog = new OutageLog("test");
		Settlement settlement = new Settlement("orders", store, new AckBatcher("orders", store, this.scheduler));
		LeaseKeeper leases = new LeaseKeeper("orders", store, Duration.ofSeconds(30), Duration.ofMinutes(5), settlement,
				this.scheduler, outageLog);
		List<String> dispatched = new CopyOnWriteArrayList<>();
		Fetcher fetcher = new Fetcher("orders", store, settings(), 1,
				new AdaptivePrefetch(0, 1, Duration.ofSeconds(30)), null, new ClaimPause(), DelayQueueMetrics.NONE,
				this.scheduler, (message, holdsSlot) -> dispatched.add(message.id()), leases, outageLog);
		leases.start();
		fetcher.start();
		await().atMost(Duration.ofSeconds(5)).until(() -> store.claims.get() == 1);
		List<InFlightMessage> givenUp;
		// Holding the lease keeper's monitor stops the reply's handling right before it
		// hands the messages over.
		synchronized (leases) {
			reply.complete(new ClaimResult(List.of(due("m1"), due("m2")), false));
			await().atMost(Duration.ofSeconds(5))
				.until(() -> this.schedulerThreads.stream().anyMatch((t) -> t.getState() == Thread.State.BLOCKED));
			givenUp = fetcher.stop();
		}
		assertThat(givenUp).isEmpty();
		await().atMost(Duration.ofSeconds(2))
			.untilAsserted(() -> assertThat(store.calls).contains("release m1 token", "release m2 token"));
		assertThat(dispatched).isEmpty();
	}

	/**
	 * A dispatcher that throws for a message neither loses the message until its lease
	 * expires nor the handler slot it took: the message goes back at once, the next ones
	 * queued are dispatched, and claims go on.
	 */
	@Test
	void aDispatcherThatThrowsDoesNotWedgeTheListener() {
		ClaimingStore store = new ClaimingStore(
				CompletableFuture.completedFuture(new ClaimResult(List.of(due("m1")), false)));
		store.next = (claim) -> (claim == 2)
				? CompletableFuture.completedFuture(new ClaimResult(List.of(due("m2")), false))
				: new CompletableFuture<>();
		OutageLog outageLog = new OutageLog("test");
		Settlement settlement = new Settlement("orders", store, new AckBatcher("orders", store, this.scheduler));
		LeaseKeeper leases = new LeaseKeeper("orders", store, Duration.ofSeconds(30), Duration.ofMinutes(5), settlement,
				this.scheduler, outageLog);
		List<String> dispatched = new CopyOnWriteArrayList<>();
		Fetcher[] fetcher = new Fetcher[1];
		fetcher[0] = new Fetcher("orders", store, settings(), 1, new AdaptivePrefetch(0, 1, Duration.ofSeconds(30)),
				null, new ClaimPause(), DelayQueueMetrics.NONE, this.scheduler, (message, holdsSlot) -> {
					if (message.id().equals("m1")) {
						throw new IllegalStateException("dispatch failed");
					}
					dispatched.add(message.id());
				}, leases, outageLog);
		leases.start();
		fetcher[0].start();
		await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
			assertThat(store.calls).contains("release m1 token");
			assertThat(dispatched).containsExactly("m2");
		});
		fetcher[0].stop();
	}

	/**
	 * An idle topic costs one call per idle check interval: the broker's promote call,
	 * which reads the ready lists, stands for the consumer's check while it reads them
	 * empty; once it stops telling, the consumer checks itself again.
	 */
	@Test
	void theIdleCheckClaimsNothingWhileTheBrokerReadsTheReadyListsEmpty() {
		ClaimingStore store = new ClaimingStore(CompletableFuture.completedFuture(new ClaimResult(List.of(), false)));
		store.next = (claim) -> CompletableFuture.completedFuture(new ClaimResult(List.of(), false));
		Fetcher fetcher = idleFetcher(store, Duration.ofMillis(300));
		fetcher.start();
		// Seen at once, and the broker reads at once: on a loaded machine a late look let
		// the idle check's 300 ms pass before the broker's first read.
		await().pollInterval(Duration.ofMillis(5)).atMost(Duration.ofSeconds(5)).until(() -> store.claims.get() == 1);
		ScheduledFuture<?> broker = this.scheduler
			.scheduleAtFixedRate(() -> fetcher.readyListsRead(System.nanoTime(), false), 0, 100, TimeUnit.MILLISECONDS);
		await().during(Duration.ofMillis(1500)).atMost(Duration.ofSeconds(3)).until(() -> store.claims.get() == 1);
		broker.cancel(false);
		await().atMost(Duration.ofSeconds(5)).until(() -> store.claims.get() > 1);
		fetcher.stop();
	}

	/**
	 * A wake-up signal that was lost costs no longer a wait than before: the broker's
	 * next read that finds an id waiting claims it, without waiting for the idle check.
	 */
	@Test
	void aBrokerReadThatFindsAnIdWaitingClaimsAtOnceWhileTheClaimsAreIdle() {
		ClaimingStore store = new ClaimingStore(CompletableFuture.completedFuture(new ClaimResult(List.of(), false)));
		store.next = (claim) -> CompletableFuture.completedFuture(new ClaimResult(List.of(), false));
		Fetcher fetcher = idleFetcher(store, Duration.ofSeconds(4));
		fetcher.start();
		await().atMost(Duration.ofSeconds(5)).until(() -> store.claims.get() == 1);
		long answered = System.nanoTime();
		fetcher.readyListsRead(System.nanoTime(), true);
		assertThat(store.claims.get()).as("within half an idle check interval of the last claim").isEqualTo(1);
		await().atMost(Duration.ofSeconds(5))
			.until(() -> System.nanoTime() - answered > TimeUnit.MILLISECONDS.toNanos(2100));
		fetcher.readyListsRead(System.nanoTime(), true);
		await().atMost(Duration.ofMillis(1500)).until(() -> store.claims.get() == 2);
		fetcher.stop();
	}

	private Fetcher idleFetcher(ClaimingStore store, Duration idleCheckInterval) {
		OutageLog outageLog = new OutageLog("test");
		Settlement settlement = new Settlement("orders", store, new AckBatcher("orders", store, this.scheduler));
		LeaseKeeper leases = new LeaseKeeper("orders", store, Duration.ofSeconds(30), Duration.ofMinutes(5), settlement,
				this.scheduler, outageLog);
		leases.start();
		ListenerSettings settings = new ListenerSettings(1, 0, 3, Duration.ofSeconds(30),
				new RetryBackoff(Duration.ofSeconds(1), 2.0, Duration.ofMinutes(1)), idleCheckInterval,
				Duration.ofSeconds(1), Duration.ofMinutes(5), LatePolicy.DELIVER, Duration.ofMinutes(1));
		return new Fetcher("orders", store, settings, 1, new AdaptivePrefetch(0, 1, Duration.ofSeconds(30)), null,
				new ClaimPause(), DelayQueueMetrics.NONE, this.scheduler, (message, holdsSlot) -> {
				}, leases, outageLog);
	}

	private static ListenerSettings settings() {
		return new ListenerSettings(1, 0, 3, Duration.ofSeconds(30),
				new RetryBackoff(Duration.ofSeconds(1), 2.0, Duration.ofMinutes(1)), Duration.ofMinutes(1),
				Duration.ofSeconds(1), Duration.ofMinutes(5), LatePolicy.DELIVER, Duration.ofMinutes(1));
	}

	private static ClaimedMessage due(String id) {
		Instant now = Instant.now();
		byte[] stored = ("0:" + now.toEpochMilli() + ":x").getBytes(StandardCharsets.US_ASCII);
		return new ClaimedMessage(id, "token", 0, now, stored);
	}

	/**
	 * Answers the first claim with a given reply, and the later ones as {@link #next}
	 * says: by default, never.
	 */
	static class ClaimingStore extends DeliveryPoliciesTests.RecordingTopicStore {

		final AtomicInteger claims = new AtomicInteger();

		volatile IntFunction<CompletableFuture<ClaimResult>> next = (claim) -> new CompletableFuture<>();

		private final CompletableFuture<ClaimResult> first;

		ClaimingStore(CompletableFuture<ClaimResult> first) {
			this.first = first;
		}

		@Override
		public CompletableFuture<ClaimResult> claim(String consumer, String token, int limit, int earlyLimit,
				Duration lease, @Nullable RateLimit rateLimit, int groupConcurrency, WriteGate gate) {
			int claim = this.claims.incrementAndGet();
			return (claim == 1) ? this.first : this.next.apply(claim);
		}

	}

}

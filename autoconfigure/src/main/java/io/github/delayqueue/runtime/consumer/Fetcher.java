package io.github.delayqueue.runtime.consumer;

import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.PriorityQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import io.github.delayqueue.listener.ListenerSettings;
import io.github.delayqueue.metrics.DelayQueueMetrics;
import io.github.delayqueue.runtime.support.OutageLog;
import io.github.delayqueue.runtime.support.Replies;
import io.github.delayqueue.runtime.support.TopicRepair;
import io.github.delayqueue.store.ClaimResult;
import io.github.delayqueue.store.RateLimit;
import io.github.delayqueue.store.RedisMessageStore;
import io.github.delayqueue.store.TopicStore;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * Claims a topic's ready messages for its consumer, as many as it has free slots
 * ({@code concurrency + prefetch}, or {@code concurrency × maxBatchSize + prefetch} for a
 * batch listener; at most {@value #MAX_CLAIM} a claim), and hands them over: a due
 * message at once, one the broker made ready ahead of its due time (the lookahead) when
 * it falls due by the Redis clock, holding it meanwhile without a slot. It has no thread
 * of its own, and no thread waits for Redis: a claim is sent from the shared scheduler
 * when something may have become claimable (a wake-up signal, a slot freed, the idle
 * check), its reply is handled there, and the next claim follows at once while messages
 * keep coming. A claim that fails is sent again, with the same lease token, after a
 * backoff: it returns what it leased if it had run. An {@link Error} stops it for good,
 * and the topic's listener is then reported as stopped. For a rate-limited topic it
 * claims only for free handler slots and nothing early, so that a delivery starts when
 * its claim takes its place in the limit's window; when the limit holds messages back, it
 * claims again when the window has room, not before.
 */
final class Fetcher {

	private static final Log logger = LogFactory.getLog(Fetcher.class);

	/** Most messages held here until their due time. */
	static final int MAX_HELD = 1000;

	/**
	 * Most messages one claim asks for: the claim script passes them to Lua's
	 * {@code unpack}, which fails for a few thousand.
	 */
	static final int MAX_CLAIM = 1000;

	private static final long MAX_OUTAGE_BACKOFF_MILLIS = 5_000;

	private final String topic;

	private final String consumerId = RedisMessageStore.newToken();

	private final TopicStore store;

	private final ListenerSettings settings;

	private final @Nullable RateLimit rateLimit;

	private final DelayQueueMetrics metrics;

	private final ScheduledExecutorService scheduler;

	private final Dispatcher dispatcher;

	private final LeaseKeeper leases;

	private final OutageLog outageLog;

	private final AtomicInteger freeSlots;

	private final AtomicInteger held = new AtomicInteger();

	/** Messages held until their due time, earliest first; guards the fields below it. */
	private final PriorityQueue<HeldMessage> heldMessages = new PriorityQueue<>(
			Comparator.comparingLong(HeldMessage::dueNanos).thenComparingLong(HeldMessage::order));

	private @Nullable ScheduledFuture<?> heldRelease;

	private long heldReleaseNanos;

	private long holds;

	/**
	 * When a slow-down asked by a handler, or the wait for room in the rate limit's
	 * window, ends ({@link System#nanoTime()}).
	 */
	private final AtomicLong pausedUntilNanos = new AtomicLong(System.nanoTime());

	private final AtomicBoolean requested = new AtomicBoolean();

	private final AtomicBoolean active = new AtomicBoolean();

	/** Guards {@link #claimInProgress} and the decision to send a claim while running. */
	private final Object claimLock = new Object();

	/**
	 * Completes once the claim on its way has put what it leased under the lease keeper.
	 */
	private @Nullable CompletableFuture<Void> claimInProgress;

	private volatile boolean running;

	private volatile boolean dead;

	private @Nullable ScheduledFuture<?> nextCheck;

	/**
	 * A claim that failed, to be sent again as it was; only touched by the active fetch.
	 */
	private @Nullable ClaimRequest failed;

	private long claims;

	private long outageBackoffMillis;

	/**
	 * Creates a fetcher.
	 * @param slots how many messages it may have in hand, waiting or being handled: the
	 * concurrency (times the maximum batch size for a batch listener) plus the prefetch
	 * @param rateLimit the rate limit of the topic (this partition's share), or
	 * {@code null} for none
	 * @param metrics where claims held back by the rate limit are counted
	 */
	Fetcher(String topic, TopicStore store, ListenerSettings settings, int slots, @Nullable RateLimit rateLimit,
			DelayQueueMetrics metrics, ScheduledExecutorService scheduler, Dispatcher dispatcher, LeaseKeeper leases,
			OutageLog outageLog) {
		this.topic = topic;
		this.store = store;
		this.settings = settings;
		this.rateLimit = rateLimit;
		this.metrics = metrics;
		this.scheduler = scheduler;
		this.dispatcher = dispatcher;
		this.leases = leases;
		this.outageLog = outageLog;
		this.freeSlots = new AtomicInteger(slots);
	}

	void start() {
		this.running = true;
		request();
	}

	/**
	 * Stops claiming; a claim on its way finishes (see
	 * {@link #awaitClaimInProgress(long)}).
	 */
	void stop() {
		this.running = false;
		synchronized (this) {
			if (this.nextCheck != null) {
				this.nextCheck.cancel(false);
			}
		}
		synchronized (this.heldMessages) {
			if (this.heldRelease != null) {
				this.heldRelease.cancel(false);
			}
		}
	}

	/**
	 * @return whether a claim was sent and its reply is not yet handled
	 */
	boolean isClaiming() {
		synchronized (this.claimLock) {
			return this.claimInProgress != null && !this.claimInProgress.isDone();
		}
	}

	/**
	 * Waits for a claim on its way, so that what it claims is handed back with the rest.
	 * @param deadlineNanos the {@link System#nanoTime()} to wait until at most
	 */
	void awaitClaimInProgress(long deadlineNanos) {
		CompletableFuture<Void> claim;
		synchronized (this.claimLock) {
			claim = this.claimInProgress;
		}
		if (claim == null) {
			return;
		}
		try {
			claim.get(Math.max(0, deadlineNanos - System.nanoTime()), TimeUnit.NANOSECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
		catch (ExecutionException | TimeoutException ex) {
			// Waited as long as stopping may: what it leases comes back when its lease
			// expires.
		}
	}

	/**
	 * @return whether it is claiming: started, not stopped, and not stopped by an error
	 */
	boolean isAlive() {
		return this.running && !this.dead;
	}

	/**
	 * Something may have become claimable: a wake-up signal, or messages made ready here.
	 */
	void wake() {
		request();
	}

	/**
	 * Claims nothing new for a while: a handler asked to slow down. A pause already
	 * longer stays.
	 * @param pause how long
	 */
	void pauseFor(Duration pause) {
		long until = System.nanoTime() + pause.toNanos();
		this.pausedUntilNanos.accumulateAndGet(until, (current, next) -> (next - current > 0) ? next : current);
	}

	/**
	 * A handler finished messages that held slots.
	 * @param count how many
	 */
	void slotsFreed(int count) {
		this.freeSlots.addAndGet(count);
		request();
	}

	private void request() {
		if (!this.running) {
			return;
		}
		this.requested.set(true);
		if (this.active.compareAndSet(false, true)) {
			submit();
		}
	}

	private void submit() {
		try {
			this.scheduler.execute(this::fetch);
		}
		catch (RejectedExecutionException ex) {
			// The runtime is stopping.
			this.active.set(false);
		}
	}

	private void fetch() {
		try {
			while (this.running && !this.dead && this.requested.getAndSet(false)) {
				if (sendClaim()) {
					// The claim's reply continues this fetch.
					return;
				}
			}
		}
		catch (RuntimeException ex) {
			logger.error("Topic '" + this.topic + "': claiming failed unexpectedly, trying again", ex);
			checkAgainIn(MAX_OUTAGE_BACKOFF_MILLIS);
		}
		endFetch();
	}

	private void endFetch() {
		this.active.set(false);
		if (this.running && !this.dead && this.requested.get() && this.active.compareAndSet(false, true)) {
			submit();
		}
	}

	/**
	 * Sends a claim for the free handler slots, or again the one that failed.
	 * @return whether a claim went out; its reply is handled by {@link #claimed} on the
	 * scheduler
	 */
	private boolean sendClaim() {
		long pausedFor = this.pausedUntilNanos.get() - System.nanoTime();
		if (pausedFor > 0) {
			checkAgainIn(Math.max(1, TimeUnit.NANOSECONDS.toMillis(pausedFor)));
			return false;
		}
		ClaimRequest request = this.failed;
		if (request == null) {
			int wanted = Math.min(MAX_CLAIM, this.freeSlots.getAndUpdate((free) -> free - Math.min(free, MAX_CLAIM)));
			if (wanted == 0) {
				return false;
			}
			int earlyLimit = (this.rateLimit != null) ? 0 : Math.max(0, MAX_HELD - this.held.get());
			request = new ClaimRequest(this.consumerId + "." + (++this.claims), wanted, earlyLimit);
		}
		CompletableFuture<Void> inProgress = new CompletableFuture<>();
		synchronized (this.claimLock) {
			if (!this.running) {
				if (this.failed == null) {
					this.freeSlots.addAndGet(request.wanted());
				}
				return false;
			}
			this.claimInProgress = inProgress;
		}
		ClaimRequest sent = request;
		Replies.send(
				() -> this.store.claim(this.consumerId, sent.token(), sent.wanted(), sent.earlyLimit(),
						this.settings.visibilityTimeout(), this.rateLimit),
				this.scheduler, (result, failure) -> claimed(sent, result, failure, inProgress), () -> {
					// Stopping: the claim's leases expire and its messages are delivered
					// again.
					inProgress.complete(null);
					this.active.set(false);
				});
		return true;
	}

	private void claimed(ClaimRequest request, @Nullable ClaimResult result, @Nullable Throwable failure,
			CompletableFuture<Void> inProgress) {
		try {
			if (failure instanceof Error error) {
				this.dead = true;
				logger.error("Topic '" + this.topic + "': the listener stopped claiming after an error; restart or"
						+ " resume it to consume again", error);
				inProgress.complete(null);
				this.active.set(false);
				return;
			}
			if (failure != null || result == null) {
				// The claim may have run and lost its reply: the same request (same
				// token) goes again
				// and returns what it leased then. Its slots stay taken meanwhile.
				inProgress.complete(null);
				this.failed = request;
				TopicRepair.failed(this.store,
						(failure != null) ? Replies.rethrow(failure) : new IllegalStateException("No claim result"),
						this.outageLog);
				this.outageBackoffMillis = Math.min(MAX_OUTAGE_BACKOFF_MILLIS,
						Math.max(100, this.outageBackoffMillis * 2));
				checkAgainIn(this.outageBackoffMillis);
				endFetch();
				return;
			}
			List<InFlightMessage> claimed = result.messages().stream().map(InFlightMessage::new).toList();
			claimed.forEach(this.leases::keep);
			inProgress.complete(null);
			this.failed = null;
			this.outageLog.succeeded();
			this.outageBackoffMillis = 0;
			int due = handOver(claimed);
			this.freeSlots.addAndGet(request.wanted() - due);
			if (!result.rateLimitedFor().isZero()) {
				if (logger.isDebugEnabled()) {
					logger
						.debug("Topic '" + this.topic + "': the rate limit holds due messages back, claiming again in "
								+ result.rateLimitedFor());
				}
				this.metrics.rateLimited(this.topic);
				pauseFor(result.rateLimitedFor());
				this.requested.set(true);
			}
			else if (result.more() || due == request.wanted()) {
				this.requested.set(true);
			}
			else {
				checkAgainIn(this.settings.idleCheckInterval().toMillis());
			}
		}
		catch (RuntimeException ex) {
			inProgress.complete(null);
			logger.error("Topic '" + this.topic + "': claiming failed unexpectedly, trying again", ex);
			checkAgainIn(MAX_OUTAGE_BACKOFF_MILLIS);
		}
		fetch();
	}

	/**
	 * @return how many of the messages were due, and so took a slot
	 */
	private int handOver(List<InFlightMessage> claimed) {
		int due = 0;
		for (InFlightMessage message : claimed) {
			long dueInNanos = message.claimed().dueIn().toNanos();
			if (dueInNanos > 0) {
				hold(message, dueInNanos);
			}
			else {
				due++;
				this.dispatcher.dispatch(message, true);
			}
		}
		return due;
	}

	/**
	 * Keeps a message the broker made ready before its due time until then; it is in
	 * flight here meanwhile (leased, extended, handed back at shutdown) but takes no
	 * handler slot. Held messages are handed over in due order, and in claim order within
	 * the same due time, by one task at a time.
	 */
	private void hold(InFlightMessage message, long dueInNanos) {
		synchronized (this.heldMessages) {
			this.heldMessages.add(new HeldMessage(System.nanoTime() + dueInNanos, this.holds++, message));
			this.held.incrementAndGet();
			HeldMessage head = this.heldMessages.peek();
			if (head != null && (this.heldRelease == null || head.dueNanos() - this.heldReleaseNanos < 0)) {
				scheduleRelease(head.dueNanos());
			}
		}
	}

	private void releaseDueHeldMessages() {
		boolean wasFull;
		synchronized (this.heldMessages) {
			this.heldRelease = null;
			wasFull = this.held.get() >= MAX_HELD;
			long now = System.nanoTime();
			HeldMessage head;
			while (this.running && (head = this.heldMessages.peek()) != null && head.dueNanos() - now <= 0) {
				this.heldMessages.poll();
				this.held.decrementAndGet();
				this.dispatcher.dispatch(head.message(), false);
			}
			// Else stopping: the lease keeper hands the held messages back.
			head = this.heldMessages.peek();
			if (this.running && head != null) {
				scheduleRelease(head.dueNanos());
			}
		}
		if (wasFull) {
			request();
		}
	}

	private void scheduleRelease(long dueNanos) {
		if (this.heldRelease != null) {
			this.heldRelease.cancel(false);
		}
		try {
			this.heldRelease = this.scheduler.schedule(this::releaseDueHeldMessages,
					Math.max(0, dueNanos - System.nanoTime()), TimeUnit.NANOSECONDS);
			this.heldReleaseNanos = dueNanos;
		}
		catch (RejectedExecutionException ex) {
			// Stopping: the lease keeper hands the held messages back.
			this.heldRelease = null;
		}
	}

	private synchronized void checkAgainIn(long millis) {
		if (!this.running) {
			return;
		}
		if (this.nextCheck != null) {
			this.nextCheck.cancel(false);
		}
		try {
			this.nextCheck = this.scheduler.schedule(this::request, millis, TimeUnit.MILLISECONDS);
		}
		catch (RejectedExecutionException ex) {
			// The runtime is stopping.
		}
	}

	/** Hands claimed messages to handlers. */
	interface Dispatcher {

		/**
		 * Runs the message's handler.
		 * @param message the message
		 * @param holdsSlot whether it took a handler slot, to be freed when its handler
		 * is done
		 */
		void dispatch(InFlightMessage message, boolean holdsSlot);

	}

	/** A message held until its due time, by this JVM's clock. */
	private record HeldMessage(long dueNanos, long order, InFlightMessage message) {
	}

	/** One claim request: sent again with the same token until it gets an answer. */
	private record ClaimRequest(String token, int wanted, int earlyLimit) {
	}

}

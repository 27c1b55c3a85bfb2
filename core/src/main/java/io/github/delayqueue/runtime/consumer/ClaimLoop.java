package io.github.delayqueue.runtime.consumer;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;

import io.github.delayqueue.listener.ListenerSettings;
import io.github.delayqueue.metrics.DelayQueueMetrics;
import io.github.delayqueue.runtime.support.Nanoseconds;
import io.github.delayqueue.runtime.support.OutageLog;
import io.github.delayqueue.runtime.support.Replies;
import io.github.delayqueue.runtime.support.TopicRepair;
import io.github.delayqueue.store.ClaimResult;
import io.github.delayqueue.store.RateLimit;
import io.github.delayqueue.store.StoreCalls;
import io.github.delayqueue.store.TopicStore;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.util.backoff.BackOffExecution;

/**
 * Sends a consumer's claims, one at a time, and takes their replies. It has no thread of
 * its own, and no thread waits for Redis: a claim is sent from the shared scheduler when
 * something may have become claimable (a wake-up signal, a slot freed, the idle check),
 * its reply is handled there, and the next claim follows at once while messages keep
 * coming. A claim that fails is sent again, with the same lease token, after a backoff:
 * it returns what it leased if it had run. An {@link Error} stops it for good, and the
 * topic's listener is then reported as stopped. When the rate limit of the topic holds
 * messages back, it claims again when the window has room, not before; nor while a
 * handler of the topic asked for a slow-down. While nothing comes, it checks the ready
 * lists every {@link ListenerSettings#idleCheckInterval() idle check interval}, in case a
 * wake-up signal was lost, unless the partition's broker here read them empty lately:
 * then the broker's call, which it makes anyway, was the check, and an idle topic costs
 * Redis one call per interval instead of two. A broker's read that finds an id waiting
 * while the claims are idle claims at once, at most every half interval. Thread-safe: the
 * scheduler calls in from several threads, and one of them at a time runs the claims (the
 * active fetch).
 */
final class ClaimLoop {

	/** The longest wait before a claim that follows one that took nothing. */
	private static final long MAX_EMPTY_FOLLOW_UP_MILLIS = 256;

	/** The doublings that reach {@link #MAX_EMPTY_FOLLOW_UP_MILLIS} from 1 ms. */
	private static final int EMPTY_FOLLOW_UP_DOUBLINGS = 8;

	/** Logs as the fetcher, as all of its parts do: one category to set. */
	private static final Log logger = LogFactory.getLog(Fetcher.class);

	private final String topic;

	private final String consumerId;

	private final TopicStore store;

	private final ListenerSettings settings;

	private final @Nullable RateLimit rateLimit;

	private final DelayQueueMetrics metrics;

	private final ScheduledExecutorService scheduler;

	private final LeaseKeeper leases;

	private final OutageLog outageLog;

	private final BooleanSupplier running;

	private final ClaimSlots slots;

	private final UnansweredClaim unanswered;

	private final DispatchQueue dispatchQueue;

	/** A slow-down asked by a handler of the topic, in any of its partitions. */
	private final ClaimPause slowDown;

	/**
	 * When the wait for room in this partition's rate limit window ends
	 * ({@link System#nanoTime()}).
	 */
	private final AtomicLong rateLimitedUntilNanos = new AtomicLong(System.nanoTime());

	private final AtomicBoolean requested = new AtomicBoolean();

	private final long idleCheckIntervalNanos;

	/** When the reply of the last claim was handled ({@link System#nanoTime()}). */
	private volatile long lastClaimAnsweredNanos = System.nanoTime();

	/** What the broker's last promote call read of the ready lists, if any. */
	private volatile @Nullable ReadyListsRead lastRead;

	/** Whether the next check is the idle check: the last claim found nothing more. */
	private volatile boolean idle;

	/**
	 * The claims in a row that took nothing but said more may be waiting: each waits
	 * twice as long before the next, up to {@value #MAX_EMPTY_FOLLOW_UP_MILLIS} ms.
	 * Touched only by the active fetch.
	 */
	private int emptyFollowUps;

	private final AtomicBoolean active = new AtomicBoolean();

	private volatile boolean dead;

	/** Guarded by this object's monitor. */
	private @Nullable ScheduledFuture<?> nextCheck;

	/**
	 * A claim that failed, to be sent again as it was; only touched by the active fetch.
	 */
	private @Nullable ClaimRequest failed;

	private long claims;

	/** The waits while Redis does not answer; {@code null} while it does. */
	private @Nullable BackOffExecution outage;

	/**
	 * Creates the claims of a consumer.
	 * @param consumerId the consumer the claims are sent for
	 * @param rateLimit the rate limit of the topic (this partition's share), or
	 * {@code null} for none
	 * @param metrics where claims held back by the rate limit are counted
	 * @param running whether the fetcher runs
	 * @param slots how many messages a claim asks for
	 * @param unanswered the record of the claim whose outcome is not known, which the
	 * claims are written through
	 * @param slowDown the topic's pause of claims asked by its handlers, shared by its
	 * partitions
	 * @param dispatchQueue where the claimed messages are handed over
	 */
	ClaimLoop(String topic, String consumerId, TopicStore store, ListenerSettings settings,
			@Nullable RateLimit rateLimit, DelayQueueMetrics metrics, ScheduledExecutorService scheduler,
			LeaseKeeper leases, OutageLog outageLog, BooleanSupplier running, ClaimSlots slots,
			UnansweredClaim unanswered, ClaimPause slowDown, DispatchQueue dispatchQueue) {
		this.topic = topic;
		this.consumerId = consumerId;
		this.store = store;
		this.settings = settings;
		this.rateLimit = rateLimit;
		this.metrics = metrics;
		this.scheduler = scheduler;
		this.leases = leases;
		this.outageLog = outageLog;
		this.running = running;
		this.slots = slots;
		this.unanswered = unanswered;
		this.slowDown = slowDown;
		this.dispatchQueue = dispatchQueue;
		this.idleCheckIntervalNanos = Nanoseconds.of(settings.idleCheckInterval());
	}

	/**
	 * @return whether an error stopped it for good
	 */
	boolean isDead() {
		return this.dead;
	}

	/**
	 * A handler finished messages that held slots.
	 * @param count how many
	 */
	void slotsFreed(int count) {
		this.slots.giveBack(count);
		request();
	}

	/**
	 * Slots taken by a handler besides those of its messages (see
	 * {@link ClaimSlots#reserve}), freed with {@link #slotsFreed}.
	 * @param count how many
	 */
	void slotsReserved(int count) {
		this.slots.reserve(count);
	}

	/**
	 * Something may have become claimable: claims, unless the fetcher stopped.
	 */
	void request() {
		if (!this.running.getAsBoolean()) {
			return;
		}
		this.requested.set(true);
		if (this.active.compareAndSet(false, true)) {
			submit();
		}
	}

	/**
	 * The partition's broker here read its ready lists: while the claims are idle, an id
	 * waiting there (read after the last claim was answered) is claimed, at most every
	 * half idle check interval; ready lists read empty lately make the idle check claim
	 * nothing.
	 * @param sentNanos when the broker's call was sent ({@link System#nanoTime()})
	 * @param waiting whether a ready list held an id after the call
	 */
	void readyListsRead(long sentNanos, boolean waiting) {
		this.lastRead = new ReadyListsRead(sentNanos, waiting);
		long lastAnswered = this.lastClaimAnsweredNanos;
		if (waiting && this.idle && sentNanos - lastAnswered > 0
				&& System.nanoTime() - lastAnswered >= this.idleCheckIntervalNanos / 2) {
			request();
		}
	}

	/**
	 * The idle check: claims, unless the broker's latest read found the ready lists
	 * empty, less than one and a quarter intervals ago (a quarter for the broker's round
	 * trip and scheduling). Whatever becomes ready after that read, the broker's next
	 * read finds and claims at once (see {@link #readyListsRead}); if the broker reads no
	 * more within that time (a {@code max-sleep} longer than the interval, a slow or
	 * failing promote call), the next idle check, due when that read turns stale, claims.
	 * So a message whose wake-up signal was lost waits at most about one and a quarter
	 * intervals, however long the broker sleeps.
	 */
	private void idleCheck() {
		ReadyListsRead read = this.lastRead;
		long now = System.nanoTime();
		long staleIn = (read != null)
				? read.sentNanos() + this.idleCheckIntervalNanos + this.idleCheckIntervalNanos / 4 - now : 0;
		if (read != null && !read.waiting() && staleIn > 0) {
			if (logger.isTraceEnabled()) {
				logger.trace("Topic '" + this.topic + "': the broker read the ready lists empty "
						+ TimeUnit.NANOSECONDS.toMillis(now - read.sentNanos()) + " ms ago, no idle claim");
			}
			synchronized (this) {
				// Unless a claim went out or another check was scheduled since
				// (the rate limit's, a slow-down's): that one stays.
				if (this.idle) {
					schedule(this::idleCheck, TimeUnit.NANOSECONDS.toMillis(staleIn) + 1, true);
				}
			}
			return;
		}
		request();
	}

	/** At the stop, once the fetcher no longer runs: cancels the next check. */
	synchronized void stop() {
		if (this.nextCheck != null) {
			this.nextCheck.cancel(false);
		}
	}

	/**
	 * Claims nothing new until the rate limit's window has room. A wait already longer
	 * stays.
	 * @param wait how long
	 */
	private void waitForRoom(Duration wait) {
		long until = System.nanoTime() + Nanoseconds.of(wait);
		this.rateLimitedUntilNanos.accumulateAndGet(until, (current, next) -> (next - current > 0) ? next : current);
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
			while (this.running.getAsBoolean() && !this.dead && this.requested.getAndSet(false)) {
				if (sendClaim()) {
					// The claim's reply continues this fetch.
					return;
				}
			}
		}
		catch (RuntimeException ex) {
			logger.error("Topic '" + this.topic + "': claiming failed unexpectedly, trying again", ex);
			checkAgainIn(StoreCalls.OUTAGE_WAITS.maxInterval().toMillis());
		}
		endFetch();
	}

	private void endFetch() {
		this.active.set(false);
		if (this.running.getAsBoolean() && !this.dead && this.requested.get()
				&& this.active.compareAndSet(false, true)) {
			submit();
		}
	}

	/**
	 * Sends a claim for the free slots, or again the one that failed.
	 * @return whether a claim went out; its reply is handled by {@link #claimed} on the
	 * scheduler
	 */
	private boolean sendClaim() {
		long pausedFor = Math.max(this.slowDown.remainingNanos(), this.rateLimitedUntilNanos.get() - System.nanoTime());
		if (pausedFor > 0) {
			checkAgainIn(Math.max(1, TimeUnit.NANOSECONDS.toMillis(pausedFor)));
			return false;
		}
		ClaimRequest request = this.failed;
		if (request == null) {
			int wanted = this.slots.take();
			if (wanted == 0) {
				return false;
			}
			request = new ClaimRequest(this.consumerId + "." + (++this.claims), wanted, this.slots.earlyLimit());
		}
		CompletableFuture<Void> inProgress = new CompletableFuture<>();
		if (!this.unanswered.sending(request, inProgress)) {
			if (this.failed == null) {
				this.slots.giveBack(request.wanted());
			}
			return false;
		}
		ClaimRequest sent = request;
		this.idle = false;
		Replies.send(
				() -> this.store.claim(this.consumerId, sent.token(), sent.wanted(), sent.earlyLimit(),
						this.settings.visibilityTimeout(), this.rateLimit, this.settings.groupConcurrency(),
						this.settings.groupWeights(), this.settings.groupRateLimit(), this.unanswered),
				this.scheduler, (result, failure) -> claimed(sent, result, failure, inProgress), (result, failure) -> {
					// The runtime stopped, so the claim was handed back at the stop: what
					// its reply names goes back too.
					this.unanswered.handBackLate(result);
					inProgress.complete(null);
					this.active.set(false);
				});
		return true;
	}

	private void claimed(ClaimRequest request, @Nullable ClaimResult result, @Nullable Throwable failure,
			CompletableFuture<Void> inProgress) {
		try {
			if (this.unanswered.handedBackAtStop(request, (failure == null) ? result : null)) {
				this.unanswered.handBackLate(result);
				inProgress.complete(null);
				endFetch();
				return;
			}
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
				if (this.outage == null) {
					this.outage = StoreCalls.OUTAGE.start();
				}
				checkAgainIn(this.outage.nextBackOff());
				endFetch();
				return;
			}
			this.lastClaimAnsweredNanos = System.nanoTime();
			List<InFlightMessage> claimed = InFlightMessage.of(result);
			// Not kept once the lease keeper stopped: then handed back.
			boolean kept = this.leases.keep(claimed);
			inProgress.complete(null);
			this.failed = null;
			this.outageLog.succeeded();
			this.outage = null;
			int due = kept ? this.dispatchQueue.handOver(claimed) : 0;
			this.slots.claimed(request.wanted(), due);
			if (!result.rateLimitedFor().isZero()) {
				if (logger.isDebugEnabled()) {
					logger
						.debug("Topic '" + this.topic + "': the rate limit holds due messages back, claiming again in "
								+ result.rateLimitedFor());
				}
				this.metrics.rateLimited(this.topic);
				waitForRoom(result.rateLimitedFor());
				this.requested.set(true);
			}
			else if (result.messages().isEmpty() && result.more()
					&& (mayHaveMore(request, result, due) || this.settings.groupConcurrency() > 0)) {
				// It took nothing, but more may be waiting past what it read: groups at
				// their limit or paused filled the part of the rotation it read (it
				// parked
				// them), or ids not yet due, or left by cancels, fill the lists' head.
				// Again shortly, backing off while that lasts (1, 2, 4 ... 256 ms), so
				// that
				// ids not yet due cost a few calls a second, not one a millisecond. (A
				// listener with a group concurrency claims nothing early: its held
				// messages are never full.)
				checkAgainIn(Math.min(1L << this.emptyFollowUps, MAX_EMPTY_FOLLOW_UP_MILLIS));
				this.emptyFollowUps = Math.min(this.emptyFollowUps + 1, EMPTY_FOLLOW_UP_DOUBLINGS);
			}
			else if (mayHaveMore(request, result, due)) {
				this.emptyFollowUps = 0;
				this.requested.set(true);
			}
			else {
				this.emptyFollowUps = 0;
				checkWhenIdle(result.groupPauseEndsIn());
			}
		}
		catch (RuntimeException ex) {
			inProgress.complete(null);
			logger.error("Topic '" + this.topic + "': claiming failed unexpectedly, trying again", ex);
			checkAgainIn(StoreCalls.OUTAGE_WAITS.maxInterval().toMillis());
		}
		fetch();
	}

	/**
	 * Tells whether a claim should follow at once: the claim took all the due messages it
	 * asked for, or all the early ones, or says more may be waiting. Not when it could
	 * take no early message because the held ones are full and it took nothing due: the
	 * release of the held messages claims again.
	 */
	private boolean mayHaveMore(ClaimRequest request, ClaimResult result, int due) {
		boolean tookAllEarly = request.earlyLimit() > 0 && result.messages().size() - due >= request.earlyLimit();
		boolean heldFull = request.earlyLimit() == 0 && this.rateLimit == null;
		return due == request.wanted() || tookAllEarly || (result.more() && (due > 0 || !heldFull));
	}

	private void checkAgainIn(long millis) {
		schedule(this::request, millis, false);
	}

	private void checkWhenIdle() {
		schedule(this::idleCheck, this.settings.idleCheckInterval().toMillis(), true);
	}

	/**
	 * Waits for a signal, or claims when a group's pause ends if that comes before the
	 * idle check (nothing signals a pause's end, nor the end of a strict retry's wait):
	 * so a group's messages wait for their pause, not for the idle check too.
	 * @param groupPauseEndsIn how long until the first group pause ends, zero for none
	 */
	private void checkWhenIdle(Duration groupPauseEndsIn) {
		long millis = groupPauseEndsIn.toMillis();
		if (millis > 0 && millis < this.settings.idleCheckInterval().toMillis()) {
			if (logger.isDebugEnabled()) {
				logger.debug("Topic '" + this.topic + "': a group's pause ends in " + millis + " ms, claiming then");
			}
			schedule(this::request, millis + 1, true);
		}
		else {
			checkWhenIdle();
		}
	}

	private synchronized void schedule(Runnable check, long millis, boolean idleCheck) {
		if (!this.running.getAsBoolean()) {
			return;
		}
		if (this.nextCheck != null) {
			this.nextCheck.cancel(false);
		}
		this.idle = idleCheck;
		try {
			this.nextCheck = this.scheduler.schedule(check, millis, TimeUnit.MILLISECONDS);
		}
		catch (RejectedExecutionException ex) {
			// The runtime is stopping.
		}
	}

	/**
	 * What a promote call of the broker read of the ready lists.
	 *
	 * @param sentNanos when it was sent
	 * @param waiting whether a ready list held an id
	 */
	private record ReadyListsRead(long sentNanos, boolean waiting) {
	}

}

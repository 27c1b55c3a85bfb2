package io.github.delayqueue.runtime.consumer;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.PriorityQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import io.github.delayqueue.listener.ListenerSettings;
import io.github.delayqueue.metrics.DelayQueueMetrics;
import io.github.delayqueue.runtime.consumer.Settlement.HandBack;
import io.github.delayqueue.runtime.support.Nanoseconds;
import io.github.delayqueue.runtime.support.OutageLog;
import io.github.delayqueue.runtime.support.Replies;
import io.github.delayqueue.runtime.support.TopicRepair;
import io.github.delayqueue.store.ClaimResult;
import io.github.delayqueue.store.ClaimedMessage;
import io.github.delayqueue.store.RateLimit;
import io.github.delayqueue.store.LeaseTokens;
import io.github.delayqueue.store.TopicStore;
import io.github.delayqueue.store.StoreCalls;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.util.backoff.BackOffExecution;

/**
 * Claims a topic's ready messages for its consumer, as many as it has free slots (the
 * handler slots, {@code concurrency} or {@code concurrency × maxBatchSize} for a batch
 * listener, plus the prefetch of the moment, see {@link AdaptivePrefetch}; at most
 * {@value #MAX_CLAIM} a claim), and hands them over: a due message at once, one the
 * broker made ready ahead of its due time (the lookahead) when it falls due by the Redis
 * clock, holding it meanwhile without a slot. It has no thread of its own, and no thread
 * waits for Redis: a claim is sent from the shared scheduler when something may have
 * become claimable (a wake-up signal, a slot freed, the idle check), its reply is handled
 * there, and the next claim follows at once while messages keep coming. A claim that
 * fails is sent again, with the same lease token, after a backoff: it returns what it
 * leased if it had run. When it stops, a claim whose outcome is not known (failed, or
 * still on its way) is handed back ({@link #stop()}). An {@link Error} stops it for good,
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
	 * Most due messages one claim asks for, and most not yet due ones: a claim of more
	 * keeps Redis busy for milliseconds (about 5 µs a message), and the next claim
	 * follows at once while they keep coming.
	 */
	static final int MAX_CLAIM = 256;

	private final String topic;

	private final String consumerId = LeaseTokens.newToken();

	private final TopicStore store;

	private final ListenerSettings settings;

	private final @Nullable RateLimit rateLimit;

	private final DelayQueueMetrics metrics;

	private final ScheduledExecutorService scheduler;

	private final Dispatcher dispatcher;

	private final LeaseKeeper leases;

	private final OutageLog outageLog;

	private final int handlerSlots;

	private final AdaptivePrefetch prefetch;

	/**
	 * Messages claimed and not yet finished that hold a slot; only raised by the active
	 * fetch.
	 */
	private final AtomicInteger inHand = new AtomicInteger();

	private final AtomicInteger held = new AtomicInteger();

	/**
	 * Messages held until their due time, earliest first by the Redis clock, in claim
	 * order within the same due time; guards the fields below it. Not ordered by when
	 * they are released here: that time is estimated from the claim's reply, which may
	 * come later for one claim than for the next.
	 */
	private final PriorityQueue<HeldMessage> heldMessages = new PriorityQueue<>(
			Comparator.comparingLong(HeldMessage::dueAtMillis).thenComparingLong(HeldMessage::order));

	/** Messages taken to be dispatched, in order; guarded by {@link #heldMessages}. */
	private final ArrayDeque<ToDispatch> toDispatch = new ArrayDeque<>();

	/** Whether a thread is dispatching; guarded by {@link #heldMessages}. */
	private boolean dispatching;

	private @Nullable ScheduledFuture<?> heldRelease;

	private long heldReleaseNanos;

	private long holds;

	/** A slow-down asked by a handler of the topic, in any of its partitions. */
	private final ClaimPause slowDown;

	/**
	 * When the wait for room in this partition's rate limit window ends
	 * ({@link System#nanoTime()}).
	 */
	private final AtomicLong rateLimitedUntilNanos = new AtomicLong(System.nanoTime());

	private final AtomicBoolean requested = new AtomicBoolean();

	private final AtomicBoolean active = new AtomicBoolean();

	/**
	 * Guards {@link #claimInProgress}, {@link #unanswered} and the decision to send a
	 * claim while running.
	 */
	private final Object claimLock = new Object();

	/**
	 * Orders the writes of claims and of the stop's hand-back; guards
	 * {@link #writesClosed}.
	 */
	private final Object writes = new Object();

	/** Whether the stop has written the hand-back: no claim is written any more. */
	private boolean writesClosed;

	/**
	 * Completes once the reply of the claim on its way is handled.
	 */
	private @Nullable CompletableFuture<Void> claimInProgress;

	/**
	 * The claim whose outcome is not known: sent and not yet answered, or failed and to
	 * be sent again; {@code null} once answered. At the stop it is handed back
	 * ({@link #stop()}), and its reply, if one comes, is not taken.
	 */
	private @Nullable ClaimRequest unanswered;

	/** The hand-back, at the stop, of what the claim unanswered then may have leased. */
	private volatile CompletableFuture<Void> claimHandedBack = CompletableFuture.completedFuture(null);

	private volatile boolean running;

	private volatile boolean dead;

	private @Nullable ScheduledFuture<?> nextCheck;

	/**
	 * A claim that failed, to be sent again as it was; only touched by the active fetch.
	 */
	private @Nullable ClaimRequest failed;

	private long claims;

	/** The waits while Redis does not answer; {@code null} while it does. */
	private @Nullable BackOffExecution outage;

	/**
	 * Creates a fetcher.
	 * @param handlerSlots how many messages its handlers take at once: the concurrency
	 * (times the maximum batch size for a batch listener)
	 * @param prefetch how many claimed messages may wait for a free handler besides
	 * those, at the moment of each claim
	 * @param rateLimit the rate limit of the topic (this partition's share), or
	 * {@code null} for none
	 * @param slowDown the topic's pause of claims asked by its handlers, shared by its
	 * partitions
	 * @param metrics where claims held back by the rate limit are counted
	 */
	Fetcher(String topic, TopicStore store, ListenerSettings settings, int handlerSlots, AdaptivePrefetch prefetch,
			@Nullable RateLimit rateLimit, ClaimPause slowDown, DelayQueueMetrics metrics,
			ScheduledExecutorService scheduler, Dispatcher dispatcher, LeaseKeeper leases, OutageLog outageLog) {
		this.topic = topic;
		this.slowDown = slowDown;
		this.store = store;
		this.settings = settings;
		this.rateLimit = rateLimit;
		this.metrics = metrics;
		this.scheduler = scheduler;
		this.dispatcher = dispatcher;
		this.leases = leases;
		this.outageLog = outageLog;
		this.handlerSlots = handlerSlots;
		this.prefetch = prefetch;
	}

	void start() {
		this.running = true;
		request();
	}

	/**
	 * Stops claiming. A claim whose outcome is not known (on its way, or failed and to be
	 * sent again) is handed back at once with {@code release_claim.lua}, without waiting:
	 * on the connection the claim went out on (the shared one of Spring Data Redis'
	 * Lettuce, by default), Redis runs it after the claim, so that whatever the claim
	 * leased is ready again even if its reply never reaches this application (say the
	 * connection closes once the listeners stopped); the claim's reply, if it comes, is
	 * handed back as well, which is harmless. On a connection of its own (no shared
	 * native connection, a pool, a Cluster re-routing the claim), the hand-back may run
	 * before the claim: it then records the claim as having leased nothing, so that the
	 * claim leases nothing when it runs.
	 * @return the messages held until their due time or taken and not yet dispatched, now
	 * given up: the caller hands them back
	 */
	List<InFlightMessage> stop() {
		this.running = false;
		synchronized (this.writes) {
			// Closed before the hand-back is written: a claim written from now on, or
			// sent
			// again because Redis lost its script, would come after it.
			this.writesClosed = true;
			ClaimRequest unknown;
			synchronized (this.claimLock) {
				unknown = this.unanswered;
				this.unanswered = null;
			}
			if (unknown != null) {
				this.claimHandedBack = handBackClaim(unknown);
			}
		}
		synchronized (this) {
			if (this.nextCheck != null) {
				this.nextCheck.cancel(false);
			}
		}
		List<InFlightMessage> notDue = new ArrayList<>();
		synchronized (this.heldMessages) {
			if (this.heldRelease != null) {
				this.heldRelease.cancel(false);
			}
			this.toDispatch.forEach((taken) -> notDue.add(taken.message()));
			this.toDispatch.clear();
			this.heldMessages.forEach((held) -> notDue.add(held.message()));
			this.heldMessages.clear();
			this.held.set(0);
		}
		return notDue;
	}

	/**
	 * Writes a claim, or its script in full after {@code NOSCRIPT}, unless the stop has
	 * written the hand-back of the claim unanswered then: Redis runs the writes of the
	 * shared connection in order, so a claim never runs after its hand-back.
	 */
	private boolean writeClaim(Runnable write) {
		synchronized (this.writes) {
			if (this.writesClosed) {
				return false;
			}
			write.run();
			return true;
		}
	}

	/**
	 * @return completes once Redis has answered the hand-back of a claim unanswered at
	 * the stop (or it failed); completed if there was none
	 */
	CompletableFuture<Void> claimHandedBack() {
		return this.claimHandedBack;
	}

	private CompletableFuture<Void> handBackClaim(ClaimRequest claim) {
		CompletableFuture<List<String>> sent;
		try {
			sent = this.store.releaseClaim(this.consumerId, claim.token(), this.settings.visibilityTimeout());
		}
		catch (RuntimeException ex) {
			sent = CompletableFuture.failedFuture(ex);
		}
		return sent.handle((ids, failure) -> {
			if (ids == null) {
				Throwable cause = (failure instanceof CompletionException) ? failure.getCause() : failure;
				logger.warn("Topic '" + this.topic + "': no answer to the hand-back of a claim unanswered when the "
						+ "listener stopped (" + cause + "); unless Redis ran it, what the claim leased is "
						+ "delivered again when its lease expires");
			}
			else if (!ids.isEmpty() && logger.isDebugEnabled()) {
				logger.debug("Topic '" + this.topic + "': " + ids.size() + " messages of a claim unanswered when "
						+ "the listener stopped handed back, not delivered: " + ids);
			}
			return null;
		});
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
	 * Claims nothing new until the rate limit's window has room. A wait already longer
	 * stays.
	 * @param wait how long
	 */
	private void waitForRoom(Duration wait) {
		long until = System.nanoTime() + Nanoseconds.of(wait);
		this.rateLimitedUntilNanos.accumulateAndGet(until, (current, next) -> (next - current > 0) ? next : current);
	}

	/**
	 * A handler finished messages that held slots.
	 * @param count how many
	 */
	void slotsFreed(int count) {
		this.inHand.addAndGet(-count);
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
			checkAgainIn(StoreCalls.OUTAGE_WAITS.maxInterval().toMillis());
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
		long pausedFor = Math.max(this.slowDown.remainingNanos(), this.rateLimitedUntilNanos.get() - System.nanoTime());
		if (pausedFor > 0) {
			checkAgainIn(Math.max(1, TimeUnit.NANOSECONDS.toMillis(pausedFor)));
			return false;
		}
		ClaimRequest request = this.failed;
		if (request == null) {
			int free = this.handlerSlots + this.prefetch.current() - this.inHand.get();
			if (free <= 0) {
				return false;
			}
			int wanted = Math.min(MAX_CLAIM, free);
			this.inHand.addAndGet(wanted);
			int earlyLimit = (this.rateLimit != null) ? 0
					: Math.min(MAX_CLAIM, Math.max(0, MAX_HELD - this.held.get()));
			request = new ClaimRequest(this.consumerId + "." + (++this.claims), wanted, earlyLimit);
		}
		CompletableFuture<Void> inProgress = new CompletableFuture<>();
		synchronized (this.claimLock) {
			if (!this.running) {
				if (this.failed == null) {
					this.inHand.addAndGet(-request.wanted());
				}
				return false;
			}
			this.claimInProgress = inProgress;
			this.unanswered = request;
		}
		ClaimRequest sent = request;
		Replies.send(
				() -> this.store.claim(this.consumerId, sent.token(), sent.wanted(), sent.earlyLimit(),
						this.settings.visibilityTimeout(), this.rateLimit, this::writeClaim),
				this.scheduler, (result, failure) -> claimed(sent, result, failure, inProgress), (result, failure) -> {
					// The runtime stopped, so the claim was handed back at the stop: what
					// its reply names goes back too.
					handBackLate(result);
					inProgress.complete(null);
					this.active.set(false);
				});
		return true;
	}

	/**
	 * @return whether the stop took the claim over ({@link #stop()}): its reply is not
	 * taken; else, on a reply, the claim is no longer unanswered
	 */
	private boolean handedBackAtStop(ClaimRequest request, @Nullable ClaimResult result) {
		synchronized (this.claimLock) {
			if (this.unanswered != request) {
				return true;
			}
			if (result != null) {
				this.unanswered = null;
			}
			return false;
		}
	}

	/** Hands back what the reply of a claim handed back at the stop names. */
	private void handBackLate(@Nullable ClaimResult result) {
		if (result != null && !result.messages().isEmpty()) {
			this.leases.handBack(inFlight(result), HandBack.CLAIMED_AFTER_STOP);
		}
	}

	private void claimed(ClaimRequest request, @Nullable ClaimResult result, @Nullable Throwable failure,
			CompletableFuture<Void> inProgress) {
		try {
			if (handedBackAtStop(request, (failure == null) ? result : null)) {
				handBackLate(result);
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
			List<InFlightMessage> claimed = inFlight(result);
			// Not kept once the lease keeper stopped: then handed back.
			boolean kept = this.leases.keep(claimed);
			inProgress.complete(null);
			this.failed = null;
			this.outageLog.succeeded();
			this.outage = null;
			int due = kept ? handOver(claimed) : 0;
			this.inHand.addAndGet(due - request.wanted());
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
			else if (mayHaveMore(request, result, due)) {
				this.requested.set(true);
			}
			else {
				checkAgainIn(this.settings.idleCheckInterval().toMillis());
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

	private static List<InFlightMessage> inFlight(ClaimResult result) {
		return result.messages().stream().map(InFlightMessage::new).toList();
	}

	/**
	 * Hands claimed messages over: those due go to their handlers after every held
	 * message due by now, those not yet due are held.
	 * @return how many of the messages were due, and so took a slot
	 */
	private int handOver(List<InFlightMessage> claimed) {
		int due = 0;
		boolean stopped;
		synchronized (this.heldMessages) {
			// Answered before the stop, and handed over after it took what was queued:
			// nothing would dispatch them, so they go back at once.
			stopped = !this.running;
			if (!stopped) {
				// Held messages due by the Redis clock of this claim go first, even if
				// their own claim's reply came late and their release here is still to
				// come.
				long claimedAtMillis = claimed.isEmpty() ? Long.MIN_VALUE
						: claimed.get(0).claimed().claimedAt().toEpochMilli();
				takeDueHeldMessages(claimedAtMillis);
				for (InFlightMessage message : claimed) {
					long dueInNanos = Nanoseconds.of(message.claimed().dueIn());
					if (dueInNanos > 0) {
						hold(message, dueInNanos);
					}
					else {
						due++;
						this.toDispatch.add(new ToDispatch(message, true));
					}
				}
			}
		}
		if (stopped) {
			this.leases.handBack(claimed, HandBack.CLAIMED_AFTER_STOP);
			return 0;
		}
		dispatchInOrder();
		return due;
	}

	/**
	 * Keeps a message the broker made ready before its due time until then; it is in
	 * flight here meanwhile (leased, extended, handed back at shutdown) but takes no
	 * handler slot. Held messages are handed over in due order, and in claim order within
	 * the same due time. Called holding the lock of {@link #heldMessages}.
	 */
	private void hold(InFlightMessage message, long dueInNanos) {
		ClaimedMessage claimed = message.claimed();
		long dueAtMillis = claimed.claimedAt().plus(claimed.dueIn()).toEpochMilli();
		this.heldMessages.add(new HeldMessage(dueAtMillis, this.holds++, System.nanoTime() + dueInNanos, message));
		this.held.incrementAndGet();
		HeldMessage head = this.heldMessages.peek();
		if (head != null && (this.heldRelease == null || head.releaseNanos() - this.heldReleaseNanos < 0)) {
			scheduleRelease(head.releaseNanos());
		}
	}

	private void releaseDueHeldMessages() {
		boolean wasFull;
		synchronized (this.heldMessages) {
			this.heldRelease = null;
			wasFull = this.held.get() >= MAX_HELD;
			takeDueHeldMessages(Long.MIN_VALUE);
			// Else stopping: the lease keeper hands the held messages back.
			HeldMessage head = this.heldMessages.peek();
			if (this.running && head != null) {
				scheduleRelease(head.releaseNanos());
			}
		}
		dispatchInOrder();
		if (wasFull) {
			request();
		}
	}

	/**
	 * Moves the held messages due by now to the messages to dispatch, in due order: the
	 * first while its release time here has come or it is due by a Redis time known, and
	 * so on. Called holding the lock of {@link #heldMessages}.
	 * @param redisNowMillis the Redis clock of a claim just answered (epoch ms), or
	 * {@link Long#MIN_VALUE} for none
	 */
	private void takeDueHeldMessages(long redisNowMillis) {
		long now = System.nanoTime();
		HeldMessage head;
		while (this.running && (head = this.heldMessages.peek()) != null
				&& (head.releaseNanos() - now <= 0 || head.dueAtMillis() <= redisNowMillis)) {
			this.heldMessages.poll();
			this.held.decrementAndGet();
			this.toDispatch.add(new ToDispatch(head.message(), false));
		}
	}

	/**
	 * Dispatches the messages taken for it, one at a time and in the order they were
	 * taken, outside the lock: the handler executor may wait for room, and the stop needs
	 * the lock meanwhile. One thread dispatches at a time; others leave their messages to
	 * it. The stop takes back what is not dispatched yet.
	 */
	private void dispatchInOrder() {
		synchronized (this.heldMessages) {
			if (this.dispatching) {
				return;
			}
			this.dispatching = true;
		}
		boolean done = false;
		try {
			while (true) {
				ToDispatch next;
				synchronized (this.heldMessages) {
					next = this.running ? this.toDispatch.poll() : null;
					if (next == null) {
						this.dispatching = false;
						done = true;
						return;
					}
				}
				dispatch(next);
			}
		}
		finally {
			if (!done) {
				synchronized (this.heldMessages) {
					this.dispatching = false;
				}
			}
		}
	}

	/**
	 * Dispatches one message. Should the dispatcher fail, the message goes back at once
	 * and its slot is freed, so that neither waits for its lease to expire, and the
	 * messages queued behind it are still dispatched.
	 */
	private void dispatch(ToDispatch next) {
		try {
			this.dispatcher.dispatch(next.message(), next.holdsSlot());
		}
		catch (RuntimeException ex) {
			logger.error("Topic '" + this.topic + "' message " + next.message().id() + ": could not hand it to a "
					+ "handler, handing it back to be delivered again", ex);
			this.leases.handBack(List.of(next.message()), HandBack.REFUSED);
			if (next.holdsSlot()) {
				slotsFreed(1);
			}
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

	/** A message taken to be dispatched, and whether it took a handler slot. */
	private record ToDispatch(InFlightMessage message, boolean holdsSlot) {
	}

	/**
	 * A message held until its due time.
	 *
	 * @param dueAtMillis its due time by the Redis clock (epoch ms)
	 * @param order the order in which it was claimed
	 * @param releaseNanos its due time by this JVM's clock, as estimated from its claim
	 * @param message the message
	 */
	private record HeldMessage(long dueAtMillis, long order, long releaseNanos, InFlightMessage message) {
	}

	/** One claim request: sent again with the same token until it gets an answer. */
	private record ClaimRequest(String token, int wanted, int earlyLimit) {
	}

}

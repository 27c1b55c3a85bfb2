package io.github.delayqueue.runtime.consumer;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.delayqueue.runtime.consumer.Settlement.HandBack;
import io.github.delayqueue.runtime.support.Nanoseconds;
import io.github.delayqueue.runtime.support.OutageLog;
import io.github.delayqueue.runtime.support.Replies;
import io.github.delayqueue.store.MessageStore;
import io.github.delayqueue.store.TopicStore;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * Keeps the leases of the messages this consumer holds (held until due, or being
 * handled): extends them all every third of the visibility timeout, up to the maximum
 * handling time, and at shutdown hands every unfinished one back. A round of extension
 * sends one call for every {@value MessageStore#MAX_IDS_PER_CALL} messages, all before
 * any reply, and no thread waits for Redis: the replies continue on the scheduler. The
 * next round starts a third of the visibility timeout after this one started, and never
 * before this one is answered. Tracks the messages by identity: one id may be held twice
 * after its lease expired.
 */
final class LeaseKeeper {

	private static final Log logger = LogFactory.getLog(LeaseKeeper.class);

	private final String topic;

	private final TopicStore store;

	private final Duration visibilityTimeout;

	private final Duration maxHandlingTime;

	private final Settlement settlement;

	private final OutageLog outageLog;

	private final Set<InFlightMessage> held = ConcurrentHashMap.newKeySet();

	private final ScheduledExecutorService scheduler;

	private final long periodNanos;

	/** The next round; guarded by this object's monitor, like {@link #stopped}. */
	private @Nullable ScheduledFuture<?> nextRound;

	private boolean stopped;

	LeaseKeeper(String topic, TopicStore store, Duration visibilityTimeout, Duration maxHandlingTime,
			Settlement settlement, ScheduledExecutorService scheduler, OutageLog outageLog) {
		this.topic = topic;
		this.store = store;
		this.visibilityTimeout = visibilityTimeout;
		this.maxHandlingTime = maxHandlingTime;
		this.settlement = settlement;
		this.scheduler = scheduler;
		this.outageLog = outageLog;
		this.periodNanos = Math.max(TimeUnit.MILLISECONDS.toNanos(1), Nanoseconds.of(visibilityTimeout) / 3);
	}

	void start() {
		scheduleRound(this.periodNanos);
	}

	/**
	 * Starts keeping the leases of messages just claimed; once stopped, hands them back
	 * at once instead, without waiting for Redis (the claim was answered after the stop).
	 * @param messages the messages
	 * @return whether they are kept; if not, they were handed back
	 */
	boolean keep(Collection<InFlightMessage> messages) {
		synchronized (this) {
			if (!this.stopped) {
				this.held.addAll(messages);
				return true;
			}
		}
		this.settlement.handBack(messages, HandBack.NOT_STARTED);
		return false;
	}

	/** Stops keeping the lease of a message whose handler is done with it. */
	void release(InFlightMessage message) {
		this.held.remove(message);
	}

	/**
	 * Hands messages back at once, before their handlers started, without waiting for
	 * Redis, and stops keeping their leases.
	 * @param messages the messages; those already settled are left out
	 * @param why why they go back, for the log
	 * @return completes once Redis has answered, or the calls failed
	 */
	CompletableFuture<Void> handBack(Collection<InFlightMessage> messages, HandBack why) {
		this.held.removeAll(messages);
		return this.settlement.handBack(messages, why);
	}

	/**
	 * @return whether it holds no message: none claimed and not yet settled
	 */
	boolean holdsNone() {
		return this.held.isEmpty();
	}

	/**
	 * Stops extending leases and hands every message that is still unfinished back,
	 * without waiting for Redis; messages claimed from now on are handed back as they
	 * come.
	 * @return completes once Redis has answered, or the calls failed
	 */
	CompletableFuture<Void> handBackUnfinished() {
		List<InFlightMessage> unfinished;
		synchronized (this) {
			this.stopped = true;
			if (this.nextRound != null) {
				this.nextRound.cancel(false);
			}
			unfinished = List.copyOf(this.held);
			this.held.clear();
		}
		return this.settlement.handBack(unfinished, HandBack.UNFINISHED);
	}

	/**
	 * Stops extending leases and leaves every message that is still unfinished leased
	 * until its lease ends, when another consumer takes it again: for a listener with a
	 * group concurrency, whose hand-back would free the group's slot while the handler
	 * may still run. A handler that ends meanwhile settles its message as usual. Messages
	 * claimed from now on are handed back as they come.
	 * @return the messages left leased
	 */
	List<InFlightMessage> keepUnfinished() {
		synchronized (this) {
			this.stopped = true;
			if (this.nextRound != null) {
				this.nextRound.cancel(false);
			}
			List<InFlightMessage> unfinished = List.copyOf(this.held);
			this.held.clear();
			return unfinished;
		}
	}

	private synchronized void scheduleRound(long delayNanos) {
		if (this.stopped) {
			return;
		}
		try {
			this.nextRound = this.scheduler.schedule(this::extendLeases, delayNanos, TimeUnit.NANOSECONDS);
		}
		catch (RejectedExecutionException ex) {
			// Stopping: the leases are handed back.
		}
	}

	/** One round: every lease held, in calls of up to 1,000, all sent at once. */
	private void extendLeases() {
		long started = System.nanoTime();
		List<LeaseBatch> batches = LeaseBatch.of(extendable(), MessageStore.MAX_IDS_PER_CALL);
		if (batches.isEmpty()) {
			scheduleRound(this.periodNanos);
			return;
		}
		AtomicInteger unanswered = new AtomicInteger(batches.size());
		for (LeaseBatch batch : batches) {
			Replies.send(() -> this.store.extendLeases(batch.ids(), batch.leaseTokens(), this.visibilityTimeout),
					this.scheduler, (deadlines, failure) -> {
						try {
							extended(batch, deadlines, failure);
						}
						finally {
							if (unanswered.decrementAndGet() == 0) {
								scheduleRound(Math.max(0, started + this.periodNanos - System.nanoTime()));
							}
						}
					}, (deadlines, failure) -> {
						// Stopping: the leases are handed back.
					});
		}
	}

	/**
	 * @return the messages held whose lease is extended this round: not settled, and
	 * handled for less than the maximum handling time
	 */
	private List<InFlightMessage> extendable() {
		long maxHandlingNanos = Nanoseconds.of(this.maxHandlingTime);
		List<InFlightMessage> extendable = new ArrayList<>(this.held.size());
		for (InFlightMessage message : this.held) {
			synchronized (message) {
				if (message.isSettled()) {
					continue;
				}
				if (message.handlingNanos() > maxHandlingNanos) {
					if (message.reportOverdue()) {
						logger.warn("Topic '" + this.topic + "' message " + message.id()
								+ " has been handled for more than " + "delay-queue.listener.max-handling-time ("
								+ this.maxHandlingTime
								+ "): its lease is no longer extended and it will be delivered again");
					}
					continue;
				}
			}
			extendable.add(message);
		}
		return extendable;
	}

	private void extended(LeaseBatch batch, @Nullable List<Long> deadlines, @Nullable Throwable failure) {
		if (failure != null || deadlines == null) {
			this.outageLog.failed((failure != null) ? Replies.rethrow(failure)
					: new IllegalStateException("No reply to a lease extension"));
			return;
		}
		this.outageLog.succeeded();
		for (int m = 0; m < batch.size(); m++) {
			if (deadlines.get(m) < 0) {
				this.settlement.leaseLost(batch.messages().get(m));
			}
		}
	}

}

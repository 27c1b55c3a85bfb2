package io.github.delayqueue.runtime.consumer;

import java.util.Comparator;
import java.util.List;
import java.util.PriorityQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.delayqueue.store.ClaimedMessage;
import org.jspecify.annotations.Nullable;

/**
 * The messages the broker made ready ahead of their due time (the lookahead), held here
 * until they fall due, and the timer that releases them. A held message is in flight here
 * meanwhile (leased, extended, handed back at shutdown) but takes no handler slot. Held
 * messages fall due in due order by the Redis clock, and in claim order within the same
 * due time; not ordered by when they are released here: that time is estimated from the
 * claim's reply, which may come later for one claim than for the next.
 * <p>
 * Not thread-safe: every method but {@link #count()} is called holding the lock of the
 * {@link DispatchQueue} that owns it.
 */
final class EarlyMessages {

	/** Most messages held here until their due time. */
	static final int MAX_HELD = 1000;

	private final ScheduledExecutorService scheduler;

	private final Runnable release;

	/** Earliest first by the Redis clock, in claim order within the same due time. */
	private final PriorityQueue<HeldMessage> held = new PriorityQueue<>(
			Comparator.comparingLong(HeldMessage::dueAtMillis).thenComparingLong(HeldMessage::order));

	/** How many messages are held, read without the lock. */
	private final AtomicInteger count = new AtomicInteger();

	private @Nullable ScheduledFuture<?> timer;

	private long timerNanos;

	private long holds;

	/**
	 * Creates an empty set.
	 * @param release what the timer runs when the earliest message may have fallen due
	 */
	EarlyMessages(ScheduledExecutorService scheduler, Runnable release) {
		this.scheduler = scheduler;
		this.release = release;
	}

	/**
	 * @return how many messages are held; safe without the lock
	 */
	int count() {
		return this.count.get();
	}

	/**
	 * @return whether as many messages are held as may be
	 */
	boolean isFull() {
		return this.count.get() >= MAX_HELD;
	}

	/**
	 * Keeps a message until its due time, and sets the timer to it if it is now the
	 * earliest.
	 * @param dueInNanos how long until it is due, from its claim
	 */
	void hold(InFlightMessage message, long dueInNanos) {
		ClaimedMessage claimed = message.claimed();
		long dueAtMillis = claimed.claimedAt().plus(claimed.dueIn()).toEpochMilli();
		this.held.add(new HeldMessage(dueAtMillis, this.holds++, System.nanoTime() + dueInNanos, message));
		this.count.incrementAndGet();
		HeldMessage head = this.held.peek();
		if (head != null && (this.timer == null || head.releaseNanos() - this.timerNanos < 0)) {
			schedule(head.releaseNanos());
		}
	}

	/**
	 * Takes the earliest message if it is due: its release time here has come, or it is
	 * due by a Redis time known.
	 * @param nowNanos the {@link System#nanoTime()} of now
	 * @param redisNowMillis the Redis clock of a claim just answered (epoch ms), or
	 * {@link Long#MIN_VALUE} for none
	 * @return the message, or {@code null} if none is due
	 */
	@Nullable InFlightMessage takeIfDue(long nowNanos, long redisNowMillis) {
		HeldMessage head = this.held.peek();
		if (head == null || (head.releaseNanos() - nowNanos > 0 && head.dueAtMillis() > redisNowMillis)) {
			return null;
		}
		this.held.poll();
		this.count.decrementAndGet();
		return head.message();
	}

	/** The timer ran: it is no longer set. */
	void timerRan() {
		this.timer = null;
	}

	/** Sets the timer to the earliest message held, if any. */
	void scheduleNext() {
		HeldMessage head = this.held.peek();
		if (head != null) {
			schedule(head.releaseNanos());
		}
	}

	/**
	 * Cancels the timer and gives up every message held.
	 * @param into where the messages go, in no particular order
	 */
	void takeAll(List<InFlightMessage> into) {
		if (this.timer != null) {
			this.timer.cancel(false);
		}
		this.held.forEach((held) -> into.add(held.message()));
		this.held.clear();
		this.count.set(0);
	}

	private void schedule(long dueNanos) {
		if (this.timer != null) {
			this.timer.cancel(false);
		}
		try {
			this.timer = this.scheduler.schedule(this.release, Math.max(0, dueNanos - System.nanoTime()),
					TimeUnit.NANOSECONDS);
			this.timerNanos = dueNanos;
		}
		catch (RejectedExecutionException ex) {
			// Stopping: the lease keeper hands the held messages back.
			this.timer = null;
		}
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

}

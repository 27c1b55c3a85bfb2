package io.github.delayqueue.runtime.consumer;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ScheduledExecutorService;
import java.util.function.BooleanSupplier;
import java.util.function.IntConsumer;

import io.github.delayqueue.runtime.consumer.Fetcher.Dispatcher;
import io.github.delayqueue.runtime.consumer.Settlement.HandBack;
import io.github.delayqueue.runtime.support.Nanoseconds;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * The claimed messages on their way to the {@link Dispatcher}, in order: a due message at
 * once, after every held message due by then, and one the broker made ready ahead of its
 * due time when it falls due by the Redis clock, held meanwhile without a slot in
 * {@link EarlyMessages}. One thread dispatches at a time, outside the lock; at the stop
 * what is not dispatched yet is taken back. Thread-safe: its lock also guards the
 * {@link EarlyMessages}.
 */
final class DispatchQueue {

	/** Logs as the fetcher, as all of its parts do: one category to set. */
	private static final Log logger = LogFactory.getLog(Fetcher.class);

	private final String topic;

	private final Dispatcher dispatcher;

	private final LeaseKeeper leases;

	private final BooleanSupplier running;

	private final IntConsumer slotsFreed;

	private final Runnable claimAgain;

	/** Guards the fields below it and the early messages. */
	private final Object lock = new Object();

	private final EarlyMessages early;

	/** Messages taken to be dispatched, in order. */
	private final ArrayDeque<ToDispatch> toDispatch = new ArrayDeque<>();

	/** Whether a thread is dispatching. */
	private boolean dispatching;

	/**
	 * Creates an empty queue.
	 * @param running whether the fetcher runs
	 * @param slotsFreed frees handler slots of messages that will not be handled
	 * @param claimAgain asks for a claim, when messages held up to the limit fall due:
	 * the claims took no early message meanwhile
	 */
	DispatchQueue(String topic, Dispatcher dispatcher, LeaseKeeper leases, ScheduledExecutorService scheduler,
			BooleanSupplier running, IntConsumer slotsFreed, Runnable claimAgain) {
		this.topic = topic;
		this.dispatcher = dispatcher;
		this.leases = leases;
		this.running = running;
		this.slotsFreed = slotsFreed;
		this.claimAgain = claimAgain;
		this.early = new EarlyMessages(scheduler, this::releaseDueEarlyMessages);
	}

	/**
	 * @return how many messages are held until their due time; safe without the lock
	 */
	int heldCount() {
		return this.early.count();
	}

	/**
	 * Hands claimed messages over: those due go to their handlers after every held
	 * message due by now, those not yet due are held.
	 * @return how many of the messages were due, and so took a slot
	 */
	int handOver(List<InFlightMessage> claimed) {
		int due = 0;
		boolean stopped;
		synchronized (this.lock) {
			// Answered before the stop, and handed over after it took what was queued:
			// nothing would dispatch them, so they go back at once.
			stopped = !this.running.getAsBoolean();
			if (!stopped) {
				// Held messages due by the Redis clock of this claim go first, even if
				// their own claim's reply came late and their release here is still to
				// come.
				long claimedAtMillis = claimed.isEmpty() ? Long.MIN_VALUE
						: claimed.get(0).claimed().claimedAt().toEpochMilli();
				takeDueEarlyMessages(claimedAtMillis);
				for (InFlightMessage message : claimed) {
					long dueInNanos = Nanoseconds.of(message.claimed().dueIn());
					if (dueInNanos > 0) {
						this.early.hold(message, dueInNanos);
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
	 * Takes back, at the stop, what is not dispatched yet.
	 * @return the messages held until their due time or taken and not yet dispatched, now
	 * given up
	 */
	List<InFlightMessage> takeBack() {
		List<InFlightMessage> notDue = new ArrayList<>();
		synchronized (this.lock) {
			this.toDispatch.forEach((taken) -> notDue.add(taken.message()));
			this.toDispatch.clear();
			this.early.takeAll(notDue);
		}
		return notDue;
	}

	private void releaseDueEarlyMessages() {
		boolean wasFull;
		synchronized (this.lock) {
			this.early.timerRan();
			wasFull = this.early.isFull();
			takeDueEarlyMessages(Long.MIN_VALUE);
			// Else stopping: the lease keeper hands the held messages back.
			if (this.running.getAsBoolean()) {
				this.early.scheduleNext();
			}
		}
		dispatchInOrder();
		if (wasFull) {
			this.claimAgain.run();
		}
	}

	/**
	 * Moves the held messages due by now to the messages to dispatch, in due order: the
	 * first while its release time here has come or it is due by a Redis time known, and
	 * so on. Called holding the lock.
	 * @param redisNowMillis the Redis clock of a claim just answered (epoch ms), or
	 * {@link Long#MIN_VALUE} for none
	 */
	private void takeDueEarlyMessages(long redisNowMillis) {
		long now = System.nanoTime();
		InFlightMessage message;
		while (this.running.getAsBoolean() && (message = this.early.takeIfDue(now, redisNowMillis)) != null) {
			this.toDispatch.add(new ToDispatch(message, false));
		}
	}

	/**
	 * Dispatches the messages taken for it, one at a time and in the order they were
	 * taken, outside the lock: the handler executor may wait for room, and the stop needs
	 * the lock meanwhile. One thread dispatches at a time; others leave their messages to
	 * it. The stop takes back what is not dispatched yet.
	 */
	private void dispatchInOrder() {
		synchronized (this.lock) {
			if (this.dispatching) {
				return;
			}
			this.dispatching = true;
		}
		boolean done = false;
		try {
			while (true) {
				ToDispatch next;
				synchronized (this.lock) {
					next = this.running.getAsBoolean() ? this.toDispatch.poll() : null;
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
				synchronized (this.lock) {
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
				this.slotsFreed.accept(1);
			}
		}
	}

	/** A message taken to be dispatched, and whether it took a handler slot. */
	private record ToDispatch(InFlightMessage message, boolean holdsSlot) {
	}

}

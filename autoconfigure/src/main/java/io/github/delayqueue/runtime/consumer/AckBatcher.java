package io.github.delayqueue.runtime.consumer;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.delayqueue.store.TopicStore;
import io.github.delayqueue.store.StoreCalls;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * Acknowledges the messages whose handlers returned, many per script call: handlers hand
 * their settled message over and go on, and a flush on the shared scheduler sends
 * whatever has gathered a few milliseconds after the first one came. This turns one round
 * trip per message into one per batch, under load and in a trickle alike, without a
 * thread of its own.
 */
final class AckBatcher {

	private static final Log logger = LogFactory.getLog(AckBatcher.class);

	private static final int MAX_BATCH = 200;

	/**
	 * How long a flush waits for more messages after the first; small next to any lease.
	 */
	private static final long LINGER_MICROS = 5_000;

	private final String topic;

	private final TopicStore store;

	private final ScheduledExecutorService scheduler;

	private final ConcurrentLinkedQueue<InFlightMessage> pending = new ConcurrentLinkedQueue<>();

	private final AtomicBoolean flushScheduled = new AtomicBoolean();

	/** Messages queued and not yet answered by Redis. */
	private final AtomicInteger unanswered = new AtomicInteger();

	private final Object sending = new Object();

	AckBatcher(String topic, TopicStore store, ScheduledExecutorService scheduler) {
		this.topic = topic;
		this.store = store;
		this.scheduler = scheduler;
	}

	/**
	 * Queues a settled message for acknowledgement.
	 * @param message the message, settled by its handler
	 */
	void acknowledge(InFlightMessage message) {
		this.unanswered.incrementAndGet();
		this.pending.add(message);
		scheduleFlush(LINGER_MICROS);
	}

	/**
	 * @return whether every queued acknowledgement was sent and answered (or given up)
	 */
	boolean isDone() {
		return this.unanswered.get() == 0;
	}

	/**
	 * Sends what is queued, in the caller's thread, until the queue is empty or the
	 * deadline passed.
	 * @param deadlineNanos the {@link System#nanoTime()} by which to be done
	 */
	void flushNow(long deadlineNanos) {
		while (!this.pending.isEmpty() && System.nanoTime() - deadlineNanos < 0) {
			sendBatch();
		}
		if (!this.pending.isEmpty()) {
			logger.warn("Topic '" + this.topic + "': " + this.pending.size() + " acknowledgements not sent before the"
					+ " deadline; those messages are delivered again when their lease expires");
			this.unanswered.addAndGet(-drop());
		}
	}

	private int drop() {
		int dropped = 0;
		while (this.pending.poll() != null) {
			dropped++;
		}
		return dropped;
	}

	private void scheduleFlush(long delayMicros) {
		if (this.flushScheduled.compareAndSet(false, true)) {
			try {
				this.scheduler.schedule(this::flush, delayMicros, TimeUnit.MICROSECONDS);
			}
			catch (RejectedExecutionException ex) {
				// Stopping: flushNow sends what is left.
				this.flushScheduled.set(false);
			}
		}
	}

	private void flush() {
		this.flushScheduled.set(false);
		sendBatch();
		if (!this.pending.isEmpty()) {
			scheduleFlush(0);
		}
	}

	private void sendBatch() {
		synchronized (this.sending) {
			List<InFlightMessage> batch = new ArrayList<>();
			InFlightMessage next;
			while (batch.size() < MAX_BATCH && (next = this.pending.poll()) != null) {
				batch.add(next);
			}
			if (!batch.isEmpty()) {
				send(batch);
			}
		}
	}

	private void send(List<InFlightMessage> batch) {
		List<String> ids = batch.stream().map(InFlightMessage::id).toList();
		List<String> tokens = batch.stream().map(InFlightMessage::leaseToken).toList();
		try {
			report(ids, StoreCalls.withRetries(() -> this.store.ack(ids, tokens)));
		}
		catch (RuntimeException ex) {
			logger.warn("Topic '" + this.topic + "': could not acknowledge messages " + ids
					+ ", they are delivered again when their lease expires: " + ex);
		}
		finally {
			this.unanswered.addAndGet(-batch.size());
		}
	}

	private void report(List<String> ids, List<Boolean> acked) {
		for (int m = 0; m < ids.size(); m++) {
			if (!acked.get(m)) {
				logger.warn("Topic '" + this.topic + "' message " + ids.get(m)
						+ " handled, but its lease had expired: it may be delivered again");
			}
			else if (logger.isDebugEnabled()) {
				logger.debug("Topic '" + this.topic + "' message " + ids.get(m) + " acknowledged");
			}
		}
	}

}

package io.github.delayqueue.listener;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import io.github.delayqueue.store.RedisMessageStore;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * Acknowledges the messages whose handlers returned, many per script call: handlers hand their
 * settled message over and go on, and one thread per topic sends whatever has gathered since its
 * last call, after waiting a few milliseconds for more. This turns one round trip per message
 * into one per batch, under load and in a trickle alike.
 */
final class AckBatcher {

	private static final Log logger = LogFactory.getLog(AckBatcher.class);

	private static final int MAX_BATCH = 200;

	/** How long a call waits for more messages after the first; small next to any lease. */
	private static final long LINGER_NANOS = TimeUnit.MILLISECONDS.toNanos(5);

	private static final int TRIES = 3;

	private final String topic;

	private final RedisMessageStore store;

	private final LinkedBlockingQueue<InFlightMessage> pending = new LinkedBlockingQueue<>();

	private final Thread thread;

	private volatile boolean running = true;

	AckBatcher(String topic, RedisMessageStore store) {
		this.topic = topic;
		this.store = store;
		this.thread = new Thread(this::sendBatches, "delay-queue-" + topic + "-ack");
		this.thread.setDaemon(true);
		this.thread.start();
	}

	/**
	 * Queues a settled message for acknowledgement.
	 * @param message the message, settled by its handler
	 */
	void acknowledge(InFlightMessage message) {
		this.pending.add(message);
	}

	/**
	 * Sends what is queued and stops, waiting at most until the deadline.
	 * @param deadlineNanos the {@link System#nanoTime()} by which to be done
	 */
	void stop(long deadlineNanos) {
		this.running = false;
		try {
			this.thread.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadlineNanos - System.nanoTime())));
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	private void sendBatches() {
		while (this.running || !this.pending.isEmpty()) {
			InFlightMessage first;
			try {
				first = this.pending.poll(100, TimeUnit.MILLISECONDS);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				return;
			}
			if (first == null) {
				continue;
			}
			List<InFlightMessage> batch = new ArrayList<>();
			batch.add(first);
			gather(batch);
			send(batch);
		}
	}

	/** Waits a moment for more settled messages, so that a trickle of them shares one call too. */
	private void gather(List<InFlightMessage> batch) {
		long lingerEnd = System.nanoTime() + LINGER_NANOS;
		while (batch.size() < MAX_BATCH && this.running) {
			this.pending.drainTo(batch, MAX_BATCH - batch.size());
			long left = lingerEnd - System.nanoTime();
			if (batch.size() >= MAX_BATCH || left <= 0) {
				return;
			}
			try {
				InFlightMessage next = this.pending.poll(left, TimeUnit.NANOSECONDS);
				if (next == null) {
					return;
				}
				batch.add(next);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				return;
			}
		}
		this.pending.drainTo(batch, MAX_BATCH - batch.size());
	}

	private void send(List<InFlightMessage> batch) {
		List<String> ids = batch.stream().map(InFlightMessage::id).toList();
		List<String> leases = batch.stream().map(InFlightMessage::leaseToken).toList();
		RuntimeException failure = null;
		for (int i = 0; i < TRIES; i++) {
			try {
				List<Boolean> acked = this.store.ack(this.topic, ids, leases);
				for (int m = 0; m < ids.size(); m++) {
					if (!acked.get(m)) {
						logger.warn("Topic '" + this.topic + "' message " + ids.get(m)
								+ " handled, but its lease had expired: it may be delivered again");
					}
					else if (logger.isDebugEnabled()) {
						logger.debug("Topic '" + this.topic + "' message " + ids.get(m) + " acknowledged");
					}
				}
				return;
			}
			catch (RuntimeException ex) {
				failure = ex;
				if (i + 1 < TRIES) {
					pause(i);
				}
			}
		}
		logger.warn("Topic '" + this.topic + "': could not acknowledge messages " + ids
				+ ", they are delivered again when their lease expires: " + failure);
	}

	private static void pause(int attempt) {
		try {
			Thread.sleep(100L << attempt);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

}

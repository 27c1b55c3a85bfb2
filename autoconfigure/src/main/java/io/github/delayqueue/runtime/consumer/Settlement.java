package io.github.delayqueue.runtime.consumer;

import java.time.Duration;
import java.util.function.Supplier;

import io.github.delayqueue.store.TopicStore;
import io.github.delayqueue.store.StoreCalls;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * Ends the lease of a message this consumer holds, once: acknowledges it (through the
 * {@link AckBatcher}), schedules its retry, dead-letters it, or hands it back unfinished.
 * The only caller of {@link InFlightMessage#settle()}: whichever end comes first wins,
 * and a later one (a handler that finishes after its message was handed back or its lease
 * lost) is refused with a WARN.
 */
final class Settlement {

	private static final Log logger = LogFactory.getLog(Settlement.class);

	private final String topic;

	private final TopicStore store;

	private final AckBatcher acks;

	Settlement(String topic, TopicStore store, AckBatcher acks) {
		this.topic = topic;
		this.store = store;
		this.acks = acks;
	}

	/** The handler returned normally: the message is acknowledged with the next batch. */
	void acknowledge(InFlightMessage message) {
		if (settle(message)) {
			this.acks.acknowledge(message);
		}
	}

	/**
	 * The handler failed: the message is scheduled again after the backoff, attempts + 1.
	 */
	void retry(InFlightMessage message, Duration backoff) {
		if (!settle(message)) {
			return;
		}
		Long due = call(message, "schedule a retry",
				() -> this.store.retry(message.id(), message.leaseToken(), backoff));
		if (due != null && due < 0) {
			logger.warn("Topic '" + this.topic + "' message " + message.id()
					+ " could not be scheduled for a retry: its lease had expired");
		}
	}

	/**
	 * The handler asked to slow down: the message is scheduled again after the pause,
	 * attempts unchanged.
	 */
	void postpone(InFlightMessage message, Duration pause) {
		if (!settle(message)) {
			return;
		}
		Long due = call(message, "postpone", () -> this.store.postpone(message.id(), message.leaseToken(), pause));
		if (due != null && due < 0) {
			logger.warn("Topic '" + this.topic + "' message " + message.id()
					+ " could not be postponed: its lease had expired");
		}
	}

	/** The message failed for good: it moves to the dead-letter set with the error. */
	void deadLetter(InFlightMessage message, String error) {
		logger.warn("Topic '" + this.topic + "' message " + message.id() + " dead-lettered: " + error);
		if (!settle(message)) {
			return;
		}
		Boolean moved = call(message, "dead-letter",
				() -> this.store.deadLetter(message.id(), message.leaseToken(), error));
		if (Boolean.FALSE.equals(moved)) {
			logger.warn("Topic '" + this.topic + "' message " + message.id()
					+ " could not be dead-lettered: its lease had expired");
		}
	}

	/** The consumer stops before the message was handled: it is ready again at once. */
	void handBack(InFlightMessage message) {
		synchronized (message) {
			if (message.isSettled()) {
				return;
			}
			message.settle();
		}
		Boolean released = call(message, "hand back", () -> this.store.release(message.id(), message.leaseToken()));
		if (Boolean.TRUE.equals(released)) {
			logger.warn("Topic '" + this.topic + "' message " + message.id()
					+ " unfinished at shutdown: handed back to be delivered again");
		}
	}

	/** Redis no longer knows the lease (it expired and the message went back or on). */
	void leaseLost(InFlightMessage message) {
		synchronized (message) {
			if (message.isSettled()) {
				// Settled while the extension was on its way: nothing was lost.
				return;
			}
			message.settle();
		}
		logger.warn("Topic '" + this.topic + "' message " + message.id()
				+ " lost its lease while being handled: it may be delivered again");
	}

	private boolean settle(InFlightMessage message) {
		synchronized (message) {
			if (message.isSettled()) {
				logger.warn("Topic '" + this.topic + "' message " + message.id() + ": handler finished after its lease"
						+ " ended (handed back or lost), so it is not acknowledged and will be delivered again");
				return false;
			}
			message.settle();
			return true;
		}
	}

	private <T> @Nullable T call(InFlightMessage message, String action, Supplier<T> call) {
		try {
			return StoreCalls.withRetries(call);
		}
		catch (RuntimeException ex) {
			logger.warn("Topic '" + this.topic + "' message " + message.id() + ": could not " + action
					+ ", it is delivered again when its lease expires: " + ex);
			return null;
		}
	}

}

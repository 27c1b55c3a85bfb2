package io.github.delayqueue.benchmarks;

import java.util.List;

/**
 * One delay queue under test, as its users see it: send messages due at a given time, and
 * consume them with a number of threads. Consumers start with the client.
 */
interface QueueClient extends AutoCloseable {

	/**
	 * Sends one message.
	 * @param topic the topic
	 * @param payload the payload
	 * @param dueAtMillis when it is due, epoch milliseconds
	 */
	void send(String topic, String payload, long dueAtMillis);

	/**
	 * Sends several messages in one call.
	 * @param topic the topic
	 * @param payloads the payloads
	 * @param dueAtMillis when each is due, epoch milliseconds
	 * @throws UnsupportedOperationException if the queue has no batch send
	 */
	void sendAll(String topic, List<String> payloads, long[] dueAtMillis);

	/**
	 * Sends several messages in one call, each in a group or in none.
	 * @param topic the topic
	 * @param payloads the payloads
	 * @param dueAtMillis when each is due, epoch milliseconds
	 * @param groups the group of each, {@code null} for a message of no group
	 * @throws UnsupportedOperationException if the queue has no groups
	 */
	default void sendAll(String topic, List<String> payloads, long[] dueAtMillis, List<String> groups) {
		throw new UnsupportedOperationException("No groups");
	}

	/**
	 * Sends one message without waiting for the queue, a bounded number on their way at
	 * once; {@link #awaitSends()} waits for them.
	 * @param topic the topic
	 * @param payload the payload
	 * @param dueAtMillis when it is due, epoch milliseconds
	 * @throws UnsupportedOperationException if the queue has no asynchronous send here
	 */
	default void sendAsync(String topic, String payload, long dueAtMillis) {
		throw new UnsupportedOperationException("No asynchronous send");
	}

	/**
	 * Sets how many messages sent with {@link #sendAsync} may be on their way at once
	 * (1000 unless set); call it before the first of them.
	 * @param max the most on their way
	 */
	default void limitSendsOnTheirWay(int max) {
	}

	/**
	 * Waits until every message sent with {@link #sendAsync} is stored.
	 * @throws IllegalStateException if a send failed
	 */
	default void awaitSends() {
	}

	/**
	 * Pauses the topic's listener in this client: it claims no more, while the topic's
	 * broker keeps making due messages ready.
	 * @param topic the topic
	 * @throws UnsupportedOperationException if the queue cannot pause a listener
	 */
	default void pause(String topic) {
		throw new UnsupportedOperationException("No pause");
	}

	/**
	 * Resumes the topic's listener paused by {@link #pause(String)}.
	 * @param topic the topic
	 */
	default void resume(String topic) {
		throw new UnsupportedOperationException("No pause");
	}

	@Override
	void close();

	/** Which queue to measure. */
	enum Kind {

		/** This project, through its Spring Boot starter. */
		DELAY_QUEUE("delay-queue"),

		/** Redisson's {@code RDelayedQueue} in front of an {@code RBlockingQueue}. */
		REDISSON("redisson");

		private final String label;

		Kind(String label) {
			this.label = label;
		}

		String label() {
			return this.label;
		}

		static Kind of(String label) {
			for (Kind kind : values()) {
				if (kind.label.equals(label)) {
					return kind;
				}
			}
			throw new IllegalArgumentException("--queue must be delay-queue or redisson, got '" + label + "'");
		}

	}

}

package io.github.delayqueue.metrics;

import java.time.Duration;

/**
 * What the queue reports as it works, one call per event. Implementations must be
 * thread-safe and fast: they are called on the sending and handling threads.
 */
public interface DelayQueueMetrics {

	/** Reports nothing. */
	DelayQueueMetrics NONE = new DelayQueueMetrics() {
	};

	/**
	 * Messages were stored, or found to be duplicates, by one call to Redis.
	 * @param topic the topic
	 * @param sent messages stored
	 * @param duplicates messages whose id was already pending or in flight
	 * @param latency how long the call took
	 */
	default void sent(String topic, int sent, int duplicates, Duration latency) {
	}

	/**
	 * Messages were stored, replaced a scheduled one of their id, or were found to be
	 * duplicates, by one call to Redis. By default, replacing messages count as sent.
	 * @param topic the topic
	 * @param stored messages stored anew
	 * @param replaced messages that replaced a scheduled one of their id
	 * @param duplicates messages whose id was already pending or in flight
	 * @param latency how long the call took
	 */
	default void sent(String topic, int stored, int replaced, int duplicates, Duration latency) {
		sent(topic, stored + replaced, duplicates, latency);
	}

	/**
	 * A message was claimed and is about to be handed to its listener.
	 * @param topic the topic
	 * @param lateness claim time minus due time, by the Redis clock
	 */
	default void delivered(String topic, Duration lateness) {
	}

	/**
	 * A handler finished.
	 * @param topic the topic
	 * @param outcome what happened to the message
	 * @param duration how long the handler ran
	 * @param exception the simple class name of what the handler threw, or {@code "none"}
	 */
	default void handled(String topic, HandlingOutcome outcome, Duration duration, String exception) {
	}

	/**
	 * A message went to the dead-letter set without its handler running.
	 * @param topic the topic
	 * @param reason why: {@code unreadable}, {@code corrupt} or {@code late}
	 */
	default void deadLetteredUnhandled(String topic, String reason) {
	}

	/**
	 * Messages whose lease expired were taken back.
	 * @param topic the topic
	 * @param redelivered messages made ready again
	 * @param deadLettered messages dead-lettered because that was their last attempt
	 */
	default void leasesExpired(String topic, int redelivered, int deadLettered) {
	}

	/**
	 * A pending message was cancelled.
	 * @param topic the topic
	 */
	default void cancelled(String topic) {
	}

	/**
	 * A pending message was rescheduled.
	 * @param topic the topic
	 */
	default void rescheduled(String topic) {
	}

	/**
	 * A claim used up the room of the topic's rate limit: its due messages wait until the
	 * window has room again.
	 * @param topic the topic
	 */
	default void rateLimited(String topic) {
	}

	/**
	 * Redis lost the queue's data: the marker this application read before is gone.
	 */
	default void redisDataLost() {
	}

}

package io.github.delayqueue.listener;

import java.time.Duration;

/**
 * The settings of one topic's listener, resolved from the annotation and the properties.
 *
 * @param concurrency messages handled at once by this application
 * @param prefetch claimed messages that may wait in this application for a free handler
 * @param maxAttempts deliveries before a message is dead-lettered
 * @param visibilityTimeout lease length of a claimed message
 * @param backoff waits between attempts
 * @param idleCheckInterval longest wait for a wake-up signal before checking Redis anyway
 * @param shutdownTimeout how long stopping waits for messages being handled
 * @param maxHandlingTime how long a handler may run before its lease is no longer
 * extended
 * @param latePolicy what to do with a message claimed later than {@code lateThreshold}
 * @param lateThreshold how late a message may be before the late policy applies
 */
public record ListenerSettings(int concurrency, int prefetch, int maxAttempts, Duration visibilityTimeout,
		RetryBackoff backoff, Duration idleCheckInterval, Duration shutdownTimeout, Duration maxHandlingTime,
		LatePolicy latePolicy, Duration lateThreshold) {

	/**
	 * Checks the values.
	 * @param concurrency messages handled at once
	 * @param prefetch claimed messages that may wait for a free handler
	 * @param maxAttempts deliveries before dead-lettering
	 * @param visibilityTimeout lease length
	 * @param backoff waits between attempts
	 * @param idleCheckInterval longest idle wait
	 * @param shutdownTimeout how long stopping waits
	 * @param maxHandlingTime how long a handler may run with its lease extended
	 * @param latePolicy what to do with late messages
	 * @param lateThreshold how late a message may be before the late policy applies
	 */
	public ListenerSettings {
		if (concurrency < 1) {
			throw new IllegalArgumentException("Concurrency must be at least 1, but was " + concurrency);
		}
		if (prefetch < 0) {
			throw new IllegalArgumentException("Prefetch must not be negative, but was " + prefetch);
		}
		if (maxAttempts < 1) {
			throw new IllegalArgumentException("Max attempts must be at least 1, but was " + maxAttempts);
		}
		if (visibilityTimeout.toMillis() < 1) {
			throw new IllegalArgumentException("Visibility timeout must be positive, but was " + visibilityTimeout);
		}
		if (maxHandlingTime.toMillis() < 1) {
			throw new IllegalArgumentException("Max handling time must be positive, but was " + maxHandlingTime);
		}
		if (lateThreshold.isNegative()) {
			throw new IllegalArgumentException("Late threshold must not be negative, but was " + lateThreshold);
		}
		if (idleCheckInterval.toMillis() < 1) {
			throw new IllegalArgumentException("Idle check interval must be positive, but was " + idleCheckInterval);
		}
	}

	/**
	 * @param concurrency the concurrency to use instead
	 * @return a copy with that concurrency
	 */
	public ListenerSettings withConcurrency(int concurrency) {
		return new ListenerSettings(concurrency, this.prefetch, this.maxAttempts, this.visibilityTimeout, this.backoff,
				this.idleCheckInterval, this.shutdownTimeout, this.maxHandlingTime, this.latePolicy,
				this.lateThreshold);
	}

	/**
	 * @param maxAttempts the maximum attempts to use instead
	 * @return a copy with those maximum attempts
	 */
	public ListenerSettings withMaxAttempts(int maxAttempts) {
		return new ListenerSettings(this.concurrency, this.prefetch, maxAttempts, this.visibilityTimeout, this.backoff,
				this.idleCheckInterval, this.shutdownTimeout, this.maxHandlingTime, this.latePolicy,
				this.lateThreshold);
	}

}

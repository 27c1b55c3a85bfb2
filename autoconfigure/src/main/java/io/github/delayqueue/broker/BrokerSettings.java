package io.github.delayqueue.broker;

import java.time.Duration;

/**
 * Settings of a broker.
 *
 * @param batchSize largest number of messages one promote call moves (1 to 1000)
 * @param maxSleep longest sleep without checking Redis when no wake-up signal arrives
 */
public record BrokerSettings(int batchSize, Duration maxSleep) {

	/**
	 * Checks the settings.
	 * @param batchSize largest number of messages one promote call moves
	 * @param maxSleep longest sleep without a check
	 */
	public BrokerSettings {
		if (batchSize < 1 || batchSize > 1000) {
			throw new IllegalArgumentException("delay-queue.broker.batch-size must be 1 to 1000, but was " + batchSize);
		}
		if (maxSleep.isNegative() || maxSleep.isZero()) {
			throw new IllegalArgumentException("delay-queue.broker.max-sleep must be positive, but was " + maxSleep);
		}
	}

}

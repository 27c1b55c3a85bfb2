package io.github.delayqueue.runtime.broker;

import io.github.delayqueue.time.Durations;
import java.time.Duration;

/**
 * Settings of a broker.
 *
 * @param batchSize largest number of messages one promote call moves (1 to 1000)
 * @param maxSleep longest sleep without checking Redis when no wake-up signal arrives
 * @param lookahead how long before their due time messages are made ready, for consumers
 * to hold and deliver at the due time (zero to one minute)
 */
public record BrokerSettings(int batchSize, Duration maxSleep, Duration lookahead) {

	/** The longest lookahead. */
	public static final Duration MAX_LOOKAHEAD = Duration.ofMinutes(1);

	/**
	 * Checks the settings.
	 * @param batchSize largest number of messages one promote call moves
	 * @param maxSleep longest sleep without a check
	 * @param lookahead how long before their due time messages are made ready
	 */
	public BrokerSettings {
		if (batchSize < 1 || batchSize > 1000) {
			throw new IllegalArgumentException("delay-queue.broker.batch-size must be 1 to 1000, but was " + batchSize);
		}
		if (maxSleep.isNegative() || maxSleep.isZero()) {
			throw new IllegalArgumentException("delay-queue.broker.max-sleep must be positive, but was " + maxSleep);
		}
		if (lookahead.isNegative() || lookahead.compareTo(MAX_LOOKAHEAD) > 0) {
			throw new IllegalArgumentException("delay-queue.broker.lookahead must be zero to "
					+ Durations.format(MAX_LOOKAHEAD) + ", but was " + Durations.format(lookahead));
		}
	}

}

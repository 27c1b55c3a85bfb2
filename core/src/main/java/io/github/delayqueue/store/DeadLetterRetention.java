package io.github.delayqueue.store;

import java.time.Duration;

import io.github.delayqueue.time.Durations;

/**
 * How many dead letters a topic keeps, and how long (as BullMQ's {@code removeOnFail}):
 * the call that buries a dead letter deletes the oldest beyond either bound, at most 100
 * a call. Keeping all, the default, is {@link #KEEP_ALL}.
 *
 * @param maxCount the most dead letters kept, 0 for no bound
 * @param maxAge how long a dead letter is kept, {@link Duration#ZERO} for no bound
 */
public record DeadLetterRetention(long maxCount, Duration maxAge) {

	/** Every dead letter is kept until it is replayed or purged. */
	public static final DeadLetterRetention KEEP_ALL = new DeadLetterRetention(0, Duration.ZERO);

	/**
	 * @throws IllegalArgumentException if a bound is negative
	 */
	public DeadLetterRetention {
		if (maxCount < 0) {
			throw new IllegalArgumentException("The most dead letters kept must not be negative, but was " + maxCount);
		}
		if (maxAge.isNegative()) {
			throw new IllegalArgumentException(
					"How long dead letters are kept must not be negative, but was " + Durations.format(maxAge));
		}
	}

	/**
	 * The share of one partition of a topic with a given number of them, which the script
	 * that buries sees alone: {@code maxCount / partitions} dead letters (at least one),
	 * so that the topic keeps no more than {@code maxCount} (unless it is smaller than
	 * the number of partitions), each for {@code maxAge}.
	 * @param partitions the topic's number of partitions, at least 1
	 * @return the retention of each partition
	 */
	public DeadLetterRetention perPartition(int partitions) {
		if (partitions <= 1 || this.maxCount == 0) {
			return this;
		}
		return new DeadLetterRetention(Math.max(1, this.maxCount / partitions), this.maxAge);
	}

}

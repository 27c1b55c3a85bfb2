package io.github.delayqueue.store;

import io.github.delayqueue.time.Durations;
import java.time.Duration;

import org.jspecify.annotations.Nullable;

/**
 * At most {@code limit} deliveries of a topic start in any window of {@code period},
 * across every application of the topic together: a sliding window kept in Redis by the
 * claim script, which takes no more due messages than the window has room for.
 *
 * @param limit the most deliveries in any window, 1 to {@value #MAX_LIMIT}
 * @param period the length of the window, 1 millisecond to a day
 */
public record RateLimit(int limit, Duration period) {

	/** The largest limit accepted. */
	public static final int MAX_LIMIT = 1_000_000;

	/** The longest period accepted. */
	public static final Duration MAX_PERIOD = Duration.ofDays(1);

	/**
	 * Checks the values.
	 * @param limit the most deliveries in any window
	 * @param period the length of the window
	 */
	public RateLimit {
		String problem = limitProblem(limit);
		if (problem != null) {
			throw new IllegalArgumentException("Rate limit " + problem);
		}
		problem = periodProblem(period);
		if (problem != null) {
			throw new IllegalArgumentException("Rate limit period " + problem);
		}
	}

	/**
	 * Tells what is wrong with a limit.
	 * @param limit the limit
	 * @return the problem, to follow the setting's name, or {@code null} if it is valid
	 */
	public static @Nullable String limitProblem(int limit) {
		if (limit < 1 || limit > MAX_LIMIT) {
			return "must be between 1 and " + MAX_LIMIT + ", but was " + limit;
		}
		return null;
	}

	/**
	 * Tells what is wrong with a period.
	 * @param period the period
	 * @return the problem, to follow the setting's name, or {@code null} if it is valid
	 */
	public static @Nullable String periodProblem(Duration period) {
		if (period.compareTo(Duration.ofMillis(1)) < 0 || period.compareTo(MAX_PERIOD) > 0) {
			return "must be between 1ms and " + Durations.format(MAX_PERIOD) + ", but was " + Durations.format(period);
		}
		return null;
	}

	/**
	 * Tells what is wrong with a limit for a topic spread over partitions: each partition
	 * enforces a share of at least 1.
	 * @param limit the limit
	 * @param partitions the number of partitions of the topic
	 * @return the problem, to follow the setting's name, or {@code null} if the limit can
	 * be shared
	 */
	public static @Nullable String shareProblem(int limit, int partitions) {
		if (limit < partitions) {
			return "must be at least the number of partitions (" + partitions + "), but was " + limit
					+ ": each partition enforces its own share of the limit, at least 1";
		}
		return null;
	}

	/**
	 * The share of one partition of a topic spread over several, each a topic of its own
	 * in Redis (its own hash slot, which a script cannot leave, so each partition keeps
	 * its own window): an equal part of the limit, the remainder going one each to the
	 * first partitions, so that the shares add up to the limit exactly.
	 * @param partition the partition's index, 0 to {@code partitions - 1}
	 * @param partitions the number of partitions of the topic
	 * @return the rate limit of that partition
	 * @throws IllegalArgumentException if the limit is below the number of partitions
	 */
	public RateLimit share(int partition, int partitions) {
		if (partition < 0 || partition >= partitions) {
			throw new IllegalArgumentException(
					"Partition " + partition + " is not one of the " + partitions + " partitions");
		}
		String problem = shareProblem(this.limit, partitions);
		if (problem != null) {
			throw new IllegalArgumentException("Rate limit " + problem);
		}
		int share = this.limit / partitions + ((partition < this.limit % partitions) ? 1 : 0);
		return (share == this.limit) ? this : new RateLimit(share, this.period);
	}

}

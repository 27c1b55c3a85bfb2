package io.github.delayqueue.listener;

import java.time.Duration;
import java.util.List;

import io.github.delayqueue.store.GroupWeights;
import io.github.delayqueue.store.RateLimit;
import io.github.delayqueue.time.Durations;
import io.github.delayqueue.time.RetryBackoff;
import org.jspecify.annotations.Nullable;

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
 * @param maxBatchSize most messages a batch listener receives in one call; ignored by a
 * listener of single messages
 * @param batchTimeout longest wait to fill a batch once its first message is due; ignored
 * by a listener of single messages
 * @param rateLimit most deliveries of the topic in any window of a period, across every
 * application together, or {@code null} for none
 * @param noRetryFor exceptions dead-lettered at their first failure: an exception or one
 * of its causes is an instance of one of them
 * @param groupConcurrency most messages of one group in flight at once, across every
 * application together, or {@code 0} for no limit
 * @param strictGroupOrder whether a message of a group that fails (or slows down) waits
 * in its group for its next attempt, its group waiting with it, so that no later message
 * of the group passes it; else it waits in the schedule, and its group goes on
 * @param groupWeights the weights of the groups that take longer turns than the others
 * @param groupRateLimit most deliveries of one group in any window of a period, across
 * every application together, or {@code null} for none
 */
public record ListenerSettings(int concurrency, int prefetch, int maxAttempts, Duration visibilityTimeout,
		RetryBackoff backoff, Duration idleCheckInterval, Duration shutdownTimeout, Duration maxHandlingTime,
		LatePolicy latePolicy, Duration lateThreshold, int maxBatchSize, Duration batchTimeout,
		@Nullable RateLimit rateLimit, List<Class<? extends Throwable>> noRetryFor, int groupConcurrency,
		boolean strictGroupOrder, GroupWeights groupWeights, @Nullable RateLimit groupRateLimit) {

	/** The largest group concurrency accepted. */
	public static final int MAX_GROUP_CONCURRENCY = 1000;

	/** The maximum batch size unless configured. */
	public static final int DEFAULT_MAX_BATCH_SIZE = 100;

	/** The batch timeout unless configured. */
	public static final Duration DEFAULT_BATCH_TIMEOUT = Duration.ofMillis(100);

	/** The largest maximum batch size accepted. */
	public static final int MAX_BATCH_SIZE_LIMIT = 1000;

	/** The longest batch timeout accepted. */
	public static final Duration BATCH_TIMEOUT_LIMIT = Duration.ofMinutes(1);

	/**
	 * The longest visibility timeout and idle check interval accepted: about a hundred
	 * years, for as long as it takes.
	 */
	public static final Duration MAX_DURATION = Duration.ofDays(36_500);

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
	 * @param maxBatchSize most messages in one call of a batch listener
	 * @param batchTimeout longest wait to fill a batch
	 * @param rateLimit most deliveries in any window of a period, or {@code null}
	 * @param noRetryFor exceptions dead-lettered at their first failure
	 * @param groupConcurrency most messages of one group in flight at once, or {@code 0}
	 * @param strictGroupOrder whether a failed message of a group waits in its group
	 * @param groupWeights the weights of the groups that take longer turns
	 * @param groupRateLimit most deliveries of one group in any window, or {@code null}
	 */
	public ListenerSettings {
		noRetryFor = List.copyOf(noRetryFor);
		if (concurrency < 1) {
			throw new IllegalArgumentException("Concurrency must be at least 1, but was " + concurrency);
		}
		if (prefetch < 0) {
			throw new IllegalArgumentException("Prefetch must not be negative, but was " + prefetch);
		}
		if (maxAttempts < 1) {
			throw new IllegalArgumentException("Max attempts must be at least 1, but was " + maxAttempts);
		}
		requirePositive("Visibility timeout", visibilityTimeout);
		requireAtMostMax("Visibility timeout", visibilityTimeout);
		requirePositive("Max handling time", maxHandlingTime);
		if (lateThreshold.isNegative()) {
			throw new IllegalArgumentException(
					"Late threshold must not be negative, but was " + Durations.format(lateThreshold));
		}
		requirePositive("Idle check interval", idleCheckInterval);
		requireAtMostMax("Idle check interval", idleCheckInterval);
		String batchProblem = maxBatchSizeProblem(maxBatchSize);
		if (batchProblem != null) {
			throw new IllegalArgumentException("Max batch size " + batchProblem);
		}
		batchProblem = batchTimeoutProblem(batchTimeout);
		if (batchProblem != null) {
			throw new IllegalArgumentException("Batch timeout " + batchProblem);
		}
		String groupProblem = groupConcurrencyProblem(groupConcurrency);
		if (groupProblem != null) {
			throw new IllegalArgumentException("Group concurrency " + groupProblem);
		}
	}

	/**
	 * Settings whose groups all weigh 1.
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
	 * @param maxBatchSize most messages in one call of a batch listener
	 * @param batchTimeout longest wait to fill a batch
	 * @param rateLimit most deliveries in any window of a period, or {@code null}
	 * @param noRetryFor exceptions dead-lettered at their first failure
	 * @param groupConcurrency most messages of one group in flight at once, or {@code 0}
	 * @param strictGroupOrder whether a failed message of a group waits in its group
	 */
	public ListenerSettings(int concurrency, int prefetch, int maxAttempts, Duration visibilityTimeout,
			RetryBackoff backoff, Duration idleCheckInterval, Duration shutdownTimeout, Duration maxHandlingTime,
			LatePolicy latePolicy, Duration lateThreshold, int maxBatchSize, Duration batchTimeout,
			@Nullable RateLimit rateLimit, List<Class<? extends Throwable>> noRetryFor, int groupConcurrency,
			boolean strictGroupOrder) {
		this(concurrency, prefetch, maxAttempts, visibilityTimeout, backoff, idleCheckInterval, shutdownTimeout,
				maxHandlingTime, latePolicy, lateThreshold, maxBatchSize, batchTimeout, rateLimit, noRetryFor,
				groupConcurrency, strictGroupOrder, GroupWeights.NONE, null);
	}

	/**
	 * Settings whose failed messages of a group wait in the schedule (no strict group
	 * order).
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
	 * @param maxBatchSize most messages in one call of a batch listener
	 * @param batchTimeout longest wait to fill a batch
	 * @param rateLimit most deliveries in any window of a period, or {@code null}
	 * @param noRetryFor exceptions dead-lettered at their first failure
	 * @param groupConcurrency most messages of one group in flight at once, or {@code 0}
	 */
	public ListenerSettings(int concurrency, int prefetch, int maxAttempts, Duration visibilityTimeout,
			RetryBackoff backoff, Duration idleCheckInterval, Duration shutdownTimeout, Duration maxHandlingTime,
			LatePolicy latePolicy, Duration lateThreshold, int maxBatchSize, Duration batchTimeout,
			@Nullable RateLimit rateLimit, List<Class<? extends Throwable>> noRetryFor, int groupConcurrency) {
		this(concurrency, prefetch, maxAttempts, visibilityTimeout, backoff, idleCheckInterval, shutdownTimeout,
				maxHandlingTime, latePolicy, lateThreshold, maxBatchSize, batchTimeout, rateLimit, noRetryFor,
				groupConcurrency, false);
	}

	/**
	 * Settings without a group concurrency limit.
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
	 * @param maxBatchSize most messages in one call of a batch listener
	 * @param batchTimeout longest wait to fill a batch
	 * @param rateLimit most deliveries in any window of a period, or {@code null}
	 * @param noRetryFor exceptions dead-lettered at their first failure
	 */
	public ListenerSettings(int concurrency, int prefetch, int maxAttempts, Duration visibilityTimeout,
			RetryBackoff backoff, Duration idleCheckInterval, Duration shutdownTimeout, Duration maxHandlingTime,
			LatePolicy latePolicy, Duration lateThreshold, int maxBatchSize, Duration batchTimeout,
			@Nullable RateLimit rateLimit, List<Class<? extends Throwable>> noRetryFor) {
		this(concurrency, prefetch, maxAttempts, visibilityTimeout, backoff, idleCheckInterval, shutdownTimeout,
				maxHandlingTime, latePolicy, lateThreshold, maxBatchSize, batchTimeout, rateLimit, noRetryFor, 0);
	}

	/**
	 * Settings without exceptions that are not retried.
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
	 * @param maxBatchSize most messages in one call of a batch listener
	 * @param batchTimeout longest wait to fill a batch
	 * @param rateLimit most deliveries in any window of a period, or {@code null}
	 */
	public ListenerSettings(int concurrency, int prefetch, int maxAttempts, Duration visibilityTimeout,
			RetryBackoff backoff, Duration idleCheckInterval, Duration shutdownTimeout, Duration maxHandlingTime,
			LatePolicy latePolicy, Duration lateThreshold, int maxBatchSize, Duration batchTimeout,
			@Nullable RateLimit rateLimit) {
		this(concurrency, prefetch, maxAttempts, visibilityTimeout, backoff, idleCheckInterval, shutdownTimeout,
				maxHandlingTime, latePolicy, lateThreshold, maxBatchSize, batchTimeout, rateLimit, List.of());
	}

	/**
	 * Settings without a rate limit.
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
	 * @param maxBatchSize most messages in one call of a batch listener
	 * @param batchTimeout longest wait to fill a batch
	 */
	public ListenerSettings(int concurrency, int prefetch, int maxAttempts, Duration visibilityTimeout,
			RetryBackoff backoff, Duration idleCheckInterval, Duration shutdownTimeout, Duration maxHandlingTime,
			LatePolicy latePolicy, Duration lateThreshold, int maxBatchSize, Duration batchTimeout) {
		this(concurrency, prefetch, maxAttempts, visibilityTimeout, backoff, idleCheckInterval, shutdownTimeout,
				maxHandlingTime, latePolicy, lateThreshold, maxBatchSize, batchTimeout, null, List.of());
	}

	/**
	 * Settings with the default maximum batch size and batch timeout.
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
	public ListenerSettings(int concurrency, int prefetch, int maxAttempts, Duration visibilityTimeout,
			RetryBackoff backoff, Duration idleCheckInterval, Duration shutdownTimeout, Duration maxHandlingTime,
			LatePolicy latePolicy, Duration lateThreshold) {
		this(concurrency, prefetch, maxAttempts, visibilityTimeout, backoff, idleCheckInterval, shutdownTimeout,
				maxHandlingTime, latePolicy, lateThreshold, DEFAULT_MAX_BATCH_SIZE, DEFAULT_BATCH_TIMEOUT, null,
				List.of());
	}

	/**
	 * Tells what is wrong with a maximum batch size.
	 * @param maxBatchSize the maximum batch size
	 * @return the problem, to follow the setting's name, or {@code null} if it is valid
	 */
	public static @Nullable String maxBatchSizeProblem(int maxBatchSize) {
		if (maxBatchSize < 1 || maxBatchSize > MAX_BATCH_SIZE_LIMIT) {
			return "must be between 1 and " + MAX_BATCH_SIZE_LIMIT + ", but was " + maxBatchSize;
		}
		return null;
	}

	private static void requirePositive(String name, Duration duration) {
		if (duration.compareTo(Duration.ofMillis(1)) < 0) {
			throw new IllegalArgumentException(name + " must be positive, but was " + Durations.format(duration));
		}
	}

	private static void requireAtMostMax(String name, Duration duration) {
		if (duration.compareTo(MAX_DURATION) > 0) {
			throw new IllegalArgumentException(name + " must be at most " + Durations.format(MAX_DURATION)
					+ ", but was " + Durations.format(duration));
		}
	}

	/**
	 * Tells what is wrong with a group concurrency.
	 * @param groupConcurrency the group concurrency, {@code 0} for no limit
	 * @return the problem, to follow the setting's name, or {@code null} if it is valid
	 */
	public static @Nullable String groupConcurrencyProblem(int groupConcurrency) {
		if (groupConcurrency < 0 || groupConcurrency > MAX_GROUP_CONCURRENCY) {
			return "must be between 1 and " + MAX_GROUP_CONCURRENCY + " (0 for no limit), but was " + groupConcurrency;
		}
		return null;
	}

	/**
	 * Tells what is wrong with a batch timeout.
	 * @param batchTimeout the batch timeout
	 * @return the problem, to follow the setting's name, or {@code null} if it is valid
	 */
	public static @Nullable String batchTimeoutProblem(Duration batchTimeout) {
		if (batchTimeout.compareTo(Duration.ofMillis(1)) < 0 || batchTimeout.compareTo(BATCH_TIMEOUT_LIMIT) > 0) {
			return "must be between 1ms and " + BATCH_TIMEOUT_LIMIT + ", but was " + batchTimeout;
		}
		return null;
	}

	/**
	 * @param concurrency the concurrency to use instead
	 * @return a copy with that concurrency
	 */
	public ListenerSettings withConcurrency(int concurrency) {
		return new ListenerSettings(concurrency, this.prefetch, this.maxAttempts, this.visibilityTimeout, this.backoff,
				this.idleCheckInterval, this.shutdownTimeout, this.maxHandlingTime, this.latePolicy, this.lateThreshold,
				this.maxBatchSize, this.batchTimeout, this.rateLimit, this.noRetryFor, this.groupConcurrency,
				this.strictGroupOrder, this.groupWeights, this.groupRateLimit);
	}

	/**
	 * @param maxAttempts the maximum attempts to use instead
	 * @return a copy with those maximum attempts
	 */
	public ListenerSettings withMaxAttempts(int maxAttempts) {
		return new ListenerSettings(this.concurrency, this.prefetch, maxAttempts, this.visibilityTimeout, this.backoff,
				this.idleCheckInterval, this.shutdownTimeout, this.maxHandlingTime, this.latePolicy, this.lateThreshold,
				this.maxBatchSize, this.batchTimeout, this.rateLimit, this.noRetryFor, this.groupConcurrency,
				this.strictGroupOrder, this.groupWeights, this.groupRateLimit);
	}

	/**
	 * @param maxBatchSize the maximum batch size to use instead
	 * @return a copy with that maximum batch size
	 */
	public ListenerSettings withMaxBatchSize(int maxBatchSize) {
		return new ListenerSettings(this.concurrency, this.prefetch, this.maxAttempts, this.visibilityTimeout,
				this.backoff, this.idleCheckInterval, this.shutdownTimeout, this.maxHandlingTime, this.latePolicy,
				this.lateThreshold, maxBatchSize, this.batchTimeout, this.rateLimit, this.noRetryFor,
				this.groupConcurrency, this.strictGroupOrder, this.groupWeights, this.groupRateLimit);
	}

	/**
	 * @param batchTimeout the batch timeout to use instead
	 * @return a copy with that batch timeout
	 */
	public ListenerSettings withBatchTimeout(Duration batchTimeout) {
		return new ListenerSettings(this.concurrency, this.prefetch, this.maxAttempts, this.visibilityTimeout,
				this.backoff, this.idleCheckInterval, this.shutdownTimeout, this.maxHandlingTime, this.latePolicy,
				this.lateThreshold, this.maxBatchSize, batchTimeout, this.rateLimit, this.noRetryFor,
				this.groupConcurrency, this.strictGroupOrder, this.groupWeights, this.groupRateLimit);
	}

	/**
	 * @param rateLimit the rate limit to use instead, or {@code null} for none
	 * @return a copy with that rate limit
	 */
	public ListenerSettings withRateLimit(@Nullable RateLimit rateLimit) {
		return new ListenerSettings(this.concurrency, this.prefetch, this.maxAttempts, this.visibilityTimeout,
				this.backoff, this.idleCheckInterval, this.shutdownTimeout, this.maxHandlingTime, this.latePolicy,
				this.lateThreshold, this.maxBatchSize, this.batchTimeout, rateLimit, this.noRetryFor,
				this.groupConcurrency, this.strictGroupOrder, this.groupWeights, this.groupRateLimit);
	}

	/**
	 * @param noRetryFor the exceptions dead-lettered at their first failure, to use
	 * instead
	 * @return a copy with those exceptions
	 */
	public ListenerSettings withNoRetryFor(List<Class<? extends Throwable>> noRetryFor) {
		return new ListenerSettings(this.concurrency, this.prefetch, this.maxAttempts, this.visibilityTimeout,
				this.backoff, this.idleCheckInterval, this.shutdownTimeout, this.maxHandlingTime, this.latePolicy,
				this.lateThreshold, this.maxBatchSize, this.batchTimeout, this.rateLimit, noRetryFor,
				this.groupConcurrency, this.strictGroupOrder, this.groupWeights, this.groupRateLimit);
	}

	/**
	 * @param groupConcurrency most messages of one group in flight at once, or {@code 0}
	 * for no limit
	 * @return a copy with that group concurrency
	 */
	public ListenerSettings withGroupConcurrency(int groupConcurrency) {
		return new ListenerSettings(this.concurrency, this.prefetch, this.maxAttempts, this.visibilityTimeout,
				this.backoff, this.idleCheckInterval, this.shutdownTimeout, this.maxHandlingTime, this.latePolicy,
				this.lateThreshold, this.maxBatchSize, this.batchTimeout, this.rateLimit, this.noRetryFor,
				groupConcurrency, this.strictGroupOrder, this.groupWeights, this.groupRateLimit);
	}

	/**
	 * @param strictGroupOrder whether a failed message of a group waits in its group for
	 * its next attempt, its group with it
	 * @return a copy with that group order
	 */
	public ListenerSettings withStrictGroupOrder(boolean strictGroupOrder) {
		return new ListenerSettings(this.concurrency, this.prefetch, this.maxAttempts, this.visibilityTimeout,
				this.backoff, this.idleCheckInterval, this.shutdownTimeout, this.maxHandlingTime, this.latePolicy,
				this.lateThreshold, this.maxBatchSize, this.batchTimeout, this.rateLimit, this.noRetryFor,
				this.groupConcurrency, strictGroupOrder, this.groupWeights, this.groupRateLimit);
	}

	/**
	 * @param groupWeights the weights of the groups to use instead
	 * @return these settings with the given group weights
	 */
	public ListenerSettings withGroupWeights(GroupWeights groupWeights) {
		return new ListenerSettings(this.concurrency, this.prefetch, this.maxAttempts, this.visibilityTimeout,
				this.backoff, this.idleCheckInterval, this.shutdownTimeout, this.maxHandlingTime, this.latePolicy,
				this.lateThreshold, this.maxBatchSize, this.batchTimeout, this.rateLimit, this.noRetryFor,
				this.groupConcurrency, this.strictGroupOrder, groupWeights, this.groupRateLimit);
	}

	/**
	 * @param groupRateLimit the per-group rate limit to use instead, or {@code null} for
	 * none
	 * @return these settings with the given per-group rate limit
	 */
	public ListenerSettings withGroupRateLimit(@Nullable RateLimit groupRateLimit) {
		return new ListenerSettings(this.concurrency, this.prefetch, this.maxAttempts, this.visibilityTimeout,
				this.backoff, this.idleCheckInterval, this.shutdownTimeout, this.maxHandlingTime, this.latePolicy,
				this.lateThreshold, this.maxBatchSize, this.batchTimeout, this.rateLimit, this.noRetryFor,
				this.groupConcurrency, this.strictGroupOrder, this.groupWeights, groupRateLimit);
	}

	/**
	 * What the built-in policy does with a failed delivery: slow down for a
	 * {@link SlowDownException}, the exception or one of its causes (as
	 * {@code CompletableFuture.join()} wraps one); dead-letter on the last attempt, or
	 * when the exception or one of its causes is one of {@link #noRetryFor()}; else retry
	 * after the backoff.
	 * @param exception what the listener threw
	 * @param attempt the attempt that failed, 1 for the first delivery
	 * @return the action
	 */
	public FailureAction defaultAction(Throwable exception, int attempt) {
		if (ExceptionCauses.find(exception, SlowDownException.class) instanceof SlowDownException slowDown) {
			return FailureAction.slowDown(slowDown.pause());
		}
		if (attempt >= this.maxAttempts || notRetried(exception)) {
			return FailureAction.deadLetter();
		}
		Duration pause = this.backoff.after(attempt);
		return FailureAction
			.retryAfter((pause.compareTo(FailureAction.MAX_RETRY_PAUSE) > 0) ? FailureAction.MAX_RETRY_PAUSE : pause);
	}

	private boolean notRetried(Throwable exception) {
		for (Class<? extends Throwable> type : this.noRetryFor) {
			if (ExceptionCauses.find(exception, type) != null) {
				return true;
			}
		}
		return false;
	}

}

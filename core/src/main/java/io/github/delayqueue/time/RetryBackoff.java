package io.github.delayqueue.time;

import java.time.Duration;

import org.springframework.util.backoff.BackOff;
import org.springframework.util.backoff.BackOffExecution;

/**
 * Exponential back-off, the one back-off rule of the queue: between a listener's delivery
 * attempts ({@link #after(int)}), and as a Spring {@link BackOff} for the store calls
 * tried again after a failure ({@link #limitedTo(int)}, {@link #unlimited()}).
 *
 * @param initialInterval wait before the second attempt
 * @param multiplier factor applied after each further failed attempt, at least 1
 * @param maxInterval longest wait
 */
public record RetryBackoff(Duration initialInterval, double multiplier, Duration maxInterval) {

	/** The longest max interval accepted: about a hundred years. */
	public static final Duration MAX_INTERVAL = Duration.ofDays(36_500);

	/**
	 * Checks the values.
	 * @param initialInterval wait before the second attempt
	 * @param multiplier factor applied after each further failed attempt
	 * @param maxInterval longest wait
	 */
	public RetryBackoff {
		if (initialInterval.isNegative()) {
			throw new IllegalArgumentException(
					"Backoff initial interval must not be negative, but was " + Durations.format(initialInterval));
		}
		if (!(multiplier >= 1.0) || Double.isInfinite(multiplier)) {
			throw new IllegalArgumentException("Backoff multiplier must be at least 1, but was " + multiplier);
		}
		if (maxInterval.compareTo(initialInterval) < 0) {
			throw new IllegalArgumentException("Backoff max interval " + maxInterval
					+ " must not be less than the initial interval " + Durations.format(initialInterval));
		}
		if (maxInterval.compareTo(MAX_INTERVAL) > 0) {
			throw new IllegalArgumentException("Backoff max interval must be at most " + Durations.format(MAX_INTERVAL)
					+ ", but was " + Durations.format(maxInterval));
		}
	}

	/**
	 * The wait after a failed attempt.
	 * @param failedAttempt the attempt that failed, 1 for the first delivery
	 * @return the wait before the next attempt
	 */
	public Duration after(int failedAttempt) {
		double millis = this.initialInterval.toMillis() * Math.pow(this.multiplier, Math.max(0, failedAttempt - 1));
		long max = this.maxInterval.toMillis();
		return Duration.ofMillis((millis >= max) ? max : (long) millis);
	}

	/**
	 * A {@link BackOff} that waits {@link #after(int) after} each failed try in turn, for
	 * a number of retries.
	 * @param retries how many retries at most
	 * @return the back-off
	 */
	public BackOff limitedTo(int retries) {
		if (retries < 0) {
			throw new IllegalArgumentException("The number of retries must not be negative, but was " + retries);
		}
		return () -> new Execution(retries);
	}

	/**
	 * A {@link BackOff} that waits {@link #after(int) after} each failed try in turn,
	 * without end.
	 * @return the back-off
	 */
	public BackOff unlimited() {
		return () -> new Execution(-1);
	}

	/** The waits of one run of tries. */
	private final class Execution implements BackOffExecution {

		private final int retries;

		private int failed;

		Execution(int retries) {
			this.retries = retries;
		}

		@Override
		public long nextBackOff() {
			if (this.retries >= 0 && this.failed >= this.retries) {
				return STOP;
			}
			if (this.failed < Integer.MAX_VALUE) {
				this.failed++;
			}
			return after(this.failed).toMillis();
		}

	}

}

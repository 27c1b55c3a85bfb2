package io.github.delayqueue.store;

import java.time.Duration;

import org.springframework.util.backoff.BackOff;
import org.springframework.util.backoff.BackOffExecution;

/**
 * A {@link BackOff} that waits a first interval, then twice as long each time, up to a
 * longest interval, for a number of retries or without end. Spring's own
 * {@code ExponentialBackOff} changed between Spring Framework 6.2 and 7 (attempts as
 * {@code int} or {@code long}, jitter); this one behaves the same on both.
 */
public final class DoublingBackOff implements BackOff {

	/** A number of retries that never runs out. */
	public static final int UNLIMITED = Integer.MAX_VALUE;

	private final long firstMillis;

	private final long longestMillis;

	private final int retries;

	/**
	 * Creates a back-off.
	 * @param first the wait before the first retry, at least a millisecond
	 * @param longest the longest wait, at least the first
	 * @param retries how many retries at most, or {@link #UNLIMITED}
	 */
	public DoublingBackOff(Duration first, Duration longest, int retries) {
		if (first.toMillis() < 1 || longest.compareTo(first) < 0 || retries < 0) {
			throw new IllegalArgumentException("A back-off needs a first wait of at least 1ms, a longest wait of at"
					+ " least the first and a number of retries not below 0, but got " + first + ", " + longest
					+ " and " + retries);
		}
		this.firstMillis = first.toMillis();
		this.longestMillis = longest.toMillis();
		this.retries = retries;
	}

	/**
	 * @return the longest wait
	 */
	public Duration longest() {
		return Duration.ofMillis(this.longestMillis);
	}

	/**
	 * @return how many retries at most, or {@link #UNLIMITED}
	 */
	public int retries() {
		return this.retries;
	}

	@Override
	public BackOffExecution start() {
		return new Execution();
	}

	@Override
	public String toString() {
		return "DoublingBackOff[first=" + this.firstMillis + "ms, longest=" + this.longestMillis + "ms, retries="
				+ ((this.retries == UNLIMITED) ? "unlimited" : this.retries) + "]";
	}

	private final class Execution implements BackOffExecution {

		private int retried;

		private long nextMillis = DoublingBackOff.this.firstMillis;

		@Override
		public long nextBackOff() {
			if (this.retried >= DoublingBackOff.this.retries) {
				return STOP;
			}
			if (DoublingBackOff.this.retries != UNLIMITED) {
				this.retried++;
			}
			long wait = this.nextMillis;
			this.nextMillis = Math.min(DoublingBackOff.this.longestMillis, wait * 2);
			return wait;
		}

	}

}

package io.github.delayqueue.runtime.support;

import java.time.Duration;

/**
 * Durations as nanoseconds for {@link System#nanoTime()} arithmetic, saturated: a
 * duration too long for a {@code long} of nanoseconds (about 292 years, e.g. a timeout
 * meant as "as long as it takes") counts as {@value #MAX} ns, about 146 years, so that a
 * deadline {@code now + nanos} and the time left until it never overflow.
 */
public final class Nanoseconds {

	/** The longest duration in nanoseconds: half of {@link Long#MAX_VALUE}. */
	public static final long MAX = Long.MAX_VALUE / 2;

	private Nanoseconds() {
	}

	/**
	 * A duration in nanoseconds, at most {@value #MAX}; a negative one counts as 0.
	 * @param duration the duration
	 * @return its nanoseconds, between 0 and {@value #MAX}
	 */
	public static long of(Duration duration) {
		if (duration.isNegative()) {
			return 0;
		}
		if (duration.getSeconds() >= MAX / 1_000_000_000L) {
			return MAX;
		}
		return Math.min(MAX, duration.toNanos());
	}

}

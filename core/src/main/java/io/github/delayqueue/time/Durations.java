package io.github.delayqueue.time;

import java.time.Duration;

/**
 * Writes a {@link Duration} the way it is written in {@code application.yml}: a number
 * and the largest unit that expresses it exactly ({@code 3700d}, {@code 90s},
 * {@code 1500ms}), instead of ISO 8601 ({@code PT88800H}).
 */
public final class Durations {

	private static final long SECONDS_PER_MINUTE = 60;

	private static final long SECONDS_PER_HOUR = 60 * SECONDS_PER_MINUTE;

	private static final long SECONDS_PER_DAY = 24 * SECONDS_PER_HOUR;

	private static final int NANOS_PER_MILLI = 1_000_000;

	private static final int NANOS_PER_MICRO = 1_000;

	private Durations() {
	}

	/**
	 * Writes a duration as a number and a unit: {@code d}, {@code h}, {@code m},
	 * {@code s}, {@code ms}, {@code us} or {@code ns}.
	 * @param duration the duration
	 * @return the text, such as {@code 30s}; {@code -} in front of a negative one
	 */
	public static String format(Duration duration) {
		if (duration.isNegative()) {
			return (duration.equals(Duration.ofSeconds(Long.MIN_VALUE))) ? duration.toString()
					: "-" + format(duration.negated());
		}
		long seconds = duration.getSeconds();
		int nanos = duration.getNano();
		if (nanos == 0) {
			return wholeSeconds(seconds);
		}
		try {
			if (nanos % NANOS_PER_MILLI == 0) {
				return Math.addExact(Math.multiplyExact(seconds, 1000L), nanos / NANOS_PER_MILLI) + "ms";
			}
			if (nanos % NANOS_PER_MICRO == 0) {
				return Math.addExact(Math.multiplyExact(seconds, 1_000_000L), nanos / NANOS_PER_MICRO) + "us";
			}
			return Math.addExact(Math.multiplyExact(seconds, 1_000_000_000L), nanos) + "ns";
		}
		catch (ArithmeticException ex) {
			return duration.toString();
		}
	}

	private static String wholeSeconds(long seconds) {
		if (seconds == 0) {
			return "0s";
		}
		if (seconds % SECONDS_PER_DAY == 0) {
			return (seconds / SECONDS_PER_DAY) + "d";
		}
		if (seconds % SECONDS_PER_HOUR == 0) {
			return (seconds / SECONDS_PER_HOUR) + "h";
		}
		if (seconds % SECONDS_PER_MINUTE == 0) {
			return (seconds / SECONDS_PER_MINUTE) + "m";
		}
		return seconds + "s";
	}

}

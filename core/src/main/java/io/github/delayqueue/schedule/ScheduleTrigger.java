package io.github.delayqueue.schedule;

import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.util.Objects;
import java.util.function.LongUnaryOperator;

import io.github.delayqueue.producer.InvalidMessageException;
import io.github.delayqueue.time.Durations;

import org.springframework.scheduling.support.CronExpression;

/**
 * What a schedule ticks on: a {@link Cron cron expression} in a time zone, or a
 * {@link FixedRate fixed rate}. Each checks itself when created. Immutable.
 */
public sealed interface ScheduleTrigger permits ScheduleTrigger.Cron, ScheduleTrigger.FixedRate {

	/**
	 * The first tick after a time.
	 * @param epochMillis a time (epoch ms)
	 * @return the tick (epoch ms), or {@link Long#MAX_VALUE} when there is none
	 */
	default long nextAfter(long epochMillis) {
		return ticks().applyAsLong(epochMillis);
	}

	/**
	 * The ticks, as a function from a time to the first tick after it, with a cron
	 * expression parsed once: for walking many ticks.
	 * @return the function, giving {@link Long#MAX_VALUE} when there is no later tick
	 */
	LongUnaryOperator ticks();

	/**
	 * Ticks at each time a cron expression matches, in a time zone.
	 *
	 * @param expression Spring's six-field cron expression, or a macro such as
	 * {@code @hourly}
	 * @param zone the time zone, normalized ({@code UTC} is {@code Z})
	 */
	record Cron(String expression, ZoneId zone) implements ScheduleTrigger {

		/**
		 * Checks the expression: it must parse and match a time to come.
		 * @throws InvalidMessageException naming the problem
		 */
		public Cron {
			Objects.requireNonNull(expression, "expression");
			// "UTC" and "Z" are one zone: one definition, whichever an instance was
			// given.
			zone = Objects.requireNonNull(zone, "zone").normalized();
			if (parse(expression).next(ZonedDateTime.now(zone)) == null) {
				throw new InvalidMessageException("Cron expression '" + expression + "' matches no time to come");
			}
		}

		/**
		 * A cron expression in UTC.
		 * @param expression Spring's six-field cron expression, or a macro
		 * @throws InvalidMessageException naming the problem
		 */
		public Cron(String expression) {
			this(expression, ZoneOffset.UTC);
		}

		/**
		 * @param zone a time zone
		 * @return this expression in that zone
		 */
		public Cron withZone(ZoneId zone) {
			return new Cron(this.expression, zone);
		}

		@Override
		public LongUnaryOperator ticks() {
			CronExpression parsed = parse(this.expression);
			ZoneId zone = this.zone;
			return (epochMillis) -> {
				ZonedDateTime next = parsed.next(ZonedDateTime.ofInstant(Instant.ofEpochMilli(epochMillis), zone));
				return (next != null) ? next.toInstant().toEpochMilli() : Long.MAX_VALUE;
			};
		}

		private static CronExpression parse(String expression) {
			try {
				return CronExpression.parse(expression);
			}
			catch (IllegalArgumentException ex) {
				throw new InvalidMessageException("Invalid cron expression '" + expression + "': " + ex.getMessage());
			}
		}

	}

	/**
	 * Ticks at a fixed rate, from the time the schedule is first saved; no time zone
	 * applies to it.
	 *
	 * @param rate the time between ticks, from {@link Schedule#MIN_FIXED_RATE} to
	 * {@link Schedule#MAX_FIXED_RATE}
	 */
	record FixedRate(Duration rate) implements ScheduleTrigger {

		/**
		 * Checks the rate.
		 * @throws InvalidMessageException naming the problem
		 */
		public FixedRate {
			Objects.requireNonNull(rate, "rate");
			if (rate.compareTo(Schedule.MIN_FIXED_RATE) < 0) {
				throw new InvalidMessageException(
						"A fixed rate must be at least " + Schedule.MIN_FIXED_RATE.toMillis() + " ms, but is " + rate);
			}
			if (rate.compareTo(Schedule.MAX_FIXED_RATE) > 0) {
				throw new InvalidMessageException("A fixed rate must be at most "
						+ Durations.format(Schedule.MAX_FIXED_RATE) + ", but is " + Durations.format(rate));
			}
		}

		@Override
		public LongUnaryOperator ticks() {
			long rate = this.rate.toMillis();
			return (epochMillis) -> epochMillis + rate;
		}

	}

}

package io.github.delayqueue.schedule;

import java.time.DateTimeException;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.util.Objects;
import java.util.function.LongUnaryOperator;

import io.github.delayqueue.producer.InvalidMessageException;
import io.github.delayqueue.producer.DelayMessage;
import io.github.delayqueue.producer.MessageIds;
import io.github.delayqueue.producer.Topics;
import io.github.delayqueue.time.Durations;
import org.jspecify.annotations.Nullable;

import org.springframework.scheduling.support.CronExpression;

/**
 * A recurring message: at each tick of a cron expression (Spring's six fields, or a macro
 * such as {@code @hourly}, in a time zone) or of a fixed rate, a message with the payload
 * is sent to the topic, with the id {@code <name>~<tick epoch ms>}, due at its tick. The
 * name identifies the schedule: saving the same definition again changes nothing, so
 * every instance may declare it. Immutable.
 *
 * @param name the schedule's name: a message id without {@code ~}, at most
 * {@value #MAX_NAME_LENGTH} characters
 * @param topic the topic its ticks are sent to
 * @param cron the cron expression, or {@code null} for a fixed rate
 * @param fixedRate the time between ticks, or {@code null} for a cron expression
 * @param zone the time zone of the cron expression (UTC unless given), normalized
 * ({@code UTC} is {@code Z})
 * @param payload the payload of each tick message, as text (JSON for a typed listener)
 * @param misfire what is sent for ticks missed during an outage
 */
public record Schedule(String name, String topic, @Nullable String cron, @Nullable Duration fixedRate, ZoneId zone,
		String payload, MisfirePolicy misfire) {

	/**
	 * How late a tick due alone may be sent and still count as on time: a later one was
	 * missed, and the schedule's {@link MisfirePolicy} decides what is sent for it. When
	 * more than one tick is due at once, they are missed whatever their lateness (unless
	 * the oldest is less than a second late).
	 */
	public static final Duration MISFIRE_THRESHOLD = Duration.ofMinutes(1);

	/** The most missed ticks {@link MisfirePolicy#FIRE_ALL} sends. */
	public static final int MAX_MISSED_TICKS = 1000;

	/**
	 * The longest name: the ids of its messages add {@code ~<tick epoch ms>}, those of
	 * its triggers {@code ~<epoch ms>~<n>} ({@code n} of at most five digits).
	 */
	public static final int MAX_NAME_LENGTH = 180;

	/** The shortest fixed rate. */
	public static final Duration MIN_FIXED_RATE = Duration.ofMillis(100);

	/** The longest fixed rate: as long as the longest delay of a message. */
	public static final Duration MAX_FIXED_RATE = DelayMessage.MAX_DELAY;

	/** Separates the fields of a definition; the payload comes last. */
	private static final char FIELD = '\n';

	/**
	 * Checks a schedule.
	 * @throws InvalidMessageException naming the problem
	 */
	public Schedule {
		Objects.requireNonNull(zone, "zone");
		// "UTC" and "Z" are one zone: one definition, whichever an instance was given.
		zone = zone.normalized();
		Objects.requireNonNull(payload, "payload");
		Objects.requireNonNull(misfire, "misfire");
		requireValidName(name);
		Topics.requireValid(topic);
		if ((cron == null) == (fixedRate == null)) {
			throw new InvalidMessageException("Schedule '" + name
					+ "' needs either a cron expression or a fixed rate, not " + ((cron == null) ? "neither" : "both"));
		}
		if (cron != null) {
			CronExpression expression;
			try {
				expression = CronExpression.parse(cron);
			}
			catch (IllegalArgumentException ex) {
				throw new InvalidMessageException(
						"Schedule '" + name + "' has an invalid cron expression '" + cron + "': " + ex.getMessage());
			}
			if (expression.next(ZonedDateTime.now(zone)) == null) {
				throw new InvalidMessageException(
						"Schedule '" + name + "' has a cron expression '" + cron + "' that matches no time to come");
			}
		}
		if (fixedRate != null && fixedRate.compareTo(MIN_FIXED_RATE) < 0) {
			throw new InvalidMessageException("Schedule '" + name + "' must have a fixed rate of at least "
					+ MIN_FIXED_RATE.toMillis() + " ms, but has " + fixedRate);
		}
		if (fixedRate != null && fixedRate.compareTo(MAX_FIXED_RATE) > 0) {
			throw new InvalidMessageException("Schedule '" + name + "' must have a fixed rate of at most "
					+ Durations.format(MAX_FIXED_RATE) + ", but has " + Durations.format(fixedRate));
		}
	}

	/**
	 * A schedule on a cron expression, in UTC, with an empty payload, that sends one
	 * message for missed ticks.
	 * @param name the schedule's name
	 * @param topic its topic
	 * @param cron Spring's six-field cron expression, or a macro such as {@code @daily}
	 * @return the schedule
	 * @throws InvalidMessageException naming the problem
	 */
	public static Schedule cron(String name, String topic, String cron) {
		return new Schedule(name, topic, cron, null, ZoneOffset.UTC, "", MisfirePolicy.FIRE_ONCE);
	}

	/**
	 * A schedule at a fixed rate, from the time it is first saved, with an empty payload,
	 * that sends one message for missed ticks.
	 * @param name the schedule's name
	 * @param topic its topic
	 * @param rate the time between ticks, at least 100 ms
	 * @return the schedule
	 * @throws InvalidMessageException naming the problem
	 */
	public static Schedule fixedRate(String name, String topic, Duration rate) {
		return new Schedule(name, topic, null, rate, ZoneOffset.UTC, "", MisfirePolicy.FIRE_ONCE);
	}

	/**
	 * @param zone the time zone of the cron expression
	 * @return this schedule in that zone
	 */
	public Schedule withZone(ZoneId zone) {
		return new Schedule(this.name, this.topic, this.cron, this.fixedRate, zone, this.payload, this.misfire);
	}

	/**
	 * @param payload the payload of each tick message, as text
	 * @return this schedule with that payload
	 */
	public Schedule withPayload(String payload) {
		return new Schedule(this.name, this.topic, this.cron, this.fixedRate, this.zone, payload, this.misfire);
	}

	/**
	 * @param misfire what is sent for missed ticks
	 * @return this schedule with that policy
	 */
	public Schedule withMisfire(MisfirePolicy misfire) {
		return new Schedule(this.name, this.topic, this.cron, this.fixedRate, this.zone, this.payload, misfire);
	}

	/**
	 * The first tick after a time.
	 * @param epochMillis a time (epoch ms)
	 * @return the tick (epoch ms), or {@link Long#MAX_VALUE} when the cron expression
	 * matches no later time
	 */
	public long nextAfter(long epochMillis) {
		return ticks().applyAsLong(epochMillis);
	}

	/**
	 * The schedule's ticks, as a function from a time to the first tick after it, with
	 * the cron expression parsed once: for walking many ticks.
	 * @return the function, giving {@link Long#MAX_VALUE} when the cron expression
	 * matches no later time
	 */
	LongUnaryOperator ticks() {
		if (this.fixedRate != null) {
			long rate = this.fixedRate.toMillis();
			return (epochMillis) -> epochMillis + rate;
		}
		CronExpression expression = CronExpression.parse(Objects.requireNonNull(this.cron));
		ZoneId zone = this.zone;
		return (epochMillis) -> {
			ZonedDateTime next = expression.next(ZonedDateTime.ofInstant(Instant.ofEpochMilli(epochMillis), zone));
			return (next != null) ? next.toInstant().toEpochMilli() : Long.MAX_VALUE;
		};
	}

	/**
	 * @return the id of the message of a tick
	 * @param tickMillis the tick (epoch ms)
	 */
	public String tickId(long tickMillis) {
		return this.name + '~' + tickMillis;
	}

	/**
	 * The definition as Redis keeps it: schedules with the same definition are the same.
	 * @return the definition
	 */
	public String definition() {
		String trigger = (this.cron != null) ? "cron " + this.cron : "every " + Objects.requireNonNull(this.fixedRate);
		return "1" + FIELD + this.topic + FIELD + trigger + FIELD + this.zone.getId() + FIELD + this.misfire.name()
				+ FIELD + this.payload;
	}

	/**
	 * Reads a definition kept in Redis.
	 * @param name the schedule's name
	 * @param definition its definition
	 * @return the schedule
	 * @throws InvalidMessageException if the definition is unreadable
	 */
	public static Schedule parse(String name, String definition) {
		String[] fields = definition.split(String.valueOf(FIELD), 6);
		if (fields.length != 6 || !fields[0].equals("1")) {
			throw new InvalidMessageException("Schedule '" + name + "' has an unreadable definition");
		}
		try {
			String trigger = fields[2];
			String cron = trigger.startsWith("cron ") ? trigger.substring(5) : null;
			Duration rate = trigger.startsWith("every ") ? Duration.parse(trigger.substring(6)) : null;
			return new Schedule(name, fields[1], cron, rate, ZoneId.of(fields[3]), fields[5],
					MisfirePolicy.valueOf(fields[4]));
		}
		catch (DateTimeException | IllegalArgumentException ex) {
			throw new InvalidMessageException(
					"Schedule '" + name + "' has an unreadable definition: " + ex.getMessage());
		}
	}

	/**
	 * Whether a definition kept in Redis was written by a later version of this library
	 * (its first field a version number above this one's): one this version cannot read
	 * but must not replace.
	 * @param definition a definition kept in Redis
	 * @return whether it is of a later version
	 */
	static boolean isOfLaterVersion(String definition) {
		int end = definition.indexOf(FIELD);
		String version = (end < 0) ? "" : definition.substring(0, end);
		if (version.isEmpty() || version.length() > 9 || !version.chars().allMatch(Character::isDigit)) {
			return false;
		}
		return Integer.parseInt(version) > 1;
	}

	private static void requireValidName(String name) {
		MessageIds.requireValid(name);
		if (name.length() > MAX_NAME_LENGTH) {
			throw new InvalidMessageException("Schedule name must be at most " + MAX_NAME_LENGTH
					+ " characters (its messages' ids add the tick), but has " + name.length());
		}
		if (name.indexOf('~') >= 0) {
			throw new InvalidMessageException("Schedule name '" + name + "' must not contain '~', which separates it"
					+ " from the tick in the ids of its messages");
		}
	}

}

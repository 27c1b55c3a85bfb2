package io.github.delayqueue.schedule;

import java.time.Duration;
import java.time.ZoneId;
import java.util.Objects;
import java.util.function.Supplier;

import io.github.delayqueue.producer.DelayMessage;
import io.github.delayqueue.producer.InvalidMessageException;
import io.github.delayqueue.producer.MessageIds;
import io.github.delayqueue.producer.Topics;

/**
 * A recurring message: at each tick of its trigger (a cron expression in a time zone, or
 * a fixed rate), a message with the payload is sent to the topic, with the id
 * {@code <name>~<tick epoch ms>}, due at its tick. The name identifies the schedule:
 * saving the same definition again changes nothing, so every instance may declare it.
 * Immutable.
 *
 * @param name the schedule's name: a message id without {@code ~}, at most
 * {@value #MAX_NAME_LENGTH} characters
 * @param topic the topic its ticks are sent to
 * @param trigger what it ticks on
 * @param payload the payload of each tick message, as text (JSON for a typed listener)
 * @param misfire what is sent for ticks missed during an outage
 */
public record Schedule(String name, String topic, ScheduleTrigger trigger, String payload, MisfirePolicy misfire) {

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

	/**
	 * Checks a schedule.
	 * @throws InvalidMessageException naming the problem
	 */
	public Schedule {
		Objects.requireNonNull(trigger, "trigger");
		Objects.requireNonNull(payload, "payload");
		Objects.requireNonNull(misfire, "misfire");
		requireValidName(name);
		Topics.requireValid(topic);
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
		return new Schedule(name, topic, named(name, () -> new ScheduleTrigger.Cron(cron)), "",
				MisfirePolicy.FIRE_ONCE);
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
		return new Schedule(name, topic, named(name, () -> new ScheduleTrigger.FixedRate(rate)), "",
				MisfirePolicy.FIRE_ONCE);
	}

	/**
	 * @param zone the time zone of the cron expression
	 * @return this schedule in that zone
	 * @throws InvalidMessageException if this schedule is at a fixed rate, which no time
	 * zone applies to
	 */
	public Schedule withZone(ZoneId zone) {
		if (!(this.trigger instanceof ScheduleTrigger.Cron cron)) {
			throw new InvalidMessageException("Schedule '" + this.name + "' is at a fixed rate, which no time zone"
					+ " applies to: only a cron expression has one");
		}
		return new Schedule(this.name, this.topic, named(this.name, () -> cron.withZone(zone)), this.payload,
				this.misfire);
	}

	/**
	 * @param payload the payload of each tick message, as text
	 * @return this schedule with that payload
	 */
	public Schedule withPayload(String payload) {
		return new Schedule(this.name, this.topic, this.trigger, payload, this.misfire);
	}

	/**
	 * @param misfire what is sent for missed ticks
	 * @return this schedule with that policy
	 */
	public Schedule withMisfire(MisfirePolicy misfire) {
		return new Schedule(this.name, this.topic, this.trigger, this.payload, misfire);
	}

	/**
	 * The first tick after a time.
	 * @param epochMillis a time (epoch ms)
	 * @return the tick (epoch ms), or {@link Long#MAX_VALUE} when the cron expression
	 * matches no later time
	 */
	public long nextAfter(long epochMillis) {
		return this.trigger.nextAfter(epochMillis);
	}

	/**
	 * @return the id of the message of a tick
	 * @param tickMillis the tick (epoch ms)
	 */
	public String tickId(long tickMillis) {
		return this.name + '~' + tickMillis;
	}

	/**
	 * Creates a trigger for a schedule, naming the schedule in the problem it has.
	 * @throws InvalidMessageException naming the schedule and the problem
	 */
	static ScheduleTrigger named(String name, Supplier<ScheduleTrigger> trigger) {
		try {
			return trigger.get();
		}
		catch (InvalidMessageException ex) {
			throw new InvalidMessageException("Schedule '" + name + "': " + ex.getMessage());
		}
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

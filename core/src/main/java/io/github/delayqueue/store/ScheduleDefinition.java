package io.github.delayqueue.store;

import java.util.Objects;

/**
 * What a recurring schedule is, as the store keeps it: plain values, which the store
 * writes and reads back as they are, without checking them; the schedule API gives them
 * their meaning and checks them.
 *
 * @param topic the topic its ticks are sent to
 * @param kind whether it ticks on a cron expression or at a fixed rate
 * @param trigger the cron expression, or the fixed rate as ISO-8601 (as
 * {@link java.time.Duration#toString()} writes it)
 * @param zone the id of the time zone of the cron expression ({@code Z} for a fixed rate)
 * @param misfire the name of its misfire policy
 * @param payload the payload of each tick message, as text
 */
public record ScheduleDefinition(String topic, Kind kind, String trigger, String zone, String misfire, String payload) {

	/**
	 * Checks that every value is given.
	 */
	public ScheduleDefinition {
		Objects.requireNonNull(topic, "topic");
		Objects.requireNonNull(kind, "kind");
		Objects.requireNonNull(trigger, "trigger");
		Objects.requireNonNull(zone, "zone");
		Objects.requireNonNull(misfire, "misfire");
		Objects.requireNonNull(payload, "payload");
	}

	/**
	 * What a schedule ticks on.
	 */
	public enum Kind {

		/** A cron expression, in a time zone. */
		CRON,

		/** A fixed rate. */
		FIXED_RATE

	}

}

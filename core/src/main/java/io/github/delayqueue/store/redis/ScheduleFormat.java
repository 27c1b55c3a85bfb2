package io.github.delayqueue.store.redis;

import io.github.delayqueue.store.CorruptMessageException;
import io.github.delayqueue.store.ScheduleDefinition;
import io.github.delayqueue.store.ScheduleState;
import org.jspecify.annotations.Nullable;

/**
 * How Redis keeps a recurring schedule: its state
 * {@code <next tick ms>:<paused 0 or 1>:<definition>} in the schedules hash of its
 * partition, the definition being version {@code 1}, then the topic, the trigger
 * ({@code cron <expression>} or {@code every <ISO-8601 rate>}), the zone id and the
 * misfire policy's name, and last the payload, separated by {@code \n}. A definition that
 * is not one of these is read as unreadable, not as a failure: each schedule apart from
 * the others.
 */
final class ScheduleFormat {

	/** Separates the fields of a definition; the payload comes last. */
	private static final char FIELD = '\n';

	/** The version of the definitions this one writes and reads. */
	private static final String VERSION = "1";

	private static final String CRON = "cron ";

	private static final String FIXED_RATE = "every ";

	private ScheduleFormat() {
	}

	/**
	 * @param definition a definition
	 * @return the definition as Redis keeps it
	 */
	static String encode(ScheduleDefinition definition) {
		String kind = switch (definition.kind()) {
			case CRON -> CRON;
			case FIXED_RATE -> FIXED_RATE;
		};
		return VERSION + FIELD + definition.topic() + FIELD + kind + definition.trigger() + FIELD + definition.zone()
				+ FIELD + definition.misfire() + FIELD + definition.payload();
	}

	/**
	 * Reads a definition kept in Redis.
	 * @param definition the definition as Redis keeps it
	 * @return the definition, or {@code null} when it is not one this version writes
	 */
	static @Nullable ScheduleDefinition decode(String definition) {
		String[] fields = definition.split(String.valueOf(FIELD), 6);
		if (fields.length != 6 || !fields[0].equals(VERSION)) {
			return null;
		}
		String trigger = fields[2];
		if (trigger.startsWith(CRON)) {
			return new ScheduleDefinition(fields[1], ScheduleDefinition.Kind.CRON, trigger.substring(CRON.length()),
					fields[3], fields[4], fields[5]);
		}
		if (trigger.startsWith(FIXED_RATE)) {
			return new ScheduleDefinition(fields[1], ScheduleDefinition.Kind.FIXED_RATE,
					trigger.substring(FIXED_RATE.length()), fields[3], fields[4], fields[5]);
		}
		return null;
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
		return Integer.parseInt(version) > Integer.parseInt(VERSION);
	}

	/**
	 * Reads a stored state; a definition this version cannot read is kept as stored.
	 * @param name the schedule's name
	 * @param topic its topic
	 * @param stored the stored form
	 * @return the state
	 * @throws CorruptMessageException if the stored form is not one
	 */
	static ScheduleState state(String name, String topic, String stored) {
		int first = stored.indexOf(':');
		int second = (first < 0) ? -1 : stored.indexOf(':', first + 1);
		if (second != first + 2 || (stored.charAt(first + 1) != '0' && stored.charAt(first + 1) != '1')) {
			throw new CorruptMessageException("schedule '" + name + "' has an unreadable state");
		}
		long nextTickMillis;
		try {
			nextTickMillis = Long.parseLong(stored.substring(0, first));
		}
		catch (NumberFormatException ex) {
			throw new CorruptMessageException("schedule '" + name + "' has an unreadable state");
		}
		String definition = stored.substring(second + 1);
		return new ScheduleState(name, topic, nextTickMillis, stored.charAt(first + 1) == '1', decode(definition),
				isOfLaterVersion(definition), stored);
	}

}

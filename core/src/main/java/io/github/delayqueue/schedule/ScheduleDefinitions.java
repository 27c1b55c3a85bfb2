package io.github.delayqueue.schedule;

import java.time.DateTimeException;
import java.time.Duration;
import java.time.ZoneId;
import java.time.ZoneOffset;

import io.github.delayqueue.producer.InvalidMessageException;
import io.github.delayqueue.store.ScheduleDefinition;
import io.github.delayqueue.store.ScheduleState;

/**
 * Maps a {@link Schedule} to the {@link ScheduleDefinition} the store keeps, and back. A
 * fixed rate is kept in the zone {@code Z}; the zone kept with a fixed rate is not read.
 */
public final class ScheduleDefinitions {

	private ScheduleDefinitions() {
	}

	/**
	 * @param schedule a schedule
	 * @return its definition, as the store keeps it
	 */
	public static ScheduleDefinition of(Schedule schedule) {
		if (schedule.trigger() instanceof ScheduleTrigger.Cron cron) {
			return new ScheduleDefinition(schedule.topic(), ScheduleDefinition.Kind.CRON, cron.expression(),
					cron.zone().getId(), schedule.misfire().name(), schedule.payload());
		}
		Duration rate = ((ScheduleTrigger.FixedRate) schedule.trigger()).rate();
		return new ScheduleDefinition(schedule.topic(), ScheduleDefinition.Kind.FIXED_RATE, rate.toString(),
				ZoneOffset.UTC.getId(), schedule.misfire().name(), schedule.payload());
	}

	/**
	 * Reads a definition the store keeps.
	 * @param name the schedule's name
	 * @param definition its definition
	 * @return the schedule
	 * @throws InvalidMessageException if the definition is not one of a schedule
	 */
	public static Schedule schedule(String name, ScheduleDefinition definition) {
		try {
			ZoneId zone = ZoneId.of(definition.zone());
			ScheduleTrigger trigger = switch (definition.kind()) {
				case CRON -> new ScheduleTrigger.Cron(definition.trigger(), zone);
				case FIXED_RATE -> new ScheduleTrigger.FixedRate(Duration.parse(definition.trigger()));
			};
			return new Schedule(name, definition.topic(), trigger, definition.payload(),
					MisfirePolicy.valueOf(definition.misfire()));
		}
		catch (DateTimeException | IllegalArgumentException ex) {
			throw new InvalidMessageException(
					"Schedule '" + name + "' has an unreadable definition: " + ex.getMessage());
		}
	}

	/**
	 * Reads the definition of a schedule's state.
	 * @param state the state
	 * @return the schedule
	 * @throws InvalidMessageException if this version cannot read its definition
	 */
	public static Schedule schedule(ScheduleState state) {
		ScheduleDefinition definition = state.definition();
		if (definition == null) {
			throw new InvalidMessageException("Schedule '" + state.name() + "' has an unreadable definition"
					+ (state.ofLaterVersion() ? " (written by a later version)" : ""));
		}
		return schedule(state.name(), definition);
	}

}

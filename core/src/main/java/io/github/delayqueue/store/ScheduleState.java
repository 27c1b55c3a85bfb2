package io.github.delayqueue.store;

import java.util.Objects;

import org.jspecify.annotations.Nullable;

/**
 * A recurring schedule as the store keeps it in its partition: its next tick, whether it
 * is paused, and its definition. An instance that changes the state names the one it
 * read, so that of several instances acting at once one does.
 *
 * @param name the schedule's name
 * @param topic the topic of the partition it is kept in
 * @param nextTickMillis the next tick not sent yet (epoch ms)
 * @param paused whether it is paused
 * @param definition its definition, or {@code null} when this version cannot read it
 * @param ofLaterVersion whether a definition this version cannot read says it was written
 * by a later version: one to keep, not to replace
 * @param stored the state as stored, which the store compares to tell whether it changed:
 * for the store only
 */
public record ScheduleState(String name, String topic, long nextTickMillis, boolean paused,
		@Nullable ScheduleDefinition definition, boolean ofLaterVersion, String stored) {

	/**
	 * Checks that the names and the stored form are given.
	 */
	public ScheduleState {
		Objects.requireNonNull(name, "name");
		Objects.requireNonNull(topic, "topic");
		Objects.requireNonNull(stored, "stored");
	}

}

package io.github.delayqueue.store;

import java.util.List;
import java.util.Map;

import org.jspecify.annotations.Nullable;

import org.springframework.dao.DataAccessException;

/**
 * Where recurring schedules are kept, each in the partition of its topic that its name
 * belongs to, beside the tick messages it sends ({@code <name>~<tick ms>}); every change
 * is one call. A registry names each schedule's topic, for the instances that poll them.
 * Every method may throw a {@link DataAccessException} when the store failed or did not
 * answer in time, and a {@link PartitionCountException} when the store spreads the topic
 * over another number of partitions.
 */
public interface ScheduleStore {

	/**
	 * The schedules of the partition a schedule belongs to, with the store's time.
	 * @param topic the schedule's topic
	 * @param name the schedule's name
	 * @return the time and every schedule of that partition
	 */
	SchedulesRead read(String topic, String name);

	/**
	 * Creates a schedule or gives it another definition, next tick as given and paused as
	 * it was, if its state is still the one read; the same definition again changes
	 * nothing. Registers it.
	 * @param topic its topic
	 * @param name its name
	 * @param definition its definition
	 * @param nextTickMillis its next tick (epoch ms), should the definition change: after
	 * the time read with the state, so after every tick sent
	 * @param read the state read ({@code null} for none)
	 * @return the state saved, or found when the definition was the same; {@code null}
	 * when the state is no longer the one read (nothing saved)
	 */
	@Nullable ScheduleState save(String topic, String name, String definition, long nextTickMillis, @Nullable ScheduleState read);

	/**
	 * Sends a schedule's due ticks and moves it to its next tick, if its state is still
	 * the one read.
	 * @param read the state read
	 * @param nextTickMillis its new next tick (epoch ms)
	 * @param ticksMillis the ticks to send, each due at its time; none when all are
	 * skipped
	 * @param body the stored body of each tick message
	 * @return whether it advanced: {@code false} when the state changed meanwhile
	 */
	boolean advance(ScheduleState read, long nextTickMillis, List<Long> ticksMillis, byte[] body);

	/**
	 * Pauses a schedule, or resumes it at a next tick.
	 * @param topic its topic
	 * @param name its name
	 * @param paused {@code true} to pause, {@code false} to resume
	 * @param nextTickMillis on resume, its next tick (epoch ms)
	 * @return its state afterwards, or {@code null} if unknown
	 */
	@Nullable ScheduleState pause(String topic, String name, boolean paused, long nextTickMillis);

	/**
	 * Removes a schedule and its registration; tick messages already sent stay.
	 * @param topic its topic
	 * @param name its name
	 * @return whether it existed
	 */
	boolean remove(String topic, String name);

	/**
	 * @return the registered schedules: name → topic
	 */
	Map<String, String> registered();

	/**
	 * The time of the store and the schedules of one partition.
	 *
	 * @param nowMillis the store's time (epoch ms), by which ticks are due
	 * @param schedules the schedules by name
	 * @param unreadable the schedules whose state is unreadable, with what is wrong
	 */
	record SchedulesRead(long nowMillis, Map<String, ScheduleState> schedules, Map<String, String> unreadable) {
	}

}

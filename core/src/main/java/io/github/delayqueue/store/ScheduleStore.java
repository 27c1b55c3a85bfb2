package io.github.delayqueue.store;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.jspecify.annotations.Nullable;

import org.springframework.dao.DataAccessException;

/**
 * Where recurring schedules are kept, each in the partition of its topic that its name
 * belongs to, beside the tick messages it sends ({@code <name>~<tick ms>}); every change
 * is one call. A registry names each schedule's topic, so that a name sends to one topic
 * at a time, and keeps every topic that has held a schedule, so that the pollers read
 * those topics and find a schedule whatever the registry says of its name. Every method
 * may throw a {@link DataAccessException} when the store failed or did not answer in
 * time, and a {@link PartitionCountException} when the store spreads the topic over
 * another number of partitions.
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
	 * The schedules of every partition of a topic, with the store's time. A partition
	 * whose schedules cannot be read (a key of the wrong type, moved aside then) is
	 * reported among the unreadable ones; the others are read.
	 * @param topic the topic
	 * @return the time and every schedule of the topic
	 */
	SchedulesRead readTopic(String topic);

	/**
	 * Finds the topics that hold schedules by looking through the store (a {@code SCAN}),
	 * whatever the registry says: for when the registry may have been lost, never for
	 * every look.
	 * @return the topics found (partitions named by their topic), at most 10,000
	 */
	List<String> findTopics();

	/**
	 * @return the registry: every registered name with its topic, and the topics that
	 * have held a schedule
	 */
	Registry registry();

	/**
	 * Registers a name to a topic, unless it is registered to another one: from that one
	 * only when the caller found its schedule gone there and the name was last claimed
	 * longer than {@link #saveTime()} ago, so that no save there is still on its way. As
	 * a send does, it sets the topic's number of partitions in the store to the one
	 * configured here when it differs and the topic holds nothing.
	 * @param name the schedule's name
	 * @param topic the topic
	 * @param takingFrom the other topic the caller found the name registered to and takes
	 * it from (its schedule being gone there), or {@code null}
	 * @return the topic the name is registered to now: {@code topic} when registered
	 */
	String register(String name, String topic, @Nullable String takingFrom);

	/**
	 * Forgets a name's registration, if it is registered to the topic and was last
	 * claimed longer than {@link #saveTime()} ago: for a registration whose schedule is
	 * gone, so that a save of it on its way keeps it.
	 * @param name the schedule's name
	 * @param topic the topic
	 * @return whether it was
	 */
	boolean unregisterIfStale(String name, String topic);

	/**
	 * Forgets a topic the registry keeps as one that has held a schedule, so that the
	 * pollers no longer read it: only when no name is registered to it and none was
	 * claimed for it for longer than {@link #saveTime()}. Call it once a read found the
	 * topic without schedules.
	 * @param topic the topic
	 * @return whether it was forgotten
	 */
	boolean forgetTopic(String topic);

	/**
	 * @return the longest a save can take, from the claim of its name to the write of its
	 * state: two timeouts of the store and a second
	 */
	Duration saveTime();

	/**
	 * Forgets a name's registration, if it is registered to the topic.
	 * @param name the schedule's name
	 * @param topic the topic
	 * @return whether it was
	 */
	boolean unregister(String name, String topic);

	/**
	 * Creates a schedule or gives it another definition, next tick as given and paused as
	 * it was, if its state is still the one read; the same definition again changes
	 * nothing. Call it once the name is {@link #register registered} to the topic.
	 * @param topic its topic
	 * @param name its name
	 * @param definition its definition
	 * @param nextTickMillis its next tick (epoch ms), should the definition change: after
	 * the time read with the state, so after every tick sent
	 * @param read the state read ({@code null} for none)
	 * @return the state saved, or found when the definition was the same; {@code null}
	 * when the state is no longer the one read (nothing saved)
	 */
	@Nullable ScheduleState save(String topic, String name, ScheduleDefinition definition, long nextTickMillis,
			@Nullable ScheduleState read);

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
	 * Pauses a schedule, or resumes it at a next tick (or at the tick it kept, if that is
	 * later: the Redis clock stepped back).
	 * @param topic its topic
	 * @param name its name
	 * @param paused {@code true} to pause, {@code false} to resume
	 * @param nextTickMillis on resume, its next tick (epoch ms)
	 * @return its state afterwards, or {@code null} if unknown
	 */
	default @Nullable ScheduleState pause(String topic, String name, boolean paused, long nextTickMillis) {
		return pause(topic, name, paused, nextTickMillis, null);
	}

	/**
	 * Pauses a schedule, or resumes it at a next tick (or at the tick it kept, if that is
	 * later: the Redis clock stepped back) computed from a definition: a resume is
	 * refused while the schedule has another one (saved meanwhile), so that its next tick
	 * never comes from a definition it no longer has.
	 * @param topic its topic
	 * @param name its name
	 * @param paused {@code true} to pause, {@code false} to resume
	 * @param nextTickMillis on resume, its next tick (epoch ms)
	 * @param definition on resume, the definition the next tick comes from, or
	 * {@code null} for any
	 * @return its state afterwards (unchanged, of another definition, when a resume was
	 * refused), or {@code null} if unknown
	 */
	@Nullable ScheduleState pause(String topic, String name, boolean paused, long nextTickMillis,
			@Nullable ScheduleDefinition definition);

	/**
	 * Removes a schedule from its partition; tick messages already sent stay. The name
	 * stays registered: {@link #unregister} it then.
	 * @param topic its topic
	 * @param name its name
	 * @param read the state to remove, only while it is still that one, or {@code null}
	 * for any
	 * @return whether it was removed
	 */
	boolean remove(String topic, String name, @Nullable ScheduleState read);

	/**
	 * The time of the store and the schedules of one partition, or of a topic.
	 *
	 * @param nowMillis the store's time (epoch ms), by which ticks are due
	 * @param schedules the schedules by name
	 * @param unreadable the schedules (or partitions) that could not be read, with what
	 * is wrong, said for an operator: naming the schedule (or partition) and its topic
	 */
	record SchedulesRead(long nowMillis, Map<String, ScheduleState> schedules, Map<String, String> unreadable) {
	}

	/**
	 * The schedule registry.
	 *
	 * @param names each registered name's topic
	 * @param topics the topics that have held a schedule, and every registered name's
	 */
	record Registry(Map<String, String> names, Set<String> topics) {
	}

}

package io.github.delayqueue.store;

import java.time.Instant;
import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * One group of a topic, read by name at one instant: how many of its messages are ready
 * and in flight, whether it waits at its concurrency limit or is paused, and its next
 * ready messages. A group the topic does not know reads as empty.
 *
 * @param group the group's name
 * @param ready its ready messages (members left by a cancel or a reschedule included, as
 * in {@link TopicStats#busiestGroups()})
 * @param inFlight its messages in flight: the slots it takes against a group concurrency
 * @param waitingAtLimit whether it has ready messages that wait for one of its messages
 * in flight to leave flight, as a claim found it at its concurrency limit
 * @param paused whether it is paused: claims pass its ready messages over
 * @param pausedUntil when its pause ends, {@code null} when it is not paused or its pause
 * lasts until it is resumed
 * @param firstReadyIds the ids of its first ready messages, most urgent first (priority,
 * then due time, then id): the ones claims take next, at most {@value #FIRST_READY_IDS}
 */
public record GroupView(String group, long ready, long inFlight, boolean waitingAtLimit, boolean paused,
		@Nullable Instant pausedUntil, List<String> firstReadyIds) {

	/** The most ids {@link #firstReadyIds()} holds. */
	public static final int FIRST_READY_IDS = 10;

	/**
	 * Keeps an unmodifiable copy of the ids.
	 * @param group the group's name
	 * @param ready its ready messages
	 * @param inFlight its messages in flight
	 * @param waitingAtLimit whether it waits at its concurrency limit
	 * @param paused whether it is paused
	 * @param pausedUntil when its pause ends, if it is paused for a time
	 * @param firstReadyIds the ids of its first ready messages
	 */
	public GroupView {
		firstReadyIds = List.copyOf(firstReadyIds);
	}

	/**
	 * A group that is not paused.
	 * @param group the group's name
	 * @param ready its ready messages
	 * @param inFlight its messages in flight
	 * @param waitingAtLimit whether it waits at its concurrency limit
	 * @param firstReadyIds the ids of its first ready messages
	 */
	public GroupView(String group, long ready, long inFlight, boolean waitingAtLimit, List<String> firstReadyIds) {
		this(group, ready, inFlight, waitingAtLimit, false, null, firstReadyIds);
	}

}

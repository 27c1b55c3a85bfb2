package io.github.delayqueue.group;

import java.time.Duration;
import java.time.Instant;

import io.github.delayqueue.producer.Topics;
import io.github.delayqueue.store.GroupView;
import io.github.delayqueue.store.MessageStore;

/**
 * Pauses, resumes and reads the groups of a topic (see
 * {@link io.github.delayqueue.producer.DelayMessage.Builder#group(String)}), in Redis, so
 * that every application that listens to the topic sees the same: while a group is
 * paused, claims pass its ready messages over and the other groups are served as before;
 * its messages in flight are not touched and settle as usual. A pause with a length ends
 * by itself, on the Redis clock (a test clock's advance ends it too); its messages are
 * claimed again by the first claims after its end, within about the listener's idle check
 * interval. Resuming a group makes its ready messages claimable at once. A group without
 * messages may be paused: messages sent to it later wait. Groups live on topics of one
 * partition. Thread-safe.
 */
public class DelayQueueGroups {

	/** The longest pause with a length: longer ones last until resumed. */
	public static final Duration MAX_PAUSE = Duration.ofDays(3650);

	private final MessageStore store;

	/**
	 * Creates the operations.
	 * @param store the store of the topics
	 */
	public DelayQueueGroups(MessageStore store) {
		this.store = store;
	}

	/**
	 * Pauses one group until it is resumed.
	 * @param topic the topic
	 * @param group the group's name
	 * @throws IllegalArgumentException if the topic or the group's name is invalid
	 * @throws org.springframework.dao.DataAccessException if Redis does not confirm it
	 * within the store's timeout
	 */
	public void pause(String topic, String group) {
		this.store.pauseGroup(Topics.requireValid(topic), group, null);
	}

	/**
	 * Pauses one group for a while; pausing a paused group sets its end anew, but never
	 * before the end of the group's strict-order wait ({@code group-order: strict}: a
	 * message of it waits in it for its retry), when that is later.
	 * @param topic the topic
	 * @param group the group's name
	 * @param length how long, from now on the Redis clock: 1 ms to {@link #MAX_PAUSE}
	 * @return when the pause ends, on the Redis clock (the end of the group's
	 * strict-order wait, when that is later)
	 * @throws IllegalArgumentException if the topic, the group's name or the length is
	 * invalid
	 * @throws org.springframework.dao.DataAccessException if Redis does not confirm it
	 * within the store's timeout
	 */
	public Instant pause(String topic, String group, Duration length) {
		if (length.toMillis() < 1 || length.compareTo(MAX_PAUSE) > 0) {
			throw new IllegalArgumentException("The pause of group '" + group + "' of topic '" + topic
					+ "' must last 1 ms to " + MAX_PAUSE.toDays() + " days, not " + length
					+ "; pause without a length for a pause until it is resumed");
		}
		Instant until = this.store.pauseGroup(Topics.requireValid(topic), group, length);
		if (until == null) {
			throw new IllegalStateException("The store paused group '" + group + "' of topic '" + topic
					+ "' without an end, where " + length + " was asked");
		}
		return until;
	}

	/**
	 * Ends the pause of one group: its ready messages are claimed again at once. A
	 * strict-order wait of the group ({@code group-order: strict}: a message of it waits
	 * in it for its retry) is not ended: the group stays paused until the retry's time.
	 * @param topic the topic
	 * @param group the group's name
	 * @return {@code true} if it was paused
	 * @throws IllegalArgumentException if the topic or the group's name is invalid
	 * @throws org.springframework.dao.DataAccessException if Redis does not confirm it
	 * within the store's timeout
	 */
	public boolean resume(String topic, String group) {
		return this.store.resumeGroup(Topics.requireValid(topic), group);
	}

	/**
	 * Reads one group by name: its ready messages and those in flight, whether it waits
	 * at its concurrency limit or is paused, and its next ready messages.
	 * @param topic the topic
	 * @param group the group's name
	 * @return the group, empty if the topic does not know it
	 * @throws IllegalArgumentException if the topic or the group's name is invalid
	 */
	public GroupView group(String topic, String group) {
		return this.store.inspector(Topics.requireValid(topic)).group(group);
	}

}

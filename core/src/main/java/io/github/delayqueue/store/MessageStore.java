package io.github.delayqueue.store;

import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import org.jspecify.annotations.Nullable;

import org.springframework.dao.DataAccessException;

/**
 * Where the queue keeps its messages: the port through which the producer, the runtime
 * and operations work, each state change one atomic call. The auto-configuration gives
 * the Redis one; nothing else knows which it is. Implementations are thread-safe.
 */
public interface MessageStore {

	/** Most ids one call may name (replay, purge, ack, release, extend leases). */
	int MAX_IDS_PER_CALL = 1000;

	/**
	 * Stores and schedules messages of several topics; ids already stored are reported as
	 * duplicates and left unchanged (or replaced, for a message that asks to replace a
	 * pending one).
	 * @param messagesByTopic the messages of each topic, in send order
	 * @return the results of each topic, in the same order as its messages
	 * @throws DataAccessException if the store failed or did not answer in time; any
	 * subset of the messages may have been stored, and a retry with the same ids stores
	 * the rest
	 * @throws NotReplicatedException if replication is confirmed and too few replicas
	 * confirmed the writes in time
	 * @throws PartitionCountException if the store spreads a topic over another number of
	 * partitions and the count cannot change now
	 */
	Map<String, List<Sent>> send(Map<String, List<NewMessage>> messagesByTopic);

	/**
	 * Stores and schedules messages as {@link #send(Map)} does, without waiting for the
	 * store: the future completes with the results, or fails with one of the exceptions
	 * {@code send} throws. It may complete on the store client's I/O thread, where
	 * nothing may block. This default sends on the caller's thread and returns a
	 * completed future.
	 * @param messagesByTopic the messages of each topic, in send order
	 * @return the results of each topic, in the same order as its messages
	 */
	default CompletableFuture<Map<String, List<Sent>>> sendAsync(Map<String, List<NewMessage>> messagesByTopic) {
		try {
			return CompletableFuture.completedFuture(send(messagesByTopic));
		}
		catch (RuntimeException ex) {
			return CompletableFuture.failedFuture(ex);
		}
	}

	/**
	 * Stores and schedules messages of one topic, as {@link #send(Map)} does.
	 * @param topic the topic
	 * @param messages the messages, in send order
	 * @return one result per message, in the same order
	 */
	default List<Sent> send(String topic, List<NewMessage> messages) {
		return send(Map.of(topic, messages)).get(topic);
	}

	/**
	 * Cancels a message that is still scheduled or ready.
	 * @param topic the topic
	 * @param id the message id
	 * @return {@code true} if it was pending and is now gone
	 */
	boolean cancel(String topic, String id);

	/**
	 * Moves a pending message's due time.
	 * @param topic the topic
	 * @param id the message id
	 * @param delay the new delay, from now (store time)
	 * @return the new due time (epoch ms), or -1 if the message is not pending
	 */
	long reschedule(String topic, String id, Duration delay);

	/**
	 * @return how topics are spread over partitions
	 */
	TopicPartitions partitions();

	/**
	 * Makes sure that the store spreads a topic over the number of partitions configured
	 * here, as a listener starting does: changes the count kept in the store if every
	 * message stays within reach of the calls that find it by id. A dead-letter queue
	 * ({@code <topic>#dead}) agrees its topic's count and never changes it.
	 * @param topic the topic
	 * @throws PartitionCountException if the counts differ and the count cannot change
	 * now, or the topic is a dead-letter queue
	 * @throws DataAccessException if the store failed or did not answer in time
	 */
	void agreePartitions(String topic);

	/**
	 * Checks again that the store spreads a topic over the number of partitions
	 * configured here, as after a partition refused a call of this application; never
	 * changes the count.
	 * @param topic the topic
	 * @throws PartitionCountException if the store has another count, or a change did not
	 * end in time
	 * @throws DataAccessException if the store failed or did not answer in time
	 */
	void checkPartitions(String topic);

	/**
	 * Starts copying a topic's dead letters into its dead-letter queue
	 * ({@link TopicPartitions#deadLettersOf(String)}), on every partition, as a listener
	 * of them starting does: from then on, every message that dies is also queued there,
	 * in the same call; an earlier dead letter is not. Idempotent; the copies go on after
	 * the listener stopped, until the watch is removed from the store.
	 * @param topic the topic whose dead letters are listened to
	 * @return how many partitions did not have the watch (all of them the first time;
	 * later, the store lost it)
	 * @throws DataAccessException if the store failed or did not answer in time
	 */
	int watchDeadLetters(String topic);

	/**
	 * Reads the marker of the queue's data in the store, writing a new one when there is
	 * none: a marker other than the one read before says that the store lost its data.
	 * @return the marker
	 * @throws DataAccessException if the store failed or did not answer in time
	 */
	String datasetMarker();

	/**
	 * @return where recurring schedules are kept
	 */
	ScheduleStore schedules();

	/**
	 * One partition's transitions, for the runtime.
	 * @param partition the partition (for partition 0, the topic)
	 * @return its transitions
	 */
	TopicStore topic(String partition);

	/**
	 * Pauses one group of a topic: claims pass its ready messages over, in every
	 * application, until the pause ends or the group is resumed; its messages in flight
	 * are not touched. Pausing a paused group sets its end anew, but never before the end
	 * of its strict-order wait (a message of it waits in it for its retry). On a
	 * partitioned topic, the pause is kept in the group's partition. This default
	 * refuses: a store that does not keep groups.
	 * @param topic the topic
	 * @param group the group's name
	 * @param length how long the pause lasts, {@code null} until it is resumed
	 * @return when the pause ends, on the store's clock, or {@code null} when it lasts
	 * until the group is resumed
	 * @throws IllegalArgumentException if the name cannot be a group's
	 * @throws UnsupportedOperationException if this store does not keep groups
	 */
	default @Nullable Instant pauseGroup(String topic, String group, @Nullable Duration length) {
		throw new UnsupportedOperationException("This store does not keep groups: topic '" + topic + "'");
	}

	/**
	 * Ends the pause of one group of a topic: its ready messages are claimed again at
	 * once; a group whose strict-order wait has not ended stays paused until its end.
	 * This default refuses: a store that does not keep groups.
	 * @param topic the topic
	 * @param group the group's name
	 * @return {@code true} if the group was paused
	 * @throws IllegalArgumentException if the name cannot be a group's
	 * @throws UnsupportedOperationException if this store does not keep groups
	 */
	default boolean resumeGroup(String topic, String group) {
		throw new UnsupportedOperationException("This store does not keep groups: topic '" + topic + "'");
	}

	/**
	 * One topic's read-only view, over all its partitions, for operations.
	 * @param topic the topic
	 * @return its inspector
	 */
	TopicInspector inspector(String topic);

	/**
	 * Moves dead-lettered messages back to the schedule, due at once, with their attempts
	 * reset to 0: looks at up to {@code limit} dead messages from a rank on, oldest
	 * first.
	 * @param topic the topic
	 * @param limit the largest number of dead messages to look at, 1 to
	 * {@value #MAX_IDS_PER_CALL}
	 * @param fromRank the rank in the dead letters to start at, 0 for the oldest
	 * @return the replayed ids and how many were left dead
	 */
	ReplayResult replayDead(String topic, int limit, long fromRank);

	/**
	 * Moves the given dead-lettered messages back to the schedule, due at once, with
	 * their attempts reset to 0.
	 * @param topic the topic
	 * @param ids the ids, 1 to {@value #MAX_IDS_PER_CALL}
	 * @return the replayed ids and how many were left dead or not found
	 */
	ReplayResult replayDead(String topic, List<String> ids);

	/**
	 * Deletes the oldest dead-lettered messages of a topic for good.
	 * @param topic the topic
	 * @param limit the largest number of messages to delete, 1 to
	 * {@value #MAX_IDS_PER_CALL}
	 * @return how many were deleted
	 */
	long purgeDead(String topic, int limit);

	/**
	 * Deletes the given dead-lettered messages for good; ids that are not dead are left
	 * alone.
	 * @param topic the topic
	 * @param ids the ids, 1 to {@value #MAX_IDS_PER_CALL}
	 * @return how many were deleted
	 */
	long purgeDead(String topic, List<String> ids);

	/**
	 * Counts a topic's messages in each state, over every partition; changes nothing.
	 * @param topic the topic
	 * @return the counts and times
	 */
	TopicStats stats(String topic);

	/**
	 * Finds one message in whatever state it is; changes nothing.
	 * @param topic the topic
	 * @param id the message id
	 * @param maxBytes the most bytes of the stored message to read
	 * @return the message, or {@code null} if the topic has no message with that id
	 */
	@Nullable MessageSnapshot inspect(String topic, String id, int maxBytes);

	/**
	 * Finds the topics that have messages: for operations, never for a hot path.
	 * @param max the most topics to return
	 * @return topic names in alphabetical order, at most {@code max}
	 */
	List<String> findTopics(int max);

	/**
	 * Finds the topics that have messages as {@link #findTopics(int)} does, within a time
	 * of the caller's and server by server where there are several (a Cluster's
	 * primaries): a server that does not answer in time is named, and the topics of the
	 * others are found. This default searches with {@link #findTopics(int)}.
	 * @param max the most topics to return
	 * @param within the longest wait for the servers
	 * @return the topics found, and the servers that did not answer
	 * @throws DataAccessException if the one server outside a Cluster cannot be searched
	 */
	default FoundTopics searchTopics(int max, Duration within) {
		return new FoundTopics(findTopics(max), Map.of());
	}

	/**
	 * Checks that the store answers.
	 * @throws DataAccessException if it does not
	 */
	void ping();

	/**
	 * @return the longest wait of any call for the store
	 */
	Duration timeout();

	/**
	 * @return the prefix of every key of this store, which sets it apart from other
	 * queues sharing the same server
	 */
	String prefix();

	/**
	 * Subscribes to the store's wake-up signals of some partitions. Returns within the
	 * store's {@link #timeout()}: a subscription the store does not answer in time goes
	 * on in the background (signals only shorten waits), which is logged at WARN.
	 * @param partitions the partitions (for partition 0, the topic)
	 * @param listener where the signals go; it must not block
	 * @return the subscription; close it to unsubscribe, which returns at once
	 * @throws DataAccessException if the store refused the subscription (it refuses
	 * connections): a start without the store gets a clear answer
	 */
	AutoCloseable subscribe(Collection<String> partitions, WakeUpListener listener);

}

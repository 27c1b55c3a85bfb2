package io.github.delayqueue.store;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import org.jspecify.annotations.Nullable;

/**
 * Reads one topic's messages without changing them: the port that operations (the
 * Actuator endpoint, health, gauges) look through. {@link MessageStore#inspector(String)}
 * gives one.
 */
public interface TopicInspector {

	/**
	 * @return the topic
	 */
	String topic();

	/**
	 * Counts the topic's messages in each state and reads its next and oldest waiting due
	 * times, at one instant.
	 * @return the counts and times
	 */
	TopicStats stats();

	/**
	 * Reads one page of the topic's messages in one state, oldest first, without their
	 * payloads.
	 * @param state the state
	 * @param offset the rank of the first message, 0-based
	 * @param limit the largest number of messages, 1 or more
	 * @return the page
	 */
	MessagePage page(MessageState state, long offset, int limit);

	/**
	 * Reads one page as {@link #page(MessageState, long, int)} does, waiting for Redis at
	 * most a time of the caller's (and never longer than the store's timeout); a
	 * partitioned topic's page leaves out the partitions that do not answer and names
	 * them in {@link MessagePage#unreachable()}. This default reads
	 * {@link #page(MessageState, long, int)}.
	 * @param state the state
	 * @param offset the rank of the first message, 0-based
	 * @param limit the largest number of messages, 1 or more
	 * @param within the longest wait for Redis
	 * @return the page
	 */
	default MessagePage page(MessageState state, long offset, int limit, Duration within) {
		return page(state, offset, limit);
	}

	/**
	 * Finds one message in whatever state it is.
	 * @param id the message id
	 * @param maxBytes the most bytes of the stored message to read
	 * @return the message, or {@code null} if the topic has no message with that id
	 */
	@Nullable MessageSnapshot inspect(String id, int maxBytes);

	/**
	 * Reads one group of the topic by name: its ready messages and those in flight,
	 * whether it waits at its concurrency limit, and the ids of its next ready messages.
	 * On a partitioned topic this reads the group's partition. This default reads
	 * nothing: an inspector that does not keep groups refuses.
	 * @param group the group's name, 1 to {@value NewMessage#MAX_GROUP_LENGTH}
	 * characters, none of them a control character
	 * @return the group, empty if the topic does not know it
	 * @throws IllegalArgumentException if the name cannot be a group's
	 * @throws UnsupportedOperationException if this inspector does not read groups
	 */
	default GroupView group(String group) {
		throw new UnsupportedOperationException("This inspector of topic '" + topic() + "' does not read groups");
	}

	/**
	 * Starts reading the stats of each partition at once, without waiting: for operations
	 * that show what answers while some servers are down. Each read ends within the
	 * store's timeout; {@link PartialStats#await} collects them. This default reads
	 * {@link #stats()} at once, as one partition named after the topic.
	 * @return the reads, by partition name, partition 0 (the topic) first
	 */
	default Map<String, CompletableFuture<TopicStats>> readPartitions() {
		try {
			return Map.of(topic(), CompletableFuture.completedFuture(stats()));
		}
		catch (RuntimeException ex) {
			return Map.of(topic(), CompletableFuture.failedFuture(ex));
		}
	}

	/**
	 * Reads the stats of each partition at once, waiting at most the store's timeout.
	 * This default collects {@link #readPartitions()} as they are.
	 * @return the stats of the partitions that answered, and why the others did not
	 */
	default PartialStats partialStats() {
		return PartialStats.await(this, readPartitions(), System.nanoTime(), Duration.ZERO);
	}

	/**
	 * Tells which server holds one of the topic's partitions, from what the store knows
	 * without asking Redis (on a Cluster, its topology).
	 * @param partition the partition's name
	 * @return the primary, as {@code host:port}, or {@code null} where the store does not
	 * know it (outside a Cluster); this default knows none
	 */
	default @Nullable String serverOf(String partition) {
		return null;
	}

}

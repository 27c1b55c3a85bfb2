package io.github.delayqueue.store;

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
	 * Finds one message in whatever state it is.
	 * @param id the message id
	 * @param maxBytes the most bytes of the stored message to read
	 * @return the message, or {@code null} if the topic has no message with that id
	 */
	@Nullable MessageSnapshot inspect(String id, int maxBytes);

}

package io.github.delayqueue.producer;

import java.util.List;

import org.springframework.dao.DataAccessException;

/**
 * A send that failed or timed out after it may have reached Redis: the messages may or
 * may not be stored. It carries their ids, generated ones included, so that the caller
 * can send them again with the same ids (a send is idempotent by id: a message already
 * stored is not stored twice and the result does not report it as a duplicate) or cancel
 * them. Its cause is Redis' failure, or a
 * {@link io.github.delayqueue.store.PartitionCountException} when this application does
 * not spread a partitioned topic over the number of partitions Redis does (then the
 * messages of other topics or partitions of a batch may be stored, and sending again
 * cannot help until the count agrees).
 */
public class SendFailedException extends DataAccessException {

	private final List<String> topics;

	private final List<String> messageIds;

	/**
	 * Creates an exception.
	 * @param topics the topics of the messages
	 * @param messageIds the ids of the messages, in send order
	 * @param cause the failure
	 */
	public SendFailedException(List<String> topics, List<String> messageIds, Throwable cause) {
		super(describe(topics, messageIds, cause), cause);
		this.topics = List.copyOf(topics);
		this.messageIds = List.copyOf(messageIds);
	}

	/**
	 * @return the topics of the messages
	 */
	public List<String> topics() {
		return this.topics;
	}

	/**
	 * @return the ids of the messages, in send order; send them again with these ids
	 */
	public List<String> messageIds() {
		return this.messageIds;
	}

	private static String describe(List<String> topics, List<String> messageIds, Throwable cause) {
		String ids = (messageIds.size() <= 10) ? messageIds.toString()
				: messageIds.subList(0, 10) + " and " + (messageIds.size() - 10) + " more";
		return "Send of " + messageIds.size() + ((messageIds.size() == 1) ? " message" : " messages") + " to topic"
				+ ((topics.size() == 1) ? " '" + topics.get(0) + "'" : "s " + topics) + " not confirmed by Redis, "
				+ "which may or may not have stored " + ((messageIds.size() == 1) ? "it" : "them") + " (ids " + ids
				+ "): send again with the same ids (sends are idempotent by id) or cancel them. Cause: " + cause;
	}

}

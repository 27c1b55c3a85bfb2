package io.github.delayqueue.store;

import java.util.List;
import java.util.Map;

import io.github.delayqueue.store.PartialStats.PartitionFailure;

/**
 * One page of a topic's messages in one state.
 *
 * @param total entries of the state's index (for the ready list its length, which may
 * include ids that claim will drop), over the partitions that answered
 * @param messages the messages of the page, oldest first
 * @param unreachable the partitions of a partitioned topic that did not answer, whose
 * messages the page leaves out; empty when all answered
 */
public record MessagePage(long total, List<MessageSummary> messages, Map<String, PartitionFailure> unreachable) {

	/**
	 * Keeps unmodifiable copies.
	 * @param total entries of the state's index
	 * @param messages the messages of the page
	 * @param unreachable the partitions that did not answer
	 */
	public MessagePage {
		messages = List.copyOf(messages);
		unreachable = Map.copyOf(unreachable);
	}

	/**
	 * A page read from every partition.
	 * @param total entries of the state's index
	 * @param messages the messages of the page, oldest first
	 */
	public MessagePage(long total, List<MessageSummary> messages) {
		this(total, messages, Map.of());
	}

}

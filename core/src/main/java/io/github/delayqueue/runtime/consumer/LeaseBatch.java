package io.github.delayqueue.runtime.consumer;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

/**
 * Messages in hand that one script call acts on together (acknowledged, extended or
 * handed back): their ids and lease tokens, in the same order.
 *
 * @param messages the messages
 */
record LeaseBatch(List<InFlightMessage> messages) {

	/** Most ids a log line names; the others are counted. */
	private static final int LOGGED_IDS = 20;

	/**
	 * Splits messages into batches.
	 * @param messages the messages
	 * @param size the most messages in one batch
	 * @return the batches, in order, none empty
	 */
	static List<LeaseBatch> of(Collection<InFlightMessage> messages, int size) {
		List<InFlightMessage> all = List.copyOf(messages);
		List<LeaseBatch> batches = new ArrayList<>();
		for (int from = 0; from < all.size(); from += size) {
			batches.add(new LeaseBatch(all.subList(from, Math.min(all.size(), from + size))));
		}
		return batches;
	}

	List<String> ids() {
		return this.messages.stream().map(InFlightMessage::id).toList();
	}

	List<String> leaseTokens() {
		return this.messages.stream().map(InFlightMessage::leaseToken).toList();
	}

	int size() {
		return this.messages.size();
	}

	/**
	 * @return the ids for a log line: all of them, or the first 20 and how many more
	 */
	String describeIds() {
		List<String> ids = ids();
		return (ids.size() <= LOGGED_IDS) ? ids.toString()
				: ids.subList(0, LOGGED_IDS) + " and " + (ids.size() - LOGGED_IDS) + " more";
	}

}

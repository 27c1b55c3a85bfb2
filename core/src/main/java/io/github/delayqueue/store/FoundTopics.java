package io.github.delayqueue.store;

import java.util.List;
import java.util.Map;

/**
 * The topics a search of the store found, and the servers it could not search.
 *
 * @param topics topic names in alphabetical order
 * @param unreachable each server that did not answer the search, as {@code host:port},
 * with why: topics only it holds are missing from {@code topics}; empty when all answered
 */
public record FoundTopics(List<String> topics, Map<String, String> unreachable) {

	/**
	 * Keeps unmodifiable copies.
	 * @param topics the topics found
	 * @param unreachable the servers that did not answer
	 */
	public FoundTopics {
		topics = List.copyOf(topics);
		unreachable = Map.copyOf(unreachable);
	}

}

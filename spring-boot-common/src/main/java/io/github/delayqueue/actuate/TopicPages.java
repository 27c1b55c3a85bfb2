package io.github.delayqueue.actuate;

import java.util.List;
import java.util.Locale;

import io.github.delayqueue.actuate.DelayQueueEndpoint.MessageEntry;
import io.github.delayqueue.actuate.DelayQueueEndpoint.PageDescriptor;
import io.github.delayqueue.actuate.DelayQueueEndpoint.TopicDescriptor;
import io.github.delayqueue.store.MessagePage;
import io.github.delayqueue.store.MessageState;
import io.github.delayqueue.store.MessageStore;
import io.github.delayqueue.store.TopicInspector;
import io.github.delayqueue.store.TopicStats;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;
import org.springframework.dao.DataAccessException;

import static io.github.delayqueue.actuate.DelayQueueEndpoint.DEFAULT_PAGE_SIZE;
import static io.github.delayqueue.actuate.DelayQueueEndpoint.MAX_OFFSET;
import static io.github.delayqueue.actuate.DelayQueueEndpoint.MAX_PAGE_SIZE;

/**
 * One topic as the {@code delayqueue} endpoint shows it: its counts, its listener here,
 * and a page of its messages in one state, which the request names with its offset and
 * limit.
 */
final class TopicPages {

	private final MessageStore store;

	private final ListenerDescriptions listeners;

	/**
	 * Creates the pages.
	 * @param store the Redis store
	 * @param listeners the descriptions of this application's listeners
	 */
	TopicPages(MessageStore store, ListenerDescriptions listeners) {
		this.store = store;
		this.listeners = listeners;
	}

	/**
	 * Reads a topic with a page of its messages.
	 * @param topic the topic
	 * @param state the state, {@code scheduled} unless given
	 * @param offset rank of the first message, 0 unless given
	 * @param limit most messages, {@value DelayQueueEndpoint#DEFAULT_PAGE_SIZE} unless
	 * given, at most {@value DelayQueueEndpoint#MAX_PAGE_SIZE}
	 * @return the topic
	 * @throws InvalidEndpointRequestException for an invalid topic, state, offset or
	 * limit
	 * @throws DataAccessException if Redis cannot be read within the store's timeout
	 */
	TopicDescriptor read(String topic, @Nullable String state, @Nullable Long offset, @Nullable Integer limit) {
		EndpointErrors.requireTopic(topic);
		MessageState messageState = (state != null) ? parseState(state) : MessageState.SCHEDULED;
		long from = (offset != null) ? offset : 0;
		int size = (limit != null) ? Math.min(limit, MAX_PAGE_SIZE) : DEFAULT_PAGE_SIZE;
		if (from < 0 || from > MAX_OFFSET || size < 1) {
			throw new InvalidEndpointRequestException(
					"offset must be 0 to " + MAX_OFFSET + " and limit 1 or more, but were " + from + " and " + size,
					"Bad offset or limit");
		}
		TopicInspector inspector = this.store.inspector(topic);
		TopicStats stats = inspector.stats();
		MessagePage page;
		try {
			page = inspector.page(messageState, from, size);
		}
		catch (IllegalArgumentException ex) {
			// A page too far into a partitioned topic, whose partitions are merged here.
			throw new InvalidEndpointRequestException(ex.getMessage(), "Bad offset");
		}
		List<MessageEntry> entries = page.messages().stream().map(EndpointReplies::entry).toList();
		PageDescriptor pageDescriptor = new PageDescriptor(EndpointReplies.stateName(messageState), from, size,
				page.total(), entries);
		return EndpointReplies.topic(topic, this.store.partitions().count(topic), stats, this.listeners.of(topic),
				pageDescriptor);
	}

	private static MessageState parseState(String state) {
		return switch (state.toLowerCase(Locale.ROOT).replace('_', '-')) {
			case "scheduled" -> MessageState.SCHEDULED;
			case "ready" -> MessageState.READY;
			case "in-flight", "inflight" -> MessageState.IN_FLIGHT;
			case "dead" -> MessageState.DEAD;
			default -> throw new InvalidEndpointRequestException(
					"Unknown state '" + state + "': use scheduled, ready, in-flight or dead", "Unknown state");
		};
	}

}

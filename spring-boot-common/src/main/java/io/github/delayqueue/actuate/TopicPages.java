package io.github.delayqueue.actuate;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import io.github.delayqueue.actuate.DelayQueueEndpoint.MessageEntry;
import io.github.delayqueue.actuate.DelayQueueEndpoint.PageDescriptor;
import io.github.delayqueue.actuate.DelayQueueEndpoint.TopicDescriptor;
import io.github.delayqueue.store.GroupView;
import io.github.delayqueue.store.MessagePage;
import io.github.delayqueue.store.MessageState;
import io.github.delayqueue.store.MessageStore;
import io.github.delayqueue.store.NewMessage;
import io.github.delayqueue.store.PartialStats;
import io.github.delayqueue.store.PartialStats.PartitionFailure;
import io.github.delayqueue.store.TopicInspector;
import io.github.delayqueue.store.TopicStats;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;
import org.springframework.dao.DataAccessException;
import org.springframework.dao.DataAccessResourceFailureException;

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
	 * Reads a topic with a page of its messages. Its partitions are read at once: the
	 * counts and the page leave out those that do not answer in time, and name them.
	 * @param topic the topic
	 * @param state the state, {@code scheduled} unless given
	 * @param offset rank of the first message, 0 unless given
	 * @param limit most messages, {@value DelayQueueEndpoint#DEFAULT_PAGE_SIZE} unless
	 * given, at most {@value DelayQueueEndpoint#MAX_PAGE_SIZE}
	 * @param group a group to read by name as well, if any (on a partitioned topic, in
	 * partition 0, where groups live)
	 * @param within the longest wait for Redis (never longer than the store's timeout)
	 * @return the topic
	 * @throws InvalidEndpointRequestException for an invalid topic, state, offset, limit
	 * or group name
	 * @throws DataAccessException if no partition of the topic answered
	 */
	TopicDescriptor read(String topic, @Nullable String state, @Nullable Long offset, @Nullable Integer limit,
			@Nullable String group, Duration within) {
		EndpointErrors.requireTopic(topic);
		if (group != null) {
			requireGroup(group);
		}
		MessageState messageState = (state != null) ? parseState(state) : MessageState.SCHEDULED;
		long from = (offset != null) ? offset : 0;
		int size = (limit != null) ? Math.min(limit, MAX_PAGE_SIZE) : DEFAULT_PAGE_SIZE;
		if (from < 0 || from > MAX_OFFSET || size < 1) {
			throw new InvalidEndpointRequestException(
					"offset must be 0 to " + MAX_OFFSET + " and limit 1 or more, but were " + from + " and " + size,
					"Bad offset or limit");
		}
		Duration wait = (within.compareTo(this.store.timeout()) < 0) ? within : this.store.timeout();
		long deadline = System.nanoTime() + wait.toNanos();
		TopicInspector inspector = this.store.inspector(topic);
		Map<String, CompletableFuture<TopicStats>> reads = inspector.readPartitions();
		MessagePage page;
		try {
			page = inspector.page(messageState, from, size, wait);
		}
		catch (IllegalArgumentException ex) {
			// A page too far into a partitioned topic, whose partitions are merged here.
			throw new InvalidEndpointRequestException(ex.getMessage(), "Bad offset");
		}
		catch (DataAccessException ex) {
			PartialStats stats = PartialStats.await(inspector, reads, deadline, wait);
			if (stats.stats() == null) {
				throw unanswered(topic, stats);
			}
			throw ex;
		}
		PartialStats stats = PartialStats.await(inspector, reads, deadline, wait);
		TopicStats counts = stats.stats();
		if (counts == null) {
			throw unanswered(topic, stats);
		}
		Map<String, PartitionFailure> unreachable = new LinkedHashMap<>(stats.unreachable());
		page.unreachable().forEach(unreachable::putIfAbsent);
		int partitions = this.store.partitions().count(topic);
		List<MessageEntry> entries = page.messages()
			.stream()
			.map((message) -> EndpointReplies.entry(message, partitions))
			.toList();
		PageDescriptor pageDescriptor = new PageDescriptor(EndpointReplies.stateName(messageState), from, size,
				page.total(), entries);
		GroupView groupView = (group != null) ? inspector.group(group) : null;
		return EndpointReplies.topic(topic, partitions, counts, this.listeners.of(topic), pageDescriptor,
				EndpointReplies.unreachable(unreachable), groupView);
	}

	/** A group's name as a message can have it, else a bad request naming why. */
	private static void requireGroup(String group) {
		try {
			NewMessage.checkGroup(group);
		}
		catch (IllegalArgumentException ex) {
			throw new InvalidEndpointRequestException(ex.getMessage(), "Bad group");
		}
	}

	/** No partition of the topic answered: each with its primary and why. */
	private static DataAccessException unanswered(String topic, PartialStats stats) {
		return new DataAccessResourceFailureException("No partition of topic '" + topic + "' answered: "
				+ String.join("; ",
						stats.unreachable()
							.values()
							.stream()
							.map((failure) -> failure.partition() + ": " + failure.describe())
							.toList()));
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

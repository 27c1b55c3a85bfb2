package io.github.delayqueue.actuate;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

import io.github.delayqueue.actuate.DelayQueueEndpoint.QueueDescriptor;
import io.github.delayqueue.actuate.DelayQueueEndpoint.ScheduleDescriptor;
import io.github.delayqueue.actuate.DelayQueueEndpoint.TopicDescriptor;
import io.github.delayqueue.producer.InvalidMessageException;
import io.github.delayqueue.producer.Topics;
import io.github.delayqueue.runtime.DelayQueueRuntime;
import io.github.delayqueue.runtime.ListenerState;
import io.github.delayqueue.schedule.DelayQueueSchedules;
import io.github.delayqueue.store.MessageStore;
import io.github.delayqueue.store.PartitionCountException;
import io.github.delayqueue.store.TopicStats;
import org.jspecify.annotations.Nullable;

import org.springframework.core.NestedExceptionUtils;
import org.springframework.dao.DataAccessException;

import static io.github.delayqueue.actuate.DelayQueueEndpoint.MAX_TOPICS;

/**
 * The overview of the {@code delayqueue} endpoint: every topic with a listener here or
 * with messages under the key prefix, with its counts, and the recurring schedules. Only
 * this read uses {@code SCAN}, for at most {@value DelayQueueEndpoint#MAX_TOPICS} topics.
 */
final class QueueOverview {

	private final MessageStore store;

	private final DelayQueueRuntime runtime;

	private final DelayQueueSchedules schedules;

	private final ListenerDescriptions listeners;

	/**
	 * Creates the overview.
	 * @param store the Redis store
	 * @param runtime the listeners of this application
	 * @param schedules the schedules
	 * @param listeners the descriptions of this application's listeners
	 */
	QueueOverview(MessageStore store, DelayQueueRuntime runtime, DelayQueueSchedules schedules,
			ListenerDescriptions listeners) {
		this.store = store;
		this.runtime = runtime;
		this.schedules = schedules;
		this.listeners = listeners;
	}

	/**
	 * Reads every topic. A name found under the prefix that is no topic's, or a topic
	 * whose keys hold the wrong Redis type, is left out and named in
	 * {@link QueueDescriptor#errors()}; the others are shown.
	 * @return the topics
	 * @throws DataAccessException if Redis cannot be read; each read waits at most the
	 * store's timeout
	 */
	QueueDescriptor read() {
		List<String> found = this.store.findTopics(MAX_TOPICS + 1);
		boolean truncated = found.size() > MAX_TOPICS;
		Map<String, String> errors = new LinkedHashMap<>();
		TreeSet<String> topics = new TreeSet<>();
		for (String topic : found.subList(0, Math.min(found.size(), MAX_TOPICS))) {
			String problem = topicNameProblem(topic);
			if (problem != null) {
				errors.put(topic, problem);
			}
			else {
				topics.add(topic);
			}
		}
		topics.addAll(this.runtime.getEndpoints().keySet());
		Map<String, ListenerState> states = this.runtime.getListenerStates();
		Map<String, TopicDescriptor> descriptors = new LinkedHashMap<>();
		@Nullable String time = null;
		for (String topic : topics) {
			TopicStats stats;
			try {
				stats = this.store.inspector(topic).stats();
			}
			catch (PartitionCountException ex) {
				errors.put(topic, ex.getMessage());
				continue;
			}
			catch (DataAccessException ex) {
				if (!isWrongType(ex)) {
					throw ex;
				}
				errors.put(topic, "A key of the topic holds the wrong Redis type (written by something else): "
						+ NestedExceptionUtils.getMostSpecificCause(ex).getMessage());
				continue;
			}
			time = EndpointReplies.instant(stats.nowMillis());
			descriptors.put(topic, EndpointReplies.topic(null, this.store.partitions().count(topic), stats,
					this.listeners.of(topic, states), null));
		}
		List<ScheduleDescriptor> schedules = this.schedules.list().stream().map(EndpointReplies::schedule).toList();
		return new QueueDescriptor(this.store.prefix(), time, descriptors, truncated ? Boolean.TRUE : null,
				errors.isEmpty() ? null : errors, schedules.isEmpty() ? null : schedules);
	}

	private static @Nullable String topicNameProblem(String topic) {
		try {
			Topics.requireValidOrDeadLetters(topic);
			return null;
		}
		catch (InvalidMessageException ex) {
			return "Keys under the prefix name no usable topic: " + ex.getMessage();
		}
	}

	private static boolean isWrongType(DataAccessException ex) {
		String message = NestedExceptionUtils.getMostSpecificCause(ex).getMessage();
		return message != null && message.contains("WRONGTYPE");
	}

}

package io.github.delayqueue.actuate;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import io.github.delayqueue.actuate.DelayQueueEndpoint.QueueDescriptor;
import io.github.delayqueue.actuate.DelayQueueEndpoint.ScheduleDescriptor;
import io.github.delayqueue.actuate.DelayQueueEndpoint.TopicDescriptor;
import io.github.delayqueue.producer.InvalidMessageException;
import io.github.delayqueue.producer.Topics;
import io.github.delayqueue.runtime.DelayQueueRuntime;
import io.github.delayqueue.runtime.ListenerState;
import io.github.delayqueue.schedule.DelayQueueSchedules;
import io.github.delayqueue.schedule.ScheduleInfo;
import io.github.delayqueue.store.Failures;
import io.github.delayqueue.store.FoundTopics;
import io.github.delayqueue.store.MessageStore;
import io.github.delayqueue.store.PartialStats;
import io.github.delayqueue.store.PartitionCountException;
import io.github.delayqueue.store.TopicInspector;
import io.github.delayqueue.store.TopicStats;
import io.github.delayqueue.time.Durations;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.dao.DataAccessException;
import org.springframework.scheduling.concurrent.CustomizableThreadFactory;

import static io.github.delayqueue.actuate.DelayQueueEndpoint.MAX_TOPICS;

/**
 * The overview of the {@code delayqueue} endpoint: every topic with a listener here or
 * with messages under the key prefix, with its counts, and the recurring schedules. Only
 * this read uses {@code SCAN}, for at most {@value DelayQueueEndpoint#MAX_TOPICS} topics.
 */
final class QueueOverview {

	private static final Log logger = LogFactory.getLog(DelayQueueEndpoint.class);

	/** Schedule lists read at once; more wait their turn. */
	private static final int SCHEDULE_READERS = 2;

	private final MessageStore store;

	private final DelayQueueRuntime runtime;

	private final DelayQueueSchedules schedules;

	/**
	 * Reads the schedules beside the topics, so that a registry on a server that does not
	 * answer holds back nothing else; its threads end when idle.
	 */
	private final ThreadPoolExecutor scheduleReads;

	private final ListenerDescriptions listeners;

	/** The Redis servers that did not answer the last overview, for its log. */
	private volatile Set<String> lastUnreachable = Set.of();

	/**
	 * Creates the overview.
	 * @param store the Redis store
	 * @param runtime the listeners of this application
	 * @param schedules the schedules
	 * @param listeners the descriptions of this application's listeners
	 */
	QueueOverview(MessageStore store, DelayQueueRuntime runtime, DelayQueueSchedules schedules,
			ListenerDescriptions listeners) {
		CustomizableThreadFactory threads = new CustomizableThreadFactory("delay-queue-overview-");
		threads.setDaemon(true);
		this.scheduleReads = new ThreadPoolExecutor(SCHEDULE_READERS, SCHEDULE_READERS, 10, TimeUnit.SECONDS,
				new LinkedBlockingQueue<>(), threads);
		this.scheduleReads.allowCoreThreadTimeOut(true);
		this.store = store;
		this.runtime = runtime;
		this.schedules = schedules;
		this.listeners = listeners;
	}

	/**
	 * Reads every topic. A name found under the prefix that is no topic's, or a topic
	 * whose keys hold the wrong Redis type, is left out and named in
	 * {@link QueueDescriptor#errors()}; the others are shown. The topic search and the
	 * topics' partitions are read at once, server by server, within the store's timeout:
	 * a partition that does not answer is named in its topic, with its primary, and the
	 * others are counted; a topic none of whose partitions answers is named in
	 * {@link QueueDescriptor#errors()}.
	 * @param within the longest wait for Redis (never longer than the store's timeout)
	 * @return the topics
	 * @throws DataAccessException if the one server outside a Cluster cannot be searched
	 */
	QueueDescriptor read(Duration within) {
		Duration wait = (within.compareTo(this.store.timeout()) < 0) ? within : this.store.timeout();
		long deadline = System.nanoTime() + wait.toNanos();
		// Half the time for the search, so that the topics it finds are read in time.
		CompletableFuture<List<ScheduleInfo>> scheduleList = CompletableFuture.supplyAsync(this.schedules::list,
				this.scheduleReads);
		FoundTopics found = this.store.searchTopics(MAX_TOPICS + 1, wait.dividedBy(2));
		boolean truncated = found.topics().size() > MAX_TOPICS;
		Map<String, String> errors = new LinkedHashMap<>();
		TreeSet<String> topics = new TreeSet<>();
		for (String topic : found.topics().subList(0, Math.min(found.topics().size(), MAX_TOPICS))) {
			String problem = topicNameProblem(topic);
			if (problem != null) {
				errors.put(topic, problem);
			}
			else {
				topics.add(topic);
			}
		}
		topics.addAll(this.runtime.getEndpoints().keySet());
		Map<String, TopicInspector> inspectors = new LinkedHashMap<>();
		Map<String, Map<String, CompletableFuture<TopicStats>>> reads = new LinkedHashMap<>();
		for (String topic : topics) {
			TopicInspector inspector = this.store.inspector(topic);
			inspectors.put(topic, inspector);
			reads.put(topic, inspector.readPartitions());
		}
		Map<String, ListenerState> states = this.runtime.getListenerStates();
		Map<String, TopicDescriptor> descriptors = new LinkedHashMap<>();
		Map<String, String> unreachable = new TreeMap<>(found.unreachable());
		Map<String, List<String>> partitionsByServer = new TreeMap<>();
		@Nullable String time = null;
		for (String topic : topics) {
			PartialStats stats;
			try {
				stats = PartialStats.await(inspectors.get(topic), reads.get(topic), deadline, wait);
			}
			catch (PartitionCountException ex) {
				errors.put(topic, ex.getMessage());
				continue;
			}
			stats.unreachable()
				.values()
				.stream()
				.filter((failure) -> !failure.reason().contains("WRONGTYPE"))
				.forEach((failure) -> partitionsByServer
					.computeIfAbsent(EndpointReplies.server(failure), (server) -> new ArrayList<>())
					.add(failure.partition()));
			TopicStats counts = stats.stats();
			if (counts == null) {
				errors.put(topic, noPartitionAnswered(stats));
				continue;
			}
			time = EndpointReplies.instant(counts.nowMillis());
			descriptors.put(topic, EndpointReplies.topic(null, this.store.partitions().count(topic), counts,
					this.listeners.of(topic, states), null, EndpointReplies.unreachable(stats.unreachable())));
		}
		partitionsByServer.forEach((server, partitions) -> unreachable.merge(server,
				"did not answer for partitions " + String.join(", ", partitions), (scan, read) -> scan + "; " + read));
		logUnreachable(unreachable);
		List<ScheduleDescriptor> schedules = List.of();
		@Nullable String schedulesError = null;
		try {
			schedules = scheduleList.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS)
				.stream()
				.map(EndpointReplies::schedule)
				.toList();
		}
		catch (TimeoutException ex) {
			scheduleList.cancel(true);
			schedulesError = "The recurring schedules could not be read: Redis did not answer within "
					+ Durations.format(wait);
		}
		catch (ExecutionException ex) {
			schedulesError = "The recurring schedules could not be read: " + Failures.describe(ex.getCause());
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			schedulesError = "The recurring schedules could not be read: interrupted";
		}
		if (schedulesError != null) {
			logger.warn("delayqueue endpoint: " + schedulesError);
		}
		return new QueueDescriptor(this.store.prefix(), time, descriptors, truncated ? Boolean.TRUE : null,
				errors.isEmpty() ? null : errors, schedules.isEmpty() ? null : schedules,
				unreachable.isEmpty() ? null : unreachable, schedulesError);
	}

	/**
	 * Says which Redis servers did not answer: at WARN when they change (a dashboard
	 * reads the overview every few seconds), at DEBUG while the same ones stay out of
	 * reach, and once at INFO when all answer again.
	 */
	private void logUnreachable(Map<String, String> unreachable) {
		Set<String> servers = Set.copyOf(unreachable.keySet());
		Set<String> before = this.lastUnreachable;
		this.lastUnreachable = servers;
		if (servers.isEmpty()) {
			if (!before.isEmpty()) {
				logger.info("delayqueue endpoint: every Redis server answered again");
			}
		}
		else if (!servers.equals(before)) {
			logger.warn("delayqueue endpoint: Redis servers did not answer, the topics are shown without them: "
					+ unreachable);
		}
		else if (logger.isDebugEnabled()) {
			logger.debug("delayqueue endpoint: Redis servers still did not answer: " + unreachable);
		}
	}

	/**
	 * Why none of a topic's partitions could be read: the wrong Redis type, or each
	 * partition with its primary and why it did not answer.
	 */
	private static String noPartitionAnswered(PartialStats stats) {
		List<String> reasons = stats.unreachable()
			.values()
			.stream()
			.map((failure) -> failure.partition() + ": " + failure.describe())
			.toList();
		if (reasons.stream().anyMatch((reason) -> reason.contains("WRONGTYPE"))) {
			return "A key of the topic holds the wrong Redis type (written by something else): "
					+ String.join("; ", reasons);
		}
		return "Redis did not answer for the topic: " + String.join("; ", reasons);
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

}

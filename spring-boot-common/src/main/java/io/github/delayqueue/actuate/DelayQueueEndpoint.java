package io.github.delayqueue.actuate;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import io.github.delayqueue.actuate.EndpointActions.MessageRequest;
import io.github.delayqueue.actuate.EndpointActions.TopicRequest;
import io.github.delayqueue.producer.DelayQueueTemplate;
import io.github.delayqueue.runtime.DelayQueueRuntime;
import io.github.delayqueue.schedule.DelayQueueSchedules;
import io.github.delayqueue.store.GroupView;
import io.github.delayqueue.store.MessageSnapshot;
import io.github.delayqueue.store.MessageStore;
import io.github.delayqueue.store.TopicStats;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.actuate.endpoint.Access;
import org.springframework.boot.actuate.endpoint.OperationResponseBody;
import org.springframework.boot.actuate.endpoint.annotation.DeleteOperation;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;
import org.springframework.dao.DataAccessException;

/**
 * The {@code delayqueue} Actuator endpoint. Reads: every topic with its counts, next due
 * time, oldest lateness and listener here; one topic with a page of its messages in one
 * state; one message with its headers and the start of its payload. Writes (off unless
 * the endpoint's access is {@code unrestricted}): cancel, reschedule, replay or purge a
 * message; replay or purge a topic's dead letters; pause or resume a topic's listener in
 * this application; pause, resume or trigger a topic's schedule. Times are by the Redis
 * clock; reads never load a whole set or list, and only the topic list uses {@code SCAN}.
 * <p>
 * This class holds the operations and the replies' types; the reads
 * ({@link QueueOverview}, {@link TopicPages}, {@link MessageInspection}) and the actions
 * ({@link EndpointActions}) are done by classes of their own.
 * <p>
 * An optional parameter of an operation carries Spring's own {@code @Nullable} beside
 * JSpecify's: Spring Boot 4 reads either, Spring Boot 3 only Spring's.
 */
@SuppressWarnings("deprecation")
@Endpoint(id = "delayqueue", defaultAccess = Access.READ_ONLY)
public class DelayQueueEndpoint {

	/** Messages per page unless a limit is given. */
	public static final int DEFAULT_PAGE_SIZE = 20;

	/** Most messages per page; a larger limit is lowered to this. */
	public static final int MAX_PAGE_SIZE = 100;

	/** Largest offset of a page. */
	public static final long MAX_OFFSET = 1_000_000_000L;

	/** Most topics found by {@code SCAN} that the overview lists. */
	public static final int MAX_TOPICS = 1000;

	/** Most payload bytes shown for one message. */
	public static final int MAX_PAYLOAD_BYTES = 4096;

	/** Dead letters replayed or purged per script call. */
	public static final int BATCH_SIZE = 100;

	private final QueueOverview overview;

	private final TopicPages topics;

	private final MessageInspection messages;

	private final EndpointActions actions;

	private final Duration timeout;

	/**
	 * Creates the endpoint.
	 * @param store the Redis store
	 * @param template the template, for cancel and reschedule
	 * @param runtime the listeners of this application
	 * @param schedules the application's schedules, whose changes wake this application's
	 * schedule poller up
	 */
	public DelayQueueEndpoint(MessageStore store, DelayQueueTemplate template, DelayQueueRuntime runtime,
			DelayQueueSchedules schedules) {
		ListenerDescriptions listeners = new ListenerDescriptions(runtime);
		this.overview = new QueueOverview(store, runtime, schedules, listeners);
		this.topics = new TopicPages(store, listeners);
		this.messages = new MessageInspection(store);
		this.actions = new EndpointActions(store, template, runtime, schedules);
		this.timeout = store.timeout();
	}

	/**
	 * Every topic with a listener here or with messages under the key prefix, with its
	 * counts; 503 with an error naming what did not answer when Redis cannot be read
	 * within the store's timeout ({@code delay-queue.producer.send-timeout}).
	 * @return the topics, or the error
	 */
	@ReadOperation
	public WebEndpointResponse<Object> overview() {
		return EndpointErrors.answer(this::queue);
	}

	/**
	 * Every topic with a listener here or with messages under the key prefix, with its
	 * counts. A name found under the prefix that is no topic's, or a topic whose keys
	 * hold the wrong Redis type (another application's, or a typo), is left out and named
	 * in {@link QueueDescriptor#errors()}; the others are shown.
	 * @return the topics
	 * @throws DataAccessException if Redis cannot be read; each read waits at most the
	 * store's timeout
	 */
	public QueueDescriptor queue() {
		return this.overview.read(this.timeout);
	}

	/**
	 * Every topic, as {@link #queue()} reads it, waiting for Redis at most a given time:
	 * what does not answer by then is named and the rest shown.
	 * @param within the longest wait for Redis (never longer than the store's timeout)
	 * @return the topics
	 * @throws DataAccessException if the one server outside a Cluster cannot be searched
	 */
	public QueueDescriptor queue(Duration within) {
		return this.overview.read(within);
	}

	/**
	 * One topic with its counts and a page of its messages in one state.
	 * @param topic the topic
	 * @param state {@code scheduled} (the default, by due time), {@code ready} (in list
	 * order), {@code in-flight} (by lease deadline) or {@code dead} (by time of death)
	 * @param offset rank of the first message, 0 unless given
	 * @param limit most messages, {@value #DEFAULT_PAGE_SIZE} unless given, at most
	 * {@value #MAX_PAGE_SIZE}
	 * @param group a group of the topic to read by name as well: the answer's
	 * {@code group} then holds its ready and in-flight counts, whether it waits at its
	 * concurrency limit and its next ready ids
	 * @return the topic; 400 for a name no group can have; 503 naming what did not answer
	 * when Redis cannot be read within the store's timeout
	 */
	@ReadOperation
	public WebEndpointResponse<Object> readTopic(@Selector String topic,
			@org.springframework.lang.Nullable @Nullable String state,
			@org.springframework.lang.Nullable @Nullable Long offset,
			@org.springframework.lang.Nullable @Nullable Integer limit,
			@org.springframework.lang.Nullable @Nullable String group) {
		return EndpointErrors.answer(() -> topic(topic, state, offset, limit, group, this.timeout));
	}

	/**
	 * One topic with its counts and a page of its messages in one state, as
	 * {@link #readTopic(String, String, Long, Integer, String)} answers it without a
	 * group.
	 * @param topic the topic
	 * @param state the state, {@code scheduled} unless given
	 * @param offset rank of the first message, 0 unless given
	 * @param limit most messages, {@value #DEFAULT_PAGE_SIZE} unless given
	 * @return the topic, or the error
	 */
	public WebEndpointResponse<Object> readTopic(String topic, @Nullable String state, @Nullable Long offset,
			@Nullable Integer limit) {
		return readTopic(topic, state, offset, limit, null);
	}

	/**
	 * One topic with its counts and a page of its messages in one state, as
	 * {@link #readTopic} answers it.
	 * @param topic the topic
	 * @param state the state, {@code scheduled} unless given
	 * @param offset rank of the first message, 0 unless given
	 * @param limit most messages, {@value #DEFAULT_PAGE_SIZE} unless given
	 * @return the topic
	 * @throws DataAccessException if Redis cannot be read within the store's timeout
	 */
	public TopicDescriptor topic(String topic, @Nullable String state, @Nullable Long offset, @Nullable Integer limit) {
		return topic(topic, state, offset, limit, this.timeout);
	}

	/**
	 * One topic, as {@link #topic(String, String, Long, Integer)} reads it, waiting for
	 * Redis at most a given time: the counts and the page leave out the partitions that
	 * do not answer by then, and name them.
	 * @param topic the topic
	 * @param state the state, {@code scheduled} unless given
	 * @param offset rank of the first message, 0 unless given
	 * @param limit most messages, {@value #DEFAULT_PAGE_SIZE} unless given
	 * @param within the longest wait for Redis (never longer than the store's timeout)
	 * @return the topic
	 * @throws DataAccessException if no partition of the topic answered
	 */
	public TopicDescriptor topic(String topic, @Nullable String state, @Nullable Long offset, @Nullable Integer limit,
			Duration within) {
		return topic(topic, state, offset, limit, null, within);
	}

	/**
	 * One topic, as {@link #topic(String, String, Long, Integer, Duration)} reads it,
	 * with one of its groups read by name (on a partitioned topic, in partition 0, where
	 * groups live).
	 * @param topic the topic
	 * @param state the state, {@code scheduled} unless given
	 * @param offset rank of the first message, 0 unless given
	 * @param limit most messages, {@value #DEFAULT_PAGE_SIZE} unless given
	 * @param group the group to read, none unless given
	 * @param within the longest wait for Redis (never longer than the store's timeout)
	 * @return the topic
	 * @throws DataAccessException if no partition of the topic answered
	 */
	public TopicDescriptor topic(String topic, @Nullable String state, @Nullable Long offset, @Nullable Integer limit,
			@Nullable String group, Duration within) {
		return EndpointErrors.refusingStaleCounts(() -> this.topics.read(topic, state, offset, limit, group, within));
	}

	/**
	 * One message in whatever state it is, with its headers and the start of its payload.
	 * @param topic the topic
	 * @param id the message id
	 * @return the message; 404 if the topic has no message with that id, 503 naming what
	 * did not answer when Redis cannot be read within the store's timeout
	 */
	@ReadOperation
	public WebEndpointResponse<Object> readMessage(@Selector String topic, @Selector String id) {
		return EndpointErrors.answer(() -> message(topic, id));
	}

	/**
	 * One message, as {@link #readMessage} answers it.
	 * @param topic the topic
	 * @param id the message id
	 * @return the message, or {@code null} if the topic has no message with that id
	 * @throws DataAccessException if Redis cannot be read within the store's timeout
	 */
	public @Nullable MessageDescriptor message(String topic, String id) {
		return EndpointErrors.refusingStaleCounts(() -> this.messages.read(topic, id));
	}

	/**
	 * Acts on a topic: {@code pause} or {@code resume} its listener in this application;
	 * {@code replay-dead} (dead letters back to the schedule, due now, attempts reset) or
	 * {@code purge-dead} (dead letters deleted), oldest first, in batches of
	 * {@value #BATCH_SIZE}; {@code pause-schedule}, {@code resume-schedule} or
	 * {@code trigger-schedule} one of its schedules; {@code pause-group} (for
	 * {@code duration}, e.g. {@code 10m}, else until resumed) or {@code resume-group} one
	 * of its groups, in every application.
	 * @param topic the topic
	 * @param action the action
	 * @param limit for {@code replay-dead} and {@code purge-dead}: the most dead letters
	 * to act on, all that are dead when the call starts unless given
	 * @param schedule for the schedule actions: the schedule's name
	 * @param group for the group actions: the group's name
	 * @param duration for {@code pause-group}: how long the pause lasts
	 * @return what was done
	 */
	@WriteOperation
	public ActionResult topicAction(@Selector String topic, String action,
			@org.springframework.lang.Nullable @Nullable Long limit,
			@org.springframework.lang.Nullable @Nullable String schedule,
			@org.springframework.lang.Nullable @Nullable String group,
			@org.springframework.lang.Nullable @Nullable Duration duration) {
		return this.actions.onTopic(action, new TopicRequest(topic, limit, schedule, group, duration));
	}

	/**
	 * Acts on one message: {@code reschedule} a pending one (with {@code delay}, e.g.
	 * {@code 10m} or {@code PT10M}), {@code cancel} a pending one, {@code replay} a dead
	 * one (back to the schedule, due now, attempts reset) or {@code purge} a dead one
	 * (deleted).
	 * @param topic the topic
	 * @param id the message id
	 * @param action the action
	 * @param delay for {@code reschedule}: the new delay from now
	 * @return what was done
	 */
	@WriteOperation
	public ActionResult messageAction(@Selector String topic, @Selector String id, String action,
			@org.springframework.lang.Nullable @Nullable Duration delay) {
		return this.actions.onMessage(action, new MessageRequest(topic, id, delay));
	}

	/**
	 * Cancels a pending (scheduled or ready) message.
	 * @param topic the topic
	 * @param id the message id
	 * @return what was done
	 */
	@DeleteOperation
	public ActionResult cancel(@Selector String topic, @Selector String id) {
		return this.actions.onMessage("cancel", new MessageRequest(topic, id, null));
	}

	/**
	 * Every topic, by name.
	 *
	 * @param prefix the key prefix
	 * @param time the Redis time of the reading, absent without topics
	 * @param topics the topics, by name, in alphabetical order
	 * @param truncated {@code true} when more than {@value DelayQueueEndpoint#MAX_TOPICS}
	 * topics were found, absent otherwise
	 * @param errors why topics are left out, by name: this application spreads them over
	 * another number of partitions than Redis does, a key of theirs holds the wrong Redis
	 * type, or the name found under the prefix is no usable topic's; absent when none is
	 * @param schedules the recurring schedules, absent when there is none
	 * @param unreachable the Redis servers (on a Cluster, its primaries) that did not
	 * answer, as {@code host:port}, with what they did not answer: the search for topics
	 * (topics only they hold are missing) or the named partitions' reads; absent when all
	 * answered
	 * @param schedulesError why the recurring schedules could not be read (their
	 * registry's server did not answer), absent when they were
	 */
	public record QueueDescriptor(String prefix, @Nullable String time, Map<String, TopicDescriptor> topics,
			@Nullable Boolean truncated, @Nullable Map<String, String> errors,
			@Nullable List<ScheduleDescriptor> schedules, @Nullable Map<String, String> unreachable,
			@Nullable String schedulesError) implements OperationResponseBody {
	}

	/**
	 * One recurring schedule.
	 *
	 * @param name its name
	 * @param topic the topic its ticks are sent to
	 * @param cron its cron expression, absent for a fixed rate
	 * @param fixedRate its fixed rate, ISO-8601, absent for a cron expression
	 * @param zone the time zone of its cron expression ({@code Z} for a fixed rate)
	 * @param misfire what it sends for missed ticks
	 * @param nextFire when its next tick is due, absent when none is to come
	 * @param paused whether it is paused
	 */
	public record ScheduleDescriptor(String name, String topic, @Nullable String cron, @Nullable String fixedRate,
			String zone, String misfire, @Nullable String nextFire, boolean paused) {
	}

	/**
	 * One topic.
	 *
	 * @param topic the topic, only when asked for by name
	 * @param partitions the number of partitions this application spreads the topic over
	 * @param scheduled messages waiting for their due time
	 * @param ready messages due and waiting for a consumer
	 * @param readyByPriority ready messages of each priority that has some (see
	 * {@link TopicStats#readyByPriority()}), absent while the topic uses no priority
	 * above 0
	 * @param inFlight messages leased to a consumer
	 * @param dead messages in the dead-letter set
	 * @param nextDue due time of the earliest scheduled message, absent if none
	 * @param oldestLateness how late the longest-waiting due message is (see
	 * {@link TopicStats#oldestLateness()}), ISO-8601
	 * @param listener the topic's listener in this application, absent if none
	 * @param page a page of messages, only when asked for by name
	 * @param rememberedIds ids of handled messages remembered for their deduplication
	 * window (see {@code DelayMessage.Builder.deduplicateFor})
	 * @param unreachable the partitions that did not answer (for partition 0, the topic),
	 * each with why and its primary: the counts, times and page are those of the others;
	 * absent when all answered
	 * @param groupsWithReady the groups that have ready messages, absent while none has
	 * @param busiestGroups the ready messages of the groups that have the most, most
	 * first (see {@link TopicStats#busiestGroups()}), absent while no group has ready
	 * messages
	 * @param busiestInFlight the messages in flight of the groups that have the most,
	 * most first (see {@link TopicStats#busiestInFlight()}), absent while no message of a
	 * group is in flight
	 * @param group the group asked for by name, only when asked for
	 * @param pausedGroups the groups paused now, absent while none is
	 * @param firstPausesToEnd the paused groups whose pauses end first (up to 10), each
	 * with when (ISO-8601) or {@code until resumed}, absent while none is paused
	 */
	public record TopicDescriptor(@Nullable String topic, int partitions, long scheduled, long ready,
			@Nullable Map<Integer, Long> readyByPriority, long inFlight, long dead, @Nullable String nextDue,
			String oldestLateness, @Nullable ListenerDescriptor listener, @Nullable PageDescriptor page,
			long rememberedIds, @Nullable Map<String, String> unreachable, @Nullable Long groupsWithReady,
			@Nullable Map<String, Long> busiestGroups, @Nullable Map<String, Long> busiestInFlight,
			@Nullable GroupDescriptor group, @Nullable Long pausedGroups,
			@Nullable Map<String, String> firstPausesToEnd) implements OperationResponseBody {

		/**
		 * A topic without in-flight counts of groups and without a group read by name.
		 * @param topic the topic, only when asked for by name
		 * @param partitions the number of partitions
		 * @param scheduled messages waiting for their due time
		 * @param ready messages due and waiting for a consumer
		 * @param readyByPriority ready messages of each priority that has some
		 * @param inFlight messages leased to a consumer
		 * @param dead messages in the dead-letter set
		 * @param nextDue due time of the earliest scheduled message
		 * @param oldestLateness how late the longest-waiting due message is
		 * @param listener the topic's listener in this application
		 * @param page a page of messages
		 * @param rememberedIds ids remembered for their deduplication window
		 * @param unreachable the partitions that did not answer
		 * @param groupsWithReady the groups that have ready messages
		 * @param busiestGroups the ready messages of the groups that have the most
		 */
		public TopicDescriptor(@Nullable String topic, int partitions, long scheduled, long ready,
				@Nullable Map<Integer, Long> readyByPriority, long inFlight, long dead, @Nullable String nextDue,
				String oldestLateness, @Nullable ListenerDescriptor listener, @Nullable PageDescriptor page,
				long rememberedIds, @Nullable Map<String, String> unreachable, @Nullable Long groupsWithReady,
				@Nullable Map<String, Long> busiestGroups) {
			this(topic, partitions, scheduled, ready, readyByPriority, inFlight, dead, nextDue, oldestLateness,
					listener, page, rememberedIds, unreachable, groupsWithReady, busiestGroups, null, null, null, null);
		}

	}

	/**
	 * One group of a topic, read by name (see {@link GroupView}).
	 *
	 * @param name the group's name
	 * @param ready its ready messages
	 * @param inFlight its messages in flight
	 * @param waitingAtLimit whether its ready messages wait for one of its messages in
	 * flight to leave flight (it is at its concurrency limit)
	 * @param paused whether it is paused: claims pass its ready messages over
	 * @param pausedUntil when its pause ends, absent when it is not paused or until it is
	 * resumed
	 * @param firstReady the ids of its next ready messages, most urgent first, at most
	 * {@value GroupView#FIRST_READY_IDS}
	 */
	public record GroupDescriptor(String name, long ready, long inFlight, boolean waitingAtLimit, boolean paused,
			@Nullable String pausedUntil, List<String> firstReady) {
	}

	/**
	 * A topic's listener in this application.
	 *
	 * @param method the listener method
	 * @param state {@code running}, {@code paused} or {@code stopped}
	 * @param concurrency messages it handles at once
	 * @param maxAttempts deliveries before a message is dead-lettered
	 * @param visibilityTimeout lease length, ISO-8601
	 * @param rateLimit the topic's rate limit, such as {@code 100 per 1s}, absent if none
	 * @param groupConcurrency most messages of one group in flight at once, across every
	 * application, absent if no limit
	 * @param groupOrder {@code strict} when a failed message of a group waits in its
	 * group, which waits with it; absent for the default, relaxed order
	 * @param groupWeights the weights of the groups that take longer turns, absent when
	 * every group weighs 1
	 * @param groupRateLimit the rate limit of each group, such as {@code 5 per 1s},
	 * absent if none
	 */
	public record ListenerDescriptor(String method, String state, int concurrency, int maxAttempts,
			String visibilityTimeout, @Nullable String rateLimit, @Nullable Integer groupConcurrency,
			@Nullable String groupOrder, @Nullable Map<String, Integer> groupWeights, @Nullable String groupRateLimit) {
	}

	/**
	 * A page of a topic's messages in one state, oldest first.
	 *
	 * @param state the state
	 * @param offset rank of the first message
	 * @param limit most messages asked for
	 * @param total messages in that state (for {@code ready}, the list length, which may
	 * count ids cancelled or rescheduled since; those are left out of the page)
	 * @param messages the messages
	 */
	public record PageDescriptor(String state, long offset, int limit, long total, List<MessageEntry> messages) {
	}

	/**
	 * A message of a page.
	 *
	 * @param id the message id
	 * @param due its due time, absent if unreadable
	 * @param attempts deliveries that ended without an acknowledgement, absent if
	 * unreadable
	 * @param priority its priority, 0 (the default) to 9
	 * @param leaseDeadline for a message in flight: when its lease ends
	 * @param deadSince for a dead message: when it died
	 * @param lastError for a dead message: its last error
	 * @param partition the partition it is in, for a topic of more than one (absent
	 * otherwise)
	 */
	public record MessageEntry(String id, @Nullable String due, @Nullable Integer attempts, int priority,
			@Nullable String leaseDeadline, @Nullable String deadSince, @Nullable String lastError,
			@Nullable Integer partition) {
	}

	/**
	 * One message.
	 *
	 * @param topic the topic
	 * @param id the message id
	 * @param state {@code scheduled}, {@code ready}, {@code in-flight} or {@code dead}
	 * @param due its due time, absent if corrupt
	 * @param attempts deliveries that ended without an acknowledgement, absent if corrupt
	 * @param priority its priority, 0 (the default) to 9
	 * @param group the group it was sent in, absent for none or if corrupt
	 * @param leaseDeadline for a message in flight: when its lease ends
	 * @param deadSince for a dead message: when it died
	 * @param lastError for a dead message, why it died; for another, the error of its
	 * last failed attempt, if any
	 * @param headers the headers it was sent with (not the queue's own), absent if
	 * corrupt
	 * @param payload the first {@value DelayQueueEndpoint#MAX_PAYLOAD_BYTES} bytes of the
	 * payload as UTF-8 text, absent if they are not text (then in {@code payloadBase64})
	 * @param payloadBase64 the first bytes of the payload in Base64, when not UTF-8 text
	 * @param payloadSize the size of the whole payload in bytes (of the whole stored
	 * message if corrupt)
	 * @param payloadTruncated whether the payload is longer than what is shown
	 * @param corrupt why the stored message cannot be read, absent unless corrupt
	 * @param tooLong why neither headers nor payload are shown: the stored message is
	 * longer than {@link MessageSnapshot#MAX_READ_BYTES}, which is never read; absent
	 * otherwise
	 */
	public record MessageDescriptor(String topic, String id, String state, @Nullable String due,
			@Nullable Integer attempts, int priority, @Nullable String group, @Nullable String leaseDeadline,
			@Nullable String deadSince, @Nullable String lastError, @Nullable Map<String, String> headers,
			@Nullable String payload, @Nullable String payloadBase64, long payloadSize, boolean payloadTruncated,
			@Nullable String corrupt, @Nullable String tooLong) implements OperationResponseBody {
	}

	/**
	 * The outcome of a write operation.
	 *
	 * @param topic the topic
	 * @param id the message id, for a message action
	 * @param action the action
	 * @param affected messages (or listeners) changed
	 * @param detail what happened, in words
	 */
	public record ActionResult(String topic, @Nullable String id, String action, long affected,
			String detail) implements OperationResponseBody {
	}

}

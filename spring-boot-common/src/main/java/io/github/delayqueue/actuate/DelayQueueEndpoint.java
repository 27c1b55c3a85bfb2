package io.github.delayqueue.actuate;

import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CoderResult;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Arrays;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeSet;
import java.util.function.Supplier;

import io.github.delayqueue.producer.DelayQueueTemplate;
import io.github.delayqueue.producer.InvalidMessageException;
import io.github.delayqueue.producer.SendResult;
import io.github.delayqueue.producer.Topics;
import io.github.delayqueue.listener.DelayListenerEndpoint;
import io.github.delayqueue.runtime.DelayQueueRuntime;
import io.github.delayqueue.schedule.DelayQueueSchedules;
import io.github.delayqueue.schedule.Schedule;
import io.github.delayqueue.schedule.ScheduleTrigger;
import io.github.delayqueue.schedule.ScheduleInfo;
import io.github.delayqueue.runtime.ListenerState;
import io.github.delayqueue.store.CorruptMessageException;
import io.github.delayqueue.store.MessageFormat;
import io.github.delayqueue.store.MessagePage;
import io.github.delayqueue.store.MessageSnapshot;
import io.github.delayqueue.store.MessageState;
import io.github.delayqueue.store.MessageStore;
import io.github.delayqueue.store.MessageSummary;
import io.github.delayqueue.store.PartitionCountException;
import io.github.delayqueue.store.RateLimit;
import io.github.delayqueue.store.ReplayResult;
import io.github.delayqueue.store.StoredMessage;
import io.github.delayqueue.store.TopicInspector;
import io.github.delayqueue.store.TopicStats;
import io.github.delayqueue.time.Durations;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.actuate.endpoint.Access;
import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;
import org.springframework.boot.actuate.endpoint.OperationResponseBody;
import org.springframework.boot.actuate.endpoint.annotation.DeleteOperation;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;
import org.springframework.core.NestedExceptionUtils;
import org.springframework.dao.DataAccessException;

/**
 * The {@code delayqueue} Actuator endpoint. Reads: every topic with its counts, next due
 * time, oldest lateness and listener here; one topic with a page of its messages in one
 * state; one message with its headers and the start of its payload. Writes (off unless
 * the endpoint's access is {@code unrestricted}): cancel, reschedule, replay or purge a
 * message; replay or purge a topic's dead letters; pause or resume a topic's listener in
 * this application. Times are by the Redis clock; reads never load a whole set or list,
 * and only the topic list uses {@code SCAN}.
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

	/**
	 * Stored bytes read beyond the payload bytes shown, for the message's header and
	 * headers.
	 */
	private static final int HEADERS_ALLOWANCE = 16 * 1024;

	private static final Log logger = LogFactory.getLog(DelayQueueEndpoint.class);

	private final MessageStore store;

	private final DelayQueueTemplate template;

	private final DelayQueueRuntime runtime;

	private final DelayQueueSchedules schedules;

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
		this.store = store;
		this.template = template;
		this.runtime = runtime;
		this.schedules = schedules;
	}

	/**
	 * Every topic with a listener here or with messages under the key prefix, with its
	 * counts; 503 with an error naming what did not answer when Redis cannot be read
	 * within the store's timeout ({@code delay-queue.producer.send-timeout}).
	 * @return the topics, or the error
	 */
	@ReadOperation
	public WebEndpointResponse<Object> overview() {
		return answer(this::queue);
	}

	/**
	 * Reads through the endpoint: 404 without a body for {@code null}, 503 naming what
	 * did not answer when Redis cannot be read (each read waits at most the store's
	 * timeout).
	 */
	private static WebEndpointResponse<Object> answer(Supplier<@Nullable Object> read) {
		try {
			Object body = read.get();
			return (body != null) ? new WebEndpointResponse<>(body)
					: new WebEndpointResponse<>(WebEndpointResponse.STATUS_NOT_FOUND);
		}
		catch (DataAccessException ex) {
			String cause = (ex.getMessage() != null) ? ex.getMessage()
					: NestedExceptionUtils.getMostSpecificCause(ex).toString();
			logger.warn("delayqueue endpoint: Redis could not be read: " + cause);
			return new WebEndpointResponse<>(Map.of("error", "Redis could not be read: " + cause),
					WebEndpointResponse.STATUS_SERVICE_UNAVAILABLE);
		}
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
			time = instant(stats.nowMillis());
			descriptors.put(topic, TopicDescriptor.of(null, this.store.partitions().count(topic), stats,
					listener(topic, states), null));
		}
		List<ScheduleDescriptor> schedules = this.schedules.list().stream().map(ScheduleDescriptor::of).toList();
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

	/**
	 * One topic with its counts and a page of its messages in one state.
	 * @param topic the topic
	 * @param state {@code scheduled} (the default, by due time), {@code ready} (in list
	 * order), {@code in-flight} (by lease deadline) or {@code dead} (by time of death)
	 * @param offset rank of the first message, 0 unless given
	 * @param limit most messages, {@value #DEFAULT_PAGE_SIZE} unless given, at most
	 * {@value #MAX_PAGE_SIZE}
	 * @return the topic; 503 naming what did not answer when Redis cannot be read within
	 * the store's timeout
	 */
	@ReadOperation
	public WebEndpointResponse<Object> readTopic(@Selector String topic,
			@org.springframework.lang.Nullable @Nullable String state,
			@org.springframework.lang.Nullable @Nullable Long offset,
			@org.springframework.lang.Nullable @Nullable Integer limit) {
		return answer(() -> topic(topic, state, offset, limit));
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
		return refusingStaleCounts(() -> doTopic(topic, state, offset, limit));
	}

	private TopicDescriptor doTopic(String topic, @Nullable String state, @Nullable Long offset,
			@Nullable Integer limit) {
		requireTopic(topic);
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
		List<MessageEntry> entries = page.messages().stream().map(MessageEntry::of).toList();
		PageDescriptor pageDescriptor = new PageDescriptor(stateName(messageState), from, size, page.total(), entries);
		return TopicDescriptor.of(topic, this.store.partitions().count(topic), stats,
				listener(topic, this.runtime.getListenerStates()), pageDescriptor);
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
		return answer(() -> message(topic, id));
	}

	/**
	 * One message, as {@link #readMessage} answers it.
	 * @param topic the topic
	 * @param id the message id
	 * @return the message, or {@code null} if the topic has no message with that id
	 * @throws DataAccessException if Redis cannot be read within the store's timeout
	 */
	public @Nullable MessageDescriptor message(String topic, String id) {
		return refusingStaleCounts(() -> doMessage(topic, id));
	}

	private @Nullable MessageDescriptor doMessage(String topic, String id) {
		requireTopic(topic);
		MessageSnapshot snapshot = this.store.inspector(topic).inspect(id, MAX_PAYLOAD_BYTES + HEADERS_ALLOWANCE);
		if (snapshot == null) {
			return null;
		}
		if (snapshot.tooLongToRead()) {
			return MessageDescriptor.tooLong(topic, snapshot);
		}
		StoredMessage message;
		try {
			message = MessageFormat.decode(id, snapshot.storedPrefix());
		}
		catch (CorruptMessageException ex) {
			if (snapshot.complete()) {
				return MessageDescriptor.corrupt(topic, snapshot, ex.getMessage());
			}
			// Headers longer than the allowance: read the whole message once, at most
			// MessageSnapshot.MAX_READ_BYTES (a longer one is not read at all).
			MessageSnapshot whole = this.store.inspector(topic)
				.inspect(id, (int) Math.min(snapshot.storedLength(), MessageSnapshot.MAX_READ_BYTES));
			if (whole == null) {
				return null;
			}
			snapshot = whole;
			try {
				message = MessageFormat.decode(id, snapshot.storedPrefix());
			}
			catch (CorruptMessageException again) {
				return MessageDescriptor.corrupt(topic, snapshot, again.getMessage());
			}
		}
		long payloadSize = snapshot.storedLength() - (snapshot.storedPrefix().length - message.payload().length);
		return MessageDescriptor.of(topic, snapshot, message, payloadSize);
	}

	/**
	 * Acts on a topic: {@code pause} or {@code resume} its listener in this application;
	 * {@code replay-dead} (dead letters back to the schedule, due now, attempts reset) or
	 * {@code purge-dead} (dead letters deleted), oldest first, in batches of
	 * {@value #BATCH_SIZE}.
	 * @param topic the topic
	 * @param action the action
	 * @param limit for {@code replay-dead} and {@code purge-dead}: the most dead letters
	 * to act on, all that are dead when the call starts unless given
	 * @return what was done
	 */
	@WriteOperation
	public ActionResult topicAction(@Selector String topic, String action,
			@org.springframework.lang.Nullable @Nullable Long limit,
			@org.springframework.lang.Nullable @Nullable String schedule) {
		return refusingStaleCounts(() -> doTopicAction(topic, action, limit, schedule));
	}

	private ActionResult doTopicAction(String topic, String action, @Nullable Long limit, @Nullable String schedule) {
		requireTopic(topic);
		ActionResult result = switch (action.toLowerCase(Locale.ROOT)) {
			case "pause" -> pause(topic);
			case "resume" -> resume(topic);
			case "replay-dead" -> replayDead(topic, limit);
			case "purge-dead" -> purgeDead(topic, limit);
			case "pause-schedule", "resume-schedule", "trigger-schedule" ->
				scheduleAction(topic, action.toLowerCase(Locale.ROOT), schedule);
			default -> throw new InvalidEndpointRequestException("Unknown topic action '" + action
					+ "': use pause, resume, replay-dead, purge-dead, pause-schedule, resume-schedule or"
					+ " trigger-schedule", "Unknown action");
		};
		logger.info("delayqueue endpoint: " + result);
		return result;
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
		return refusingStaleCounts(() -> doMessageAction(topic, id, action, delay));
	}

	private ActionResult doMessageAction(String topic, String id, String action, @Nullable Duration delay) {
		requireTopic(topic);
		ActionResult result = switch (action.toLowerCase(Locale.ROOT)) {
			case "reschedule" -> reschedule(topic, id, delay);
			case "cancel" -> doCancel(topic, id);
			case "replay" -> replay(topic, id);
			case "purge" -> purge(topic, id);
			default -> throw new InvalidEndpointRequestException(
					"Unknown message action '" + action + "': use reschedule, cancel, replay or purge",
					"Unknown action");
		};
		logger.info("delayqueue endpoint: " + result);
		return result;
	}

	/**
	 * Cancels a pending (scheduled or ready) message.
	 * @param topic the topic
	 * @param id the message id
	 * @return what was done
	 */
	@DeleteOperation
	public ActionResult cancel(@Selector String topic, @Selector String id) {
		return refusingStaleCounts(() -> cancelLogged(topic, id));
	}

	private ActionResult cancelLogged(String topic, String id) {
		requireTopic(topic);
		ActionResult result = doCancel(topic, id);
		logger.info("delayqueue endpoint: " + result);
		return result;
	}

	private ActionResult scheduleAction(String topic, String action, @Nullable String name) {
		if (name == null || name.isBlank()) {
			throw new InvalidEndpointRequestException(action + " needs the schedule's name, as 'schedule'",
					"Missing schedule");
		}
		ScheduleInfo info = this.schedules.get(name)
			.filter((found) -> found.schedule().topic().equals(topic))
			.orElseThrow(() -> new InvalidEndpointRequestException(
					"Topic '" + topic + "' has no schedule named '" + name + "'", "Unknown schedule"));
		return switch (action) {
			case "pause-schedule" -> {
				boolean paused = this.schedules.pause(name);
				yield new ActionResult(topic, name, action, paused ? 1 : 0,
						paused ? "schedule paused" : "schedule was paused already");
			}
			case "resume-schedule" -> {
				boolean resumed = this.schedules.resume(name);
				yield new ActionResult(topic, name, action, resumed ? 1 : 0,
						resumed ? "schedule resumed" : "schedule was not paused");
			}
			default -> {
				SendResult sent = this.schedules.trigger(info.schedule().name());
				yield new ActionResult(topic, name, action, sent.duplicate() ? 0 : 1,
						sent.duplicate() ? "a message of that tick exists already" : "message " + sent.id() + " sent");
			}
		};
	}

	private ActionResult pause(String topic) {
		boolean paused = listenerCall(() -> this.runtime.pause(topic));
		return new ActionResult(topic, null, "pause", paused ? 1 : 0,
				paused ? "listener paused in this application" : "listener was paused already");
	}

	private ActionResult resume(String topic) {
		boolean resumed = listenerCall(() -> this.runtime.resume(topic));
		return new ActionResult(topic, null, "resume", resumed ? 1 : 0,
				resumed ? "listener resumed in this application" : "listener was not paused");
	}

	private static boolean listenerCall(BooleanCall call) {
		try {
			return call.run();
		}
		catch (IllegalArgumentException | IllegalStateException ex) {
			throw new InvalidEndpointRequestException(ex.getMessage(), "No listener");
		}
	}

	private ActionResult replayDead(String topic, @Nullable Long limit) {
		long budget = budget(topic, limit);
		long replayed = 0;
		long skipped = 0;
		while (replayed + skipped < budget) {
			int batch = (int) Math.min(BATCH_SIZE, budget - replayed - skipped);
			ReplayResult result = this.store.replayDead(topic, batch, skipped);
			replayed += result.replayed().size();
			skipped += result.skipped();
			if (result.replayed().size() + result.skipped() < batch) {
				break;
			}
		}
		String detail = replayed + " dead letters replayed, due now"
				+ ((skipped > 0) ? "; " + skipped + " left dead (id sent anew since, or unreadable)" : "");
		return new ActionResult(topic, null, "replay-dead", replayed, detail);
	}

	private ActionResult purgeDead(String topic, @Nullable Long limit) {
		long budget = budget(topic, limit);
		long purged = 0;
		while (purged < budget) {
			int batch = (int) Math.min(BATCH_SIZE, budget - purged);
			long deleted = this.store.purgeDead(topic, batch);
			purged += deleted;
			if (deleted < batch) {
				break;
			}
		}
		return new ActionResult(topic, null, "purge-dead", purged, purged + " dead letters deleted");
	}

	private long budget(String topic, @Nullable Long limit) {
		if (limit != null && limit < 0) {
			throw new InvalidEndpointRequestException("limit must be 0 or more", "Bad limit");
		}
		long dead = this.store.inspector(topic).stats().dead();
		return (limit != null) ? Math.min(limit, dead) : dead;
	}

	private ActionResult reschedule(String topic, String id, @Nullable Duration delay) {
		if (delay == null) {
			throw new InvalidEndpointRequestException("reschedule needs a delay, e.g. \"10m\" or \"PT10M\"",
					"Missing delay");
		}
		boolean rescheduled = templateCall(() -> this.template.reschedule(topic, id, delay));
		return new ActionResult(topic, id, "reschedule", rescheduled ? 1 : 0,
				rescheduled ? "due in " + delay : "not pending (unknown, in flight, dead or handled): unchanged");
	}

	private ActionResult doCancel(String topic, String id) {
		boolean cancelled = templateCall(() -> this.template.cancel(topic, id));
		return new ActionResult(topic, id, "cancel", cancelled ? 1 : 0,
				cancelled ? "cancelled" : "not pending (unknown, in flight, dead or handled): unchanged");
	}

	private ActionResult replay(String topic, String id) {
		ReplayResult result = this.store.replayDead(topic, List.of(id));
		boolean replayed = !result.replayed().isEmpty();
		return new ActionResult(topic, id, "replay", replayed ? 1 : 0,
				replayed ? "replayed, due now" : "not replayed: not dead, sent anew under the same id, or unreadable");
	}

	private ActionResult purge(String topic, String id) {
		boolean purged = this.store.purgeDead(topic, List.of(id)) > 0;
		return new ActionResult(topic, id, "purge", purged ? 1 : 0, purged ? "deleted" : "not dead: unchanged");
	}

	private static boolean templateCall(BooleanCall call) {
		try {
			return call.run();
		}
		catch (InvalidMessageException ex) {
			throw new InvalidEndpointRequestException(ex.getMessage(), "Invalid request");
		}
	}

	/**
	 * Runs an operation, answering 400 with the reason when this application spreads the
	 * topic over another number of partitions than Redis does.
	 */
	private static <T> T refusingStaleCounts(Supplier<T> operation) {
		try {
			return operation.get();
		}
		catch (PartitionCountException ex) {
			throw new InvalidEndpointRequestException(ex.getMessage(), "Partition count");
		}
	}

	private static void requireTopic(String topic) {
		try {
			Topics.requireValidOrDeadLetters(topic);
		}
		catch (InvalidMessageException ex) {
			throw new InvalidEndpointRequestException(ex.getMessage(), "Invalid topic");
		}
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

	private static String stateName(MessageState state) {
		return state.name().toLowerCase(Locale.ROOT).replace('_', '-');
	}

	private @Nullable ListenerDescriptor listener(String topic, Map<String, ListenerState> states) {
		DelayListenerEndpoint endpoint = this.runtime.getEndpoints().get(topic);
		if (endpoint == null) {
			return null;
		}
		ListenerState state = states.getOrDefault(topic, ListenerState.STOPPED);
		return new ListenerDescriptor(endpoint.describe(), state.name().toLowerCase(Locale.ROOT),
				endpoint.settings().concurrency(), endpoint.settings().maxAttempts(),
				endpoint.settings().visibilityTimeout().toString(), rateLimit(endpoint.settings().rateLimit()));
	}

	private static @Nullable String rateLimit(@Nullable RateLimit rateLimit) {
		return (rateLimit != null) ? rateLimit.limit() + " per " + Durations.format(rateLimit.period()) : null;
	}

	private static @Nullable String instant(long epochMillis) {
		return (epochMillis >= 0) ? Instant.ofEpochMilli(epochMillis).toString() : null;
	}

	@FunctionalInterface
	private interface BooleanCall {

		boolean run();

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
	 */
	public record QueueDescriptor(String prefix, @Nullable String time, Map<String, TopicDescriptor> topics,
			@Nullable Boolean truncated, @Nullable Map<String, String> errors,
			@Nullable List<ScheduleDescriptor> schedules) implements OperationResponseBody {
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

		static ScheduleDescriptor of(ScheduleInfo info) {
			Schedule schedule = info.schedule();
			ScheduleTrigger.Cron cron = (schedule.trigger() instanceof ScheduleTrigger.Cron c) ? c : null;
			return new ScheduleDescriptor(schedule.name(), schedule.topic(), (cron != null) ? cron.expression() : null,
					(schedule.trigger() instanceof ScheduleTrigger.FixedRate rate) ? rate.rate().toString() : null,
					(cron != null) ? cron.zone().getId() : ZoneOffset.UTC.getId(),
					schedule.misfire().name().toLowerCase(Locale.ROOT).replace('_', '-'),
					(info.nextFire() != null) ? info.nextFire().toString() : null, info.paused());
		}

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
	 */
	public record TopicDescriptor(@Nullable String topic, int partitions, long scheduled, long ready,
			@Nullable Map<Integer, Long> readyByPriority, long inFlight, long dead, @Nullable String nextDue,
			String oldestLateness, @Nullable ListenerDescriptor listener, @Nullable PageDescriptor page,
			long rememberedIds) implements OperationResponseBody {

		static TopicDescriptor of(@Nullable String topic, int partitions, TopicStats stats,
				@Nullable ListenerDescriptor listener, @Nullable PageDescriptor page) {
			return new TopicDescriptor(topic, partitions, stats.scheduled(), stats.ready(),
					stats.readyByPriority().isEmpty() ? null : stats.readyByPriority(), stats.inFlight(), stats.dead(),
					instant(stats.nextDueMillis()), stats.oldestLateness().toString(), listener, page,
					stats.rememberedIds());
		}

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
	 */
	public record ListenerDescriptor(String method, String state, int concurrency, int maxAttempts,
			String visibilityTimeout, @Nullable String rateLimit) {
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
	 */
	public record MessageEntry(String id, @Nullable String due, @Nullable Integer attempts, int priority,
			@Nullable String leaseDeadline, @Nullable String deadSince, @Nullable String lastError) {

		static MessageEntry of(MessageSummary summary) {
			return new MessageEntry(summary.id(), instant(summary.dueAtMillis()),
					(summary.attempts() >= 0) ? summary.attempts() : null, summary.priority(),
					(summary.state() == MessageState.IN_FLIGHT) ? instant(summary.score()) : null,
					(summary.state() == MessageState.DEAD) ? instant(summary.score()) : null, summary.lastError());
		}

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
			@Nullable Integer attempts, int priority, @Nullable String leaseDeadline, @Nullable String deadSince,
			@Nullable String lastError, @Nullable Map<String, String> headers, @Nullable String payload,
			@Nullable String payloadBase64, long payloadSize, boolean payloadTruncated, @Nullable String corrupt,
			@Nullable String tooLong) implements OperationResponseBody {

		static MessageDescriptor of(String topic, MessageSnapshot snapshot, StoredMessage message, long payloadSize) {
			byte[] payload = message.payload();
			byte[] shown = (payload.length > MAX_PAYLOAD_BYTES) ? Arrays.copyOf(payload, MAX_PAYLOAD_BYTES) : payload;
			boolean truncated = payloadSize > shown.length;
			String text = utf8(shown, truncated);
			return new MessageDescriptor(topic, snapshot.id(), stateName(snapshot.state()),
					instant(message.dueAtMillis()), message.attempts(), snapshot.priority(), leaseDeadline(snapshot),
					deadSince(snapshot),
					(snapshot.lastError() != null) ? snapshot.lastError()
							: message.headers().get(MessageFormat.ERROR_HEADER),
					MessageFormat.userHeaders(message.headers()), text,
					(text != null) ? null : Base64.getEncoder().encodeToString(shown), payloadSize, truncated, null,
					null);
		}

		static MessageDescriptor corrupt(String topic, MessageSnapshot snapshot, String problem) {
			byte[] stored = snapshot.storedPrefix();
			byte[] shown = (stored.length > MAX_PAYLOAD_BYTES) ? Arrays.copyOf(stored, MAX_PAYLOAD_BYTES) : stored;
			boolean truncated = snapshot.storedLength() > shown.length;
			String text = utf8(shown, truncated);
			return new MessageDescriptor(topic, snapshot.id(), stateName(snapshot.state()), null, null,
					snapshot.priority(), leaseDeadline(snapshot), deadSince(snapshot), snapshot.lastError(), null, text,
					(text != null) ? null : Base64.getEncoder().encodeToString(shown), snapshot.storedLength(),
					truncated, "stored message is corrupt: " + problem, null);
		}

		static MessageDescriptor tooLong(String topic, MessageSnapshot snapshot) {
			return new MessageDescriptor(topic, snapshot.id(), stateName(snapshot.state()), null, null,
					snapshot.priority(), leaseDeadline(snapshot), deadSince(snapshot), snapshot.lastError(), null, null,
					null, snapshot.storedLength(), true, null,
					"the stored message has " + snapshot.storedLength() + " bytes, more than the "
							+ MessageSnapshot.MAX_READ_BYTES + " an inspection reads: too large to show");
		}

		private static @Nullable String leaseDeadline(MessageSnapshot snapshot) {
			return (snapshot.state() == MessageState.IN_FLIGHT) ? instant(snapshot.score()) : null;
		}

		private static @Nullable String deadSince(MessageSnapshot snapshot) {
			return (snapshot.state() == MessageState.DEAD) ? instant(snapshot.score()) : null;
		}

		/**
		 * Decodes UTF-8, tolerating a character cut at the end of truncated bytes.
		 * @return the text, or {@code null} if the bytes are not UTF-8
		 */
		private static @Nullable String utf8(byte[] bytes, boolean truncated) {
			CharsetDecoder decoder = StandardCharsets.UTF_8.newDecoder()
				.onMalformedInput(CodingErrorAction.REPORT)
				.onUnmappableCharacter(CodingErrorAction.REPORT);
			CharBuffer out = CharBuffer.allocate(bytes.length);
			CoderResult result = decoder.decode(ByteBuffer.wrap(bytes), out, !truncated);
			if (result.isError() || (!truncated && decoder.flush(out).isError())) {
				return null;
			}
			return out.flip().toString();
		}

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

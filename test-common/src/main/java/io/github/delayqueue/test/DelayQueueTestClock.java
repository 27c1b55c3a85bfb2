package io.github.delayqueue.test;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.LongUnaryOperator;
import java.util.stream.Stream;

import io.github.delayqueue.runtime.DelayQueueRuntime;
import io.github.delayqueue.runtime.ListenerState;
import io.github.delayqueue.schedule.ScheduleDefinitions;
import io.github.delayqueue.schedule.SchedulePoller;
import io.github.delayqueue.store.ScheduleState;
import io.github.delayqueue.store.TopicStats;
import io.github.delayqueue.store.redis.RedisMessageStore;
import io.github.delayqueue.store.redis.TopicKeys;
import io.github.delayqueue.time.Durations;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.core.Cursor;
import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.ScanOptions;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.ZSetOperations.TypedTuple;

/**
 * The queue's clock in a test: {@link #advance(Duration)} makes it as if that much time
 * had passed for the queue. The store's scripts read the Redis clock plus an offset that
 * this clock moves forward, so due times, leases and retry backoff all see the time pass,
 * while the real brokers, scripts and listeners do the delivering. Time steps from one
 * due time (or lease deadline) to the next, and at each step the clock waits until the
 * listeners have handled everything then due, so messages are delivered in due order and
 * retries that fall inside the span are delivered too. The ticks of recurring schedules
 * are steps too: each is sent as the clock reaches it; so are the ends of group pauses
 * (an operator's pause, a strict-order wait, the pace of a per-group rate limit), so that
 * a paced group gets every message its pace allows within the span.
 * <p>
 * Only the topics with a running {@code @DelayListener} in this application are
 * delivered; messages of other topics stay where they are. Get it injected in a test
 * annotated with {@link EmbeddedDelayQueue @EmbeddedDelayQueue}.
 */
public final class DelayQueueTestClock {

	private static final long POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(1);

	private static final long SIGNAL_AGAIN_NANOS = TimeUnit.MILLISECONDS.toNanos(50);

	private static final Duration CLEAR_WAIT = Duration.ofSeconds(2);

	/** Most steps {@link #advance(Duration)} counts ahead, for its progress message. */
	private static final long MAX_COUNTED_STEPS = 1_000_000;

	/**
	 * Ends the keys of a topic's number of partitions and of each partition's count
	 * marker, which {@link #clear()} keeps: they are no message.
	 */
	private static final String PARTITION_COUNT_SUFFIX = "}:n";

	/**
	 * Ends the keys of each partition's recurring schedules, which {@link #clear()}
	 * keeps: the application declared them at its start.
	 */
	private static final String SCHEDULES_SUFFIX = "}:sc";

	/**
	 * Ends the keys that have a partition copy its dead letters for a listener of them,
	 * which {@link #clear()} keeps: the listener set them at its start.
	 */
	private static final String DEAD_LETTERS_WATCH_SUFFIX = "}:xw";

	private final RedisMessageStore store;

	private final StringRedisTemplate redis;

	private final ObjectProvider<DelayQueueRuntime> runtime;

	private final Duration timeout;

	private final String offsetKey;

	private final String scheduleRegistry;

	/** Kept by {@link #clear()}: deleting it would read as Redis losing its data. */
	private final String datasetMarker;

	private @Nullable ObjectProvider<SchedulePoller> schedules;

	/**
	 * The offset (µs) as this clock last read or wrote it: read once an
	 * {@link #advance(Duration)}, which alone moves it, so that its steps do not read it
	 * again.
	 */
	private volatile long offsetMicros;

	/**
	 * Creates a clock for a store on an offset clock ({@code ScriptClock.offsetBy}).
	 * @param store the store, whose scripts read {@link #offsetKey(String)} of its prefix
	 * @param connectionFactory the connection to the store's Redis
	 * @param runtime the listeners of the application, if any
	 * @param timeout the longest wait for the listeners
	 */
	public DelayQueueTestClock(RedisMessageStore store, RedisConnectionFactory connectionFactory,
			ObjectProvider<DelayQueueRuntime> runtime, Duration timeout) {
		String key = store.clock().offsetKey();
		if (!Objects.equals(key, offsetKey(store.prefix()))) {
			throw new IllegalArgumentException("The store's scripts must read the clock offset at "
					+ offsetKey(store.prefix()) + ", but read " + ((key != null) ? key : "the server's clock"));
		}
		this.store = store;
		this.redis = new StringRedisTemplate(connectionFactory);
		this.runtime = runtime;
		this.timeout = timeout;
		this.offsetKey = key;
		this.scheduleRegistry = TopicKeys.scheduleRegistry(store.prefix());
		this.datasetMarker = TopicKeys.datasetMarker(store.prefix());
	}

	/**
	 * Sends the ticks of recurring schedules as the clock passes them, through the
	 * application's schedule poller, as a due message is delivered.
	 * @param schedules the application's schedule poller, if any
	 */
	public void sendTicksWith(ObjectProvider<SchedulePoller> schedules) {
		this.schedules = schedules;
	}

	/**
	 * The key that holds the clock offset of the stores with the given key prefix.
	 * @param prefix the key prefix
	 * @return the key
	 */
	public static String offsetKey(String prefix) {
		return prefix + ":test-clock-offset";
	}

	/**
	 * Returns the queue's time: the Redis clock plus what the clock was advanced by.
	 * @return the current time of the queue
	 */
	public Instant now() {
		long micros = nowMicros();
		return Instant.ofEpochSecond(micros / 1_000_000, (micros % 1_000_000) * 1000);
	}

	/**
	 * Returns the store the clock drives, for {@link DelayQueueAssertions}.
	 * @return the store
	 */
	RedisMessageStore store() {
		return this.store;
	}

	/**
	 * Returns the longest wait of {@link #awaitIdle()} and of each step of
	 * {@link #advance(Duration)}.
	 * @return the timeout
	 */
	public Duration timeout() {
		return this.timeout;
	}

	/**
	 * Moves the queue's time forward: every message of a listened topic that comes due in
	 * the span is delivered by the application's listeners, in due order, and this
	 * returns once they (and the retries, redeliveries after expired leases and messages
	 * they send that come due within the span) have been handled and acknowledged.
	 * @param span how much time passes; zero only waits for what is due now
	 * @throws IllegalArgumentException if the span is negative
	 * @throws AssertionError if at one step the listeners have not handled what is due
	 * within the {@linkplain #timeout() timeout} (each step has the whole of it, however
	 * many steps the span takes), naming the step, the steps done of about how many, and
	 * what is still pending
	 */
	public void advance(Duration span) {
		if (span.isNegative()) {
			throw new IllegalArgumentException("The queue's time cannot go back, but the span is " + span);
		}
		long start = serverMicros() + readOffset();
		long target = start + TimeUnit.NANOSECONDS.toMicros(span.toNanos());
		Walk walk = new Walk(span, start / 1000, plannedSteps(start / 1000, target / 1000));
		// Schedules declared at startup are saved by now, from the time before the span.
		sendDueTicks();
		while (true) {
			List<String> topics = awaitSettled(stepDeadline(), walk);
			long nextEvent = nextEventMillis(topics);
			long nextTick = nextTickMillis();
			long next = earliest(nextEvent, nextTick);
			if (next < 0 || next * 1000 > target) {
				break;
			}
			walk.step(next, (next == nextTick) ? ticksAt(next) : "messages due, leases or group pauses ending then");
			moveTo(next * 1000);
			sendDueTicks();
			wakeBrokers(topics);
		}
		walk.step(target / 1000, "the end of the span");
		moveTo(target);
		sendDueTicks();
		wakeBrokers(listenedTopics());
		awaitSettled(stepDeadline(), walk);
	}

	/** The deadline of one step of an advance: each gets the whole timeout. */
	private long stepDeadline() {
		return System.nanoTime() + this.timeout.toNanos();
	}

	/**
	 * About how many steps an advance takes: the ticks of the running schedules in the
	 * span, and the due times of the messages of listened topics in it (retries and
	 * messages sent by listeners add to them).
	 */
	private long plannedSteps(long fromMillis, long toMillis) {
		long steps = 0;
		for (ScheduleState state : runningSchedules()) {
			try {
				LongUnaryOperator ticks = ScheduleDefinitions.schedule(state)::nextAfter;
				for (long tick = state.nextTickMillis(); tick <= toMillis
						&& steps < MAX_COUNTED_STEPS; tick = ticks.applyAsLong(tick)) {
					steps++;
				}
			}
			catch (RuntimeException ex) {
				// A definition this version cannot read: its ticks are not counted.
			}
		}
		for (String topic : listenedTopics()) {
			for (String partition : partitionsOf(topic)) {
				Long due = this.redis.opsForZSet().count(this.store.keys(partition).scheduled(), fromMillis, toMillis);
				steps += (due != null) ? due : 0;
			}
		}
		return steps + 1;
	}

	/** The schedules whose tick is at a time, for the description of a step. */
	private String ticksAt(long tickMillis) {
		List<String> ticks = new ArrayList<>();
		for (ScheduleState state : runningSchedules()) {
			if (state.nextTickMillis() == tickMillis) {
				ticks.add("schedule '" + state.name() + "' (topic '" + state.topic() + "')");
			}
		}
		return "the tick of " + (ticks.isEmpty() ? "a schedule" : String.join(", ", ticks));
	}

	/**
	 * Waits, without moving the clock, until the listeners have handled every message of
	 * a listened topic that is due now, and hold no message.
	 * @throws AssertionError if they have not within the {@linkplain #timeout() timeout},
	 * naming what is still pending
	 */
	public void awaitIdle() {
		advance(Duration.ZERO);
	}

	/**
	 * Deletes every message of every topic (scheduled, ready, in flight and dead) after
	 * waiting briefly for the listeners to finish what they hold; the clock keeps its
	 * time, and partitioned topics keep their number of partitions.
	 * {@link EmbeddedDelayQueue @EmbeddedDelayQueue} calls it before each test.
	 */
	public void clear() {
		try {
			awaitSettled(System.nanoTime() + CLEAR_WAIT.toNanos(), null);
		}
		catch (AssertionError ex) {
			// Cleared anyway: what a listener still holds loses its lease.
		}
		List<String> keys = new ArrayList<>();
		try (Cursor<String> found = this.redis
			.scan(ScanOptions.scanOptions().match(globEscape(this.store.prefix()) + ":*").count(1000).build())) {
			found.forEachRemaining((key) -> {
				if (!key.equals(this.offsetKey) && !key.endsWith(PARTITION_COUNT_SUFFIX)
						&& !key.endsWith(SCHEDULES_SUFFIX) && !key.endsWith(DEAD_LETTERS_WATCH_SUFFIX)
						&& !key.equals(this.scheduleRegistry) && !key.equals(this.datasetMarker)) {
					keys.add(key);
				}
			});
		}
		if (!keys.isEmpty()) {
			this.redis.delete(keys);
		}
	}

	/**
	 * Waits until every listened topic is settled: nothing ready, nothing scheduled or in
	 * flight past its time, and no listener holding a message.
	 * @return the listened topics
	 */
	private List<String> awaitSettled(long deadlineNanos, @Nullable Walk walk) {
		long lastSignal = System.nanoTime();
		while (true) {
			boolean idleBefore = isRuntimeIdle();
			List<String> topics = listenedTopics();
			Map<String, String> pending = new LinkedHashMap<>();
			// In a walk, the offset is the one the walk read and moved.
			long now = topics.isEmpty() ? 0
					: ((walk != null) ? serverMicros() + this.offsetMicros : nowMicros()) / 1000;
			for (String topic : topics) {
				String what = pendingOf(topic, now);
				if (what != null) {
					pending.put(topic, what);
				}
			}
			if (pending.isEmpty() && idleBefore && isRuntimeIdle()) {
				return topics;
			}
			if (System.nanoTime() - deadlineNanos > 0) {
				throw new AssertionError("The delay queue did not settle within " + Durations.format(this.timeout)
						+ " at " + now() + ((walk != null) ? ", " + walk : "") + ": " + describe(pending, idleBefore));
			}
			if (System.nanoTime() - lastSignal > SIGNAL_AGAIN_NANOS) {
				// A signal sent before the listeners subscribed is lost: send it again.
				wakeBrokers(pending.keySet());
				pending.keySet()
					.forEach((topic) -> partitionsOf(topic).forEach((partition) -> signal("r" + partition)));
				lastSignal = System.nanoTime();
			}
			LockSupport.parkNanos(POLL_NANOS);
		}
	}

	private @Nullable String pendingOf(String topic, long nowMillis) {
		TopicStats stats = this.store.inspector(topic).stats();
		List<String> found = new ArrayList<>();
		long ready = stats.ready() - readyInPausedGroups(topic, nowMillis);
		if (ready > 0) {
			found.add(ready + " ready");
		}
		if (stats.nextDueMillis() >= 0 && stats.nextDueMillis() <= nowMillis) {
			found.add("scheduled messages due since " + Instant.ofEpochMilli(stats.nextDueMillis()));
		}
		long leaseEnd = earliestScore(
				partitionsOf(topic).stream().map((partition) -> this.store.keys(partition).inFlight()));
		if (leaseEnd >= 0 && leaseEnd <= nowMillis) {
			found.add("in-flight messages whose lease ended at " + Instant.ofEpochMilli(leaseEnd));
		}
		return found.isEmpty() ? null : String.join(", ", found);
	}

	private static String describe(Map<String, String> pending, boolean idle) {
		List<String> parts = new ArrayList<>();
		pending.forEach((topic, what) -> parts.add("topic '" + topic + "' has " + what));
		if (!idle) {
			parts.add("listeners still hold messages (a handler is running or an acknowledgement is on its way)");
		}
		return String.join("; ", parts);
	}

	/** The earlier of two times, -1 for none. */
	private static long earliest(long first, long second) {
		return (first < 0) ? second : (second < 0) ? first : Math.min(first, second);
	}

	/**
	 * @return the next tick of the running schedules (epoch ms), or -1 for none
	 */
	private long nextTickMillis() {
		long next = -1;
		for (ScheduleState state : runningSchedules()) {
			if (state.nextTickMillis() != Long.MAX_VALUE) {
				next = earliest(next, state.nextTickMillis());
			}
		}
		return next;
	}

	/**
	 * @return the schedules the clock sends the ticks of: those not paused, when the
	 * application has a schedule poller
	 */
	private List<ScheduleState> runningSchedules() {
		SchedulePoller poller = (this.schedules != null) ? this.schedules.getIfAvailable() : null;
		if (poller == null) {
			return List.of();
		}
		List<ScheduleState> running = new ArrayList<>();
		for (String topic : this.store.schedules().registry().topics()) {
			for (ScheduleState state : this.store.schedules().readTopic(topic).schedules().values()) {
				if (!state.paused()) {
					running.add(state);
				}
			}
		}
		return running;
	}

	private void sendDueTicks() {
		SchedulePoller poller = (this.schedules != null) ? this.schedules.getIfAvailable() : null;
		if (poller != null) {
			poller.sendDueTicks();
		}
	}

	private long nextEventMillis(List<String> topics) {
		long due = earliestScore(topics.stream()
			.flatMap((topic) -> partitionsOf(topic).stream())
			.flatMap((partition) -> Stream.of(this.store.keys(partition).scheduled(),
					this.store.keys(partition).inFlight())));
		return earliest(due, nextPauseEndMillis(topics));
	}

	/**
	 * The first end of a group pause after now, in every partition of the topics: a step,
	 * where the claims put the group back; -1 when none has an end to come.
	 */
	private long nextPauseEndMillis(List<String> topics) {
		long nowMillis = nowMicros() / 1000;
		return topics.stream()
			.flatMap((topic) -> partitionsOf(topic).stream())
			.mapToLong((partition) -> firstScoreAfter(this.store.keys(partition).groupPauses(), nowMillis))
			.filter((end) -> end >= 0)
			.min()
			.orElse(-1);
	}

	/**
	 * @return the first finite score of the sorted set after a time, or -1 if none
	 */
	private long firstScoreAfter(String key, long afterMillis) {
		Set<TypedTuple<String>> first = this.redis.opsForZSet()
			.rangeByScoreWithScores(key, afterMillis + 1, Double.MAX_VALUE, 0, 1);
		if (first == null || first.isEmpty()) {
			return -1;
		}
		Double score = first.iterator().next().getScore();
		return (score != null) ? score.longValue() : -1;
	}

	/**
	 * The ready messages of the topic's groups that are paused at a time, in every
	 * partition (each group's in its own): held back, not waited for.
	 */
	private long readyInPausedGroups(String topic, long nowMillis) {
		return partitionsOf(topic).stream().mapToLong((partition) -> readyInPausedGroupsOf(partition, nowMillis)).sum();
	}

	private long readyInPausedGroupsOf(String partition, long nowMillis) {
		TopicKeys keys = this.store.keys(partition);
		Set<String> paused = this.redis.opsForZSet()
			.rangeByScore(keys.groupPauses(), nowMillis + 1, Double.POSITIVE_INFINITY);
		if (paused == null || paused.isEmpty()) {
			return 0;
		}
		List<Object> counts = this.redis.opsForHash().multiGet(keys.groupCounts(), new ArrayList<Object>(paused));
		return counts.stream()
			.filter((count) -> count != null && count.toString().matches("\\d{1,18}"))
			.mapToLong((count) -> Long.parseLong(count.toString()))
			.sum();
	}

	/**
	 * @return the earliest first score of the sorted sets, or -1 if all are empty
	 */
	private long earliestScore(Stream<String> keys) {
		return keys.mapToLong(this::firstScore).filter((score) -> score >= 0).min().orElse(-1);
	}

	private List<String> partitionsOf(String topic) {
		return this.store.partitions().names(topic);
	}

	private long firstScore(String key) {
		Set<TypedTuple<String>> first = this.redis.opsForZSet().rangeWithScores(key, 0, 0);
		if (first == null || first.isEmpty()) {
			return -1;
		}
		Double score = first.iterator().next().getScore();
		return (score != null) ? score.longValue() : -1;
	}

	private List<String> listenedTopics() {
		DelayQueueRuntime listeners = this.runtime.getIfAvailable();
		if (listeners == null) {
			return List.of();
		}
		List<String> topics = new ArrayList<>();
		listeners.getListenerStates().forEach((topic, state) -> {
			if (state == ListenerState.RUNNING) {
				topics.add(topic);
			}
		});
		return topics;
	}

	private boolean isRuntimeIdle() {
		DelayQueueRuntime listeners = this.runtime.getIfAvailable();
		return listeners == null || listeners.isIdle();
	}

	private void wakeBrokers(Iterable<String> topics) {
		topics.forEach((topic) -> partitionsOf(topic).forEach((partition) -> signal("b" + partition)));
	}

	private void signal(String body) {
		this.redis.convertAndSend(this.store.signalChannel(), body);
	}

	/** Moves the clock to the given time, never back. */
	private void moveTo(long targetMicros) {
		long offset = targetMicros - serverMicros();
		if (offset > this.offsetMicros) {
			this.redis.opsForValue().set(this.offsetKey, Long.toString(offset));
			this.offsetMicros = offset;
		}
	}

	private long nowMicros() {
		return serverMicros() + readOffset();
	}

	/** Reads the offset from Redis, where the store's scripts read it too. */
	private long readOffset() {
		String offset = this.redis.opsForValue().get(this.offsetKey);
		this.offsetMicros = (offset != null) ? Long.parseLong(offset) : 0;
		return this.offsetMicros;
	}

	private long serverMicros() {
		Long micros = this.redis
			.execute((RedisCallback<Long>) (connection) -> connection.serverCommands().time(TimeUnit.MICROSECONDS));
		return Objects.requireNonNull(micros, "Redis answered TIME with nothing");
	}

	/**
	 * How far an advance has come, for the message of one that does not settle.
	 */
	private static final class Walk {

		private final Duration span;

		private final long startMillis;

		private final long plannedSteps;

		private long steps;

		private long atMillis;

		private String reason = "what was due at its start";

		Walk(Duration span, long startMillis, long plannedSteps) {
			this.span = span;
			this.startMillis = startMillis;
			this.plannedSteps = plannedSteps;
			this.atMillis = startMillis;
		}

		void step(long atMillis, String reason) {
			this.steps++;
			this.atMillis = atMillis;
			this.reason = reason;
		}

		@Override
		public String toString() {
			String where = (this.steps == 0) ? "before the first step"
					: "in step " + this.steps + " of about " + Math.max(this.plannedSteps, this.steps) + ", "
							+ Durations.format(Duration.ofMillis(this.atMillis - this.startMillis))
							+ " into the span, for " + this.reason;
			return "in advance(" + Durations.format(this.span) + ") (each step has the whole timeout), " + where;
		}

	}

	private static String globEscape(String text) {
		return text.replaceAll("([*?\\[\\]\\\\])", "\\\\$1");
	}

}

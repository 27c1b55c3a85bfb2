package io.github.delayqueue.schedule;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BiFunction;

import io.github.delayqueue.producer.InvalidMessageException;
import io.github.delayqueue.store.MessageFormat;
import io.github.delayqueue.store.MessageStore;
import io.github.delayqueue.store.ScheduleState;
import io.github.delayqueue.store.ScheduleStore;
import io.github.delayqueue.store.ScheduleStore.Registry;
import io.github.delayqueue.store.ScheduleStore.SchedulesRead;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.context.SmartLifecycle;
import org.springframework.core.NestedExceptionUtils;
import org.springframework.dao.DataAccessException;
import org.springframework.scheduling.concurrent.CustomizableThreadFactory;

/**
 * Sends the ticks of the recurring schedules when due, in every instance: it reads the
 * schedules of every topic the registry names, and for each one whose next tick is due by
 * the Redis clock, works out what to send ({@link TickPlan}) and sends it with the
 * schedule's move to its next tick in one call, which only the first instance to make it
 * for that tick gets through. So each tick is sent once, whichever instances run, and
 * none is lost while one of them does.
 * <p>
 * What this application declares is kept: each declared schedule is saved at start, and
 * again whenever it is gone from Redis (Redis lost its data, or someone removed it), at
 * the next look. The registry is mended as it is read: a schedule found on a topic its
 * name is not registered to is registered, one found on two topics is kept on one, and
 * the registration of a schedule gone for longer than a save takes is forgotten. A topic
 * or schedule that cannot be read, saved or sent (a key of the wrong type, a Cluster node
 * out of reach, a number of partitions this instance does not share) is reported once and
 * left out; the others go on. It looks again at the next tick due, and at least every
 * {@value #POLL_MILLIS} ms ({@value #IDLE_POLL_MILLIS} ms while no schedule is registered
 * or declared), on a thread of its own.
 */
public class SchedulePoller implements SmartLifecycle {

	private static final Log logger = LogFactory.getLog(SchedulePoller.class);

	static final long POLL_MILLIS = 1000;

	static final long IDLE_POLL_MILLIS = 10_000;

	/** The shortest wait between two looks, so that a clock step cannot make it spin. */
	private static final long MIN_WAIT_MILLIS = 5;

	private final ScheduleStore store;

	private final MessageStore messages;

	private final Map<String, Schedule> declared = new LinkedHashMap<>();

	/** The declared schedules saved since this poller started. */
	private final Set<String> savedHere = new HashSet<>();

	/**
	 * The problems reported, by their kind and schedule or topic (e.g.
	 * {@code save:<name>}, {@code topic:<topic>}): each once, until it changes.
	 */
	private final Map<String, String> problems = new HashMap<>();

	/**
	 * Registered names whose schedule was not found, since when
	 * ({@link System#nanoTime()}).
	 */
	private final Map<String, Long> missingSince = new HashMap<>();

	/** Whether this poller looked through Redis for the topics that hold schedules. */
	private boolean scanned;

	/** The topics the registry named since this poller started, and has not forgotten. */
	private final Set<String> knownTopics = new LinkedHashSet<>();

	private BiFunction<String, byte[], @Nullable String> payloadProblem = (topic, payload) -> null;

	private @Nullable ScheduledExecutorService executor;

	private volatile boolean failing;

	/** The next look, while one is planned. Guarded by this. */
	private @Nullable ScheduledFuture<?> nextPoll;

	/** Set when this poller is woken up, cleared by the look that starts after. */
	private final AtomicBoolean woken = new AtomicBoolean();

	/**
	 * How far back a loss of Redis's data looks for the schedules saved through the API
	 * that it took: three of the data-loss watch's looks, as the loss is noticed up to
	 * one look after a look here found them gone.
	 */
	static final long LOSS_LOOKBACK_NANOS = TimeUnit.SECONDS.toNanos(15);

	/**
	 * The schedules this application does not declare (saved through the API) found by
	 * the last look, each with its topic. Guarded by {@link #polling}.
	 */
	private final Map<String, String> seenUndeclared = new HashMap<>();

	/**
	 * Those of them a later look no longer found (nor registered), with their topic and
	 * since when ({@link System#nanoTime()}), for {@link #LOSS_LOOKBACK_NANOS}. Guarded
	 * by {@link #polling}.
	 */
	private final Map<String, Map.Entry<String, Long>> goneUndeclared = new HashMap<>();

	/**
	 * Set when Redis was found to have lost its data, cleared by the look that says what.
	 */
	private final AtomicBoolean dataLost = new AtomicBoolean();

	/** Held by one look at the schedules at a time: the poller's, or a test clock's. */
	private final Object polling = new Object();

	/**
	 * Creates the poller.
	 * @param messages the store, for its schedules and partitions
	 * @param declared the schedules this application declares, saved at start
	 */
	public SchedulePoller(MessageStore messages, List<Schedule> declared) {
		this.messages = messages;
		this.store = messages.schedules();
		declared.forEach((schedule) -> this.declared.put(schedule.name(), schedule));
	}

	/**
	 * Sets what tells why a listener of this application could not read a payload: a
	 * declared schedule whose every tick it would dead-letter then fails the start.
	 * @param payloadProblem the problem for a topic and payload, or {@code null} when
	 * none is known
	 */
	public void checkPayloads(BiFunction<String, byte[], @Nullable String> payloadProblem) {
		this.payloadProblem = payloadProblem;
	}

	/**
	 * Starts looking at the schedules.
	 * @throws InvalidMessageException if this application's listener of a declared
	 * schedule's topic cannot read its payload
	 */
	@Override
	public synchronized void start() {
		if (this.executor != null) {
			return;
		}
		this.declared.values().forEach((schedule) -> DelayQueueSchedules.checkPayload(schedule, this.payloadProblem));
		CustomizableThreadFactory threads = new CustomizableThreadFactory("delay-queue-schedules-");
		threads.setDaemon(true);
		ScheduledThreadPoolExecutor executor = new ScheduledThreadPoolExecutor(1, threads);
		executor.setRemoveOnCancelPolicy(true);
		this.executor = executor;
		executor.execute(this::poll);
	}

	@Override
	public void stop() {
		ScheduledExecutorService executor;
		synchronized (this) {
			executor = this.executor;
			this.executor = null;
		}
		if (executor != null) {
			executor.shutdownNow();
			try {
				if (!executor.awaitTermination(this.messages.timeout().toMillis() + 1000, TimeUnit.MILLISECONDS)) {
					logger.warn("The schedule poller did not stop in time");
				}
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		}
	}

	@Override
	public synchronized boolean isRunning() {
		return this.executor != null;
	}

	/**
	 * One look at the schedules, then the next one scheduled: sooner when this poller was
	 * woken up meanwhile.
	 */
	void poll() {
		this.woken.set(false);
		long wait;
		try {
			wait = pollOnce();
			if (this.failing) {
				this.failing = false;
				logger.info("Schedules: Redis answers again");
			}
		}
		catch (RuntimeException ex) {
			if (!this.failing && isRunning()) {
				this.failing = true;
				logger.warn("Schedules: could not read them (" + ex.getMessage()
						+ "); trying again every second until Redis answers");
			}
			wait = POLL_MILLIS;
		}
		schedule(this.woken.get() ? MIN_WAIT_MILLIS : wait);
	}

	private synchronized void schedule(long waitMillis) {
		if (this.executor != null && !this.executor.isShutdown()) {
			try {
				this.nextPoll = this.executor.schedule(this::poll, Math.max(MIN_WAIT_MILLIS, waitMillis),
						TimeUnit.MILLISECONDS);
			}
			catch (RejectedExecutionException ex) {
				// Stopped meanwhile.
			}
		}
	}

	/**
	 * Looks at the schedules at once, as a schedule was saved or resumed here: its first
	 * tick may be sooner than the next look, which was planned without it (up to
	 * {@value #IDLE_POLL_MILLIS} ms away on an instance with no schedule).
	 */
	public void wakeUp() {
		this.woken.set(true);
		synchronized (this) {
			// A look under way sees the flag when it ends and looks again at once.
			if (this.nextPoll != null && this.nextPoll.cancel(false)) {
				schedule(0);
			}
		}
	}

	/**
	 * Tells this poller that Redis lost its data (or went back in time): its next look,
	 * at once, restores the declared schedules and names, in one ERROR, the schedules
	 * saved through the API that it saw in the seconds before and that are gone, as they
	 * are not restored.
	 */
	public void dataLost() {
		this.dataLost.set(true);
		wakeUp();
	}

	/**
	 * Sends every tick due by now, at once, on the caller's thread: for a test clock that
	 * moves the Redis time forward.
	 * @throws DataAccessException if Redis failed or did not answer in time
	 */
	public void sendDueTicks() {
		pollOnce();
	}

	/**
	 * Saves the declared schedules (again where they went missing), sends every due tick,
	 * and mends the registry where it no longer says where a schedule is. A topic or
	 * schedule that cannot be read, saved or sent is reported and left out; the others go
	 * on.
	 * @return how long until the next look (ms)
	 * @throws DataAccessException if Redis failed or did not answer in time
	 */
	long pollOnce() {
		synchronized (this.polling) {
			return pollUnderLock();
		}
	}

	private long pollUnderLock() {
		Registry registry = this.store.registry();
		if (!this.scanned || (registry.topics().isEmpty() && !this.knownTopics.isEmpty())) {
			// The first look, or the registry is gone (a Cluster node that lost its data,
			// an eviction, a key of the wrong type moved aside): the topics that hold
			// schedules are found in Redis itself.
			findTopics();
		}
		// The topics this poller saw named, too.
		this.knownTopics.addAll(registry.topics());
		long wait = (this.knownTopics.isEmpty() && this.declared.isEmpty()) ? IDLE_POLL_MILLIS : POLL_MILLIS;
		Map<String, List<ScheduleState>> found = new TreeMap<>();
		Set<String> unread = new HashSet<>();
		Set<String> unreadable = new HashSet<>();
		long now = 0;
		for (String topic : List.copyOf(this.knownTopics)) {
			if (Thread.currentThread().isInterrupted()) {
				// Stopping.
				return wait;
			}
			SchedulesRead read;
			try {
				read = this.store.readTopic(topic);
			}
			catch (RuntimeException ex) {
				if (Thread.currentThread().isInterrupted()) {
					// Stopping.
					return wait;
				}
				// One topic out of reach (its Cluster node, its number of partitions):
				// the others go on.
				unread.add(topic);
				report("topic:" + topic, "Schedules of topic '" + topic + "' could not be read (" + describe(ex)
						+ "); this instance sends no tick of them until they can");
				continue;
			}
			this.problems.remove("topic:" + topic);
			read.unreadable().forEach((name, problem) -> report("state:" + name, problem));
			// Said again should it become unreadable again.
			read.schedules().keySet().forEach((name) -> this.problems.remove("state:" + name));
			now = Math.max(now, read.nowMillis());
			unreadable.addAll(read.unreadable().keySet());
			read.schedules()
				.values()
				.forEach((state) -> found.computeIfAbsent(state.name(), (n) -> new ArrayList<>()).add(state));
			if (read.schedules().isEmpty() && read.unreadable().isEmpty() && !registry.names().containsValue(topic)) {
				forget(topic);
			}
		}
		if (saveDeclared(registry, found, unread)) {
			// Look again at once, to send the first ticks of what was saved.
			wait = MIN_WAIT_MILLIS;
		}
		for (Map.Entry<String, List<ScheduleState>> schedule : found.entrySet()) {
			ScheduleState state = mend(schedule.getKey(), schedule.getValue(), registry.names().get(schedule.getKey()));
			if (state == null || state.paused() || state.nextTickMillis() == Long.MAX_VALUE) {
				continue;
			}
			long next = state.nextTickMillis();
			if (next <= now) {
				try {
					next = send(state, now);
					// Said again should it fail again.
					this.problems.remove("send:" + state.name());
				}
				catch (RuntimeException ex) {
					// Redis answered, and refused it, or this schedule's partition is out
					// of reach: the others go on.
					report("send:" + state.name(),
							"Schedule '" + state.name() + "' of topic '" + state.topic() + "' could not be sent ("
									+ describe(ex) + "); this instance sends no tick of it until it can");
					next = now + POLL_MILLIS;
				}
			}
			wait = Math.min(wait, next - now);
		}
		forgetLost(registry, found, unread, unreadable);
		sayLostUndeclared(registry, found, unread);
		return wait;
	}

	/**
	 * Keeps the schedules saved through the API seen in this look, and the ones gone
	 * since; once Redis lost its data, names those gone shortly before, once.
	 */
	private void sayLostUndeclared(Registry registry, Map<String, List<ScheduleState>> found, Set<String> unread) {
		long now = System.nanoTime();
		this.seenUndeclared.entrySet().removeIf((seen) -> {
			String name = seen.getKey();
			if (found.containsKey(name) || registry.names().containsKey(name) || unread.contains(seen.getValue())) {
				return false;
			}
			this.goneUndeclared.put(name, Map.entry(seen.getValue(), now));
			return true;
		});
		found.forEach((name, states) -> {
			if (!this.declared.containsKey(name)) {
				this.seenUndeclared.put(name, states.get(0).topic());
				this.goneUndeclared.remove(name);
			}
		});
		this.goneUndeclared.values().removeIf((gone) -> now - gone.getValue() > LOSS_LOOKBACK_NANOS);
		if (this.dataLost.getAndSet(false) && !this.goneUndeclared.isEmpty()) {
			List<String> gone = new ArrayList<>();
			new TreeMap<>(this.goneUndeclared)
				.forEach((name, seen) -> gone.add("'" + name + "' (topic '" + seen.getKey() + "')"));
			this.goneUndeclared.clear();
			logger.error("Redis lost schedules saved through the API, which are not restored (only the ones an"
					+ " application declares are): " + String.join(", ", gone) + " were in Redis seconds before and"
					+ " are gone; save them again");
		}
	}

	private void findTopics() {
		// Tried once at start, then only when the registry is gone: a scan that does
		// not finish within the store's timeout (a huge keyspace) is not made every look.
		this.scanned = true;
		try {
			this.knownTopics.addAll(this.store.findTopics());
		}
		catch (RuntimeException ex) {
			logger.debug("Could not look through Redis for the topics that hold schedules", ex);
		}
	}

	/**
	 * Stops reading a topic found without schedules, once the registry forgets it too (no
	 * name registered to it, none claimed for it for longer than a save takes).
	 */
	private void forget(String topic) {
		try {
			if (this.store.forgetTopic(topic)) {
				this.knownTopics.remove(topic);
			}
		}
		catch (RuntimeException ex) {
			// Tried again at the next look.
		}
	}

	/**
	 * Saves the declared schedules: each once after start (a definition changed since is
	 * saved), then again whenever it is gone from Redis (Redis lost its data, or it was
	 * removed), within a look.
	 * @return whether one was saved
	 */
	private boolean saveDeclared(Registry registry, Map<String, List<ScheduleState>> found, Set<String> unread) {
		boolean saved = false;
		for (Schedule schedule : this.declared.values()) {
			String name = schedule.name();
			// Found on its topic, it is there even unregistered (a remove and a save
			// raced): mend() registers it, keeping the definition saved since.
			List<ScheduleState> states = found.getOrDefault(name, List.of());
			// A definition no version wrote (garbage) counts as gone: saved again, it
			// replaces it; one of a later version is kept.
			boolean garbage = states.stream()
				.anyMatch((state) -> state.topic().equals(schedule.topic()) && isGarbage(state));
			boolean there = !garbage && states.stream().anyMatch((state) -> state.topic().equals(schedule.topic()));
			// Found only on another topic, unregistered there: saved there through the
			// API
			// while a remove raced. mend() registers it there; saving it here too would
			// put it on two topics and undo that save at the next look.
			boolean unregisteredElsewhere = !there
					&& states.stream().anyMatch((state) -> !state.topic().equals(registry.names().get(name)));
			if ((there && this.savedHere.contains(name)) || unregisteredElsewhere
					|| unread.contains(schedule.topic())) {
				continue;
			}
			try {
				ScheduleInfo info = DelayQueueSchedules.save(this.store, schedule);
				saved = true;
				this.problems.remove("save:" + name);
				if (this.savedHere.add(name)) {
					logger.info("Schedule '" + name + "' on topic '" + schedule.topic() + "': next tick "
							+ info.nextFire() + (info.paused() ? " (paused)" : ""));
				}
				else if (garbage) {
					logger.warn("Schedule '" + name + "' on topic '" + schedule.topic() + "', declared by this"
							+ " application, had a definition in Redis that no version wrote: saved again, next tick "
							+ info.nextFire());
				}
				else {
					logger.warn("Schedule '" + name + "' on topic '" + schedule.topic() + "', declared by this"
							+ " application, was gone from Redis (removed, or Redis lost its data): saved again,"
							+ " next tick " + info.nextFire());
				}
			}
			catch (RuntimeException ex) {
				// Refused (another topic has the name), or out of reach: the others go
				// on, this one is tried again at the next look.
				report("save:" + name,
						"Schedule '" + name + "' on topic '" + schedule.topic()
								+ "', declared by this application, could not be saved (" + describe(ex)
								+ "); this instance tries again every second");
			}
		}
		return saved;
	}

	/**
	 * Whether a schedule's definition is one no version wrote: this one cannot read it
	 * and it does not say it is of a later version.
	 */
	private static boolean isGarbage(ScheduleState state) {
		try {
			ScheduleDefinitions.schedule(state);
			return false;
		}
		catch (InvalidMessageException ex) {
			return !state.ofLaterVersion();
		}
	}

	/**
	 * Makes the registry say where a schedule is: a schedule found on a topic its name is
	 * not registered to is registered (a remove and a save raced, or a registration was
	 * lost), and one found on several topics is kept on the one registered (else the
	 * first by name) and removed from the others (two saves raced).
	 * @return the schedule to tick, or {@code null} for none now
	 */
	private @Nullable ScheduleState mend(String name, List<ScheduleState> states, @Nullable String registered) {
		if (states.size() == 1 && states.get(0).topic().equals(registered)) {
			return states.get(0);
		}
		try {
			// Decided on a fresh view: what this look read may be stale (the schedule may
			// have been removed and saved on another topic meanwhile).
			String now = this.store.registry().names().get(name);
			Map<String, ScheduleState> fresh = new TreeMap<>();
			for (ScheduleState state : states) {
				freshState(state.topic(), name, fresh);
			}
			if (now != null) {
				freshState(now, name, fresh);
			}
			if (fresh.isEmpty()) {
				return null;
			}
			ScheduleState kept = (now != null && fresh.containsKey(now)) ? fresh.get(now)
					: fresh.values().iterator().next();
			for (ScheduleState other : fresh.values()) {
				if (other != kept && this.store.remove(other.topic(), name, other)) {
					logger
						.warn("Schedule '" + name + "' was saved on topics '" + kept.topic() + "' and '" + other.topic()
								+ "' at once: kept on '" + kept.topic() + "', removed from '" + other.topic() + "'");
				}
			}
			this.problems.remove("register:" + name);
			if (!kept.topic().equals(now)) {
				if (!kept.topic().equals(this.store.register(name, kept.topic(), now))) {
					return null;
				}
				logger.info("Schedule '" + name + "' on topic '" + kept.topic()
						+ "' was not registered (a remove and a save of it raced, or Redis lost the registry):"
						+ " registered again");
			}
			return kept;
		}
		catch (RuntimeException ex) {
			report("register:" + name,
					"Schedule '" + name + "' found on topics " + states.stream().map(ScheduleState::topic).toList()
							+ " could not be registered (" + describe(ex)
							+ "); this instance tries again every second");
			return null;
		}
	}

	private void freshState(String topic, String name, Map<String, ScheduleState> fresh) {
		ScheduleState state = this.store.read(topic, name).schedules().get(name);
		if (state != null) {
			fresh.put(topic, state);
		}
	}

	/**
	 * Forgets the registration of a name whose schedule stayed gone from its topic for
	 * longer than a save takes (so that no save of it is on its way): Redis lost it, or a
	 * remove did not finish.
	 */
	private void forgetLost(Registry registry, Map<String, List<ScheduleState>> found, Set<String> unread,
			Set<String> unreadable) {
		long now = System.nanoTime();
		long grace = this.store.saveTime().toNanos();
		this.missingSince.keySet().retainAll(registry.names().keySet());
		registry.names().forEach((name, topic) -> {
			if (found.containsKey(name) || unread.contains(topic) || unreadable.contains(name)
					|| this.declared.containsKey(name)) {
				this.missingSince.remove(name);
				return;
			}
			long since = this.missingSince.computeIfAbsent(name, (n) -> now);
			if (now - since > grace) {
				try {
					if (this.store.unregisterIfStale(name, topic)) {
						logger.warn("Schedule '" + name + "' was registered to topic '" + topic
								+ "' but is gone from it (Redis lost it, or a remove did not finish): forgotten");
					}
					this.missingSince.remove(name);
				}
				catch (RuntimeException ex) {
					// Tried again at the next look.
				}
			}
		});
	}

	/** What went wrong, for an operator: the most specific cause's message. */
	private static String describe(Throwable ex) {
		Throwable cause = NestedExceptionUtils.getMostSpecificCause(ex);
		return (cause.getMessage() != null) ? cause.getMessage() : cause.toString();
	}

	private void report(String key, String problem) {
		if (!problem.equals(this.problems.put(key, problem))) {
			logger.warn(problem);
		}
	}

	/**
	 * Sends a due schedule's ticks and moves it on, unless another instance did.
	 * @return its next tick (epoch ms), as far as this instance knows
	 */
	private long send(ScheduleState state, long now) {
		Schedule schedule;
		try {
			schedule = ScheduleDefinitions.schedule(state);
		}
		catch (InvalidMessageException ex) {
			report("definition:" + state.name(),
					"Schedule '" + state.name() + "' of topic '" + state.topic()
							+ "' has a definition this instance cannot read (saved by another version?): "
							+ ex.getMessage() + "; this instance sends no tick of it");
			return now + POLL_MILLIS;
		}
		this.problems.remove("definition:" + state.name());
		TickPlan plan = TickPlan.of(schedule, state.nextTickMillis(), now);
		byte[] body = MessageFormat.encodeBody(Map.of(), schedule.payload().getBytes(StandardCharsets.UTF_8));
		boolean advanced = this.store.advance(state, plan.next(), plan.ticks(), body);
		if (advanced && logger.isDebugEnabled()) {
			logger.debug("Schedule '" + schedule.name() + "' sent ticks " + plan.ticks() + " to topic '"
					+ schedule.topic() + "', next tick " + plan.next());
		}
		String misfire = advanced ? plan.misfireReport(schedule, now) : null;
		if (misfire != null) {
			logger.warn(misfire);
		}
		return advanced ? plan.next() : now + MIN_WAIT_MILLIS;
	}

}

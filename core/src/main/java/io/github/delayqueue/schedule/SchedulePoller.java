package io.github.delayqueue.schedule;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

import io.github.delayqueue.core.InvalidMessageException;
import io.github.delayqueue.store.MessageFormat;
import io.github.delayqueue.store.MessageStore;
import io.github.delayqueue.store.ScheduleState;
import io.github.delayqueue.store.ScheduleStore;
import io.github.delayqueue.store.ScheduleStore.SchedulesRead;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.context.SmartLifecycle;
import org.springframework.dao.DataAccessException;
import org.springframework.scheduling.concurrent.CustomizableThreadFactory;

/**
 * Sends the ticks of the recurring schedules when due, in every instance: it reads the
 * registered schedules, and for each one whose next tick is due by the Redis clock, works
 * out what to send ({@link TickPlan}) and sends it with the schedule's move to its next
 * tick in one call, which only the first instance to make it for that tick gets through.
 * So each tick is sent once, whichever instances run, and none is lost while one of them
 * does. It first saves the schedules this application declares, again until Redis takes
 * them. It looks again at the next tick due, and at least every {@value #POLL_MILLIS} ms
 * ({@value #IDLE_POLL_MILLIS} ms while no schedule is registered), on a thread of its
 * own.
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

	private final Map<String, String> unreadable = new HashMap<>();

	private @Nullable ScheduledExecutorService executor;

	private volatile boolean failing;

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

	@Override
	public synchronized void start() {
		if (this.executor != null) {
			return;
		}
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
	 * One look at the schedules, then the next one scheduled.
	 */
	void poll() {
		long wait;
		try {
			wait = pollOnce();
			if (this.failing) {
				this.failing = false;
				logger.info("Schedules: Redis answers again");
			}
		}
		catch (DataAccessException ex) {
			if (!this.failing && isRunning()) {
				this.failing = true;
				logger.warn("Schedules: could not read them (" + ex.getMessage()
						+ "); trying again every second until Redis answers");
			}
			wait = POLL_MILLIS;
		}
		schedule(wait);
	}

	private void schedule(long waitMillis) {
		ScheduledExecutorService executor;
		synchronized (this) {
			executor = this.executor;
		}
		if (executor != null && !executor.isShutdown()) {
			try {
				executor.schedule(this::poll, Math.max(MIN_WAIT_MILLIS, waitMillis), TimeUnit.MILLISECONDS);
			}
			catch (RejectedExecutionException ex) {
				// Stopped meanwhile.
			}
		}
	}

	/**
	 * Looks at the schedules at once, as a schedule was saved or resumed here: its first
	 * tick may be sooner than the next look.
	 */
	public void wakeUp() {
		ScheduledExecutorService executor;
		synchronized (this) {
			executor = this.executor;
		}
		if (executor != null && !executor.isShutdown()) {
			try {
				executor.execute(this::pollOnceQuietly);
			}
			catch (RejectedExecutionException ex) {
				// Stopped meanwhile.
			}
		}
	}

	private void pollOnceQuietly() {
		try {
			pollOnce();
		}
		catch (DataAccessException ex) {
			// The regular looks report it.
		}
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
	 * Saves the declared schedules not saved yet, sends every due tick. A schedule that
	 * cannot be saved, read or sent is reported and left out; the others go on.
	 * @return how long until the next look (ms)
	 * @throws DataAccessException if Redis failed or did not answer in time
	 */
	long pollOnce() {
		synchronized (this.polling) {
			return pollUnderLock();
		}
	}

	private long pollUnderLock() {
		saveDeclared();
		Map<String, String> registered = this.store.registered();
		if (registered.isEmpty()) {
			return IDLE_POLL_MILLIS;
		}
		long wait = POLL_MILLIS;
		Map<String, Boolean> partitionsRead = new HashMap<>();
		for (Map.Entry<String, String> schedule : registered.entrySet()) {
			String topic = schedule.getValue();
			String partition = this.messages.partitions().nameFor(topic, schedule.getKey());
			if (partitionsRead.put(partition, Boolean.TRUE) != null) {
				continue;
			}
			SchedulesRead read = this.store.read(topic, schedule.getKey());
			read.unreadable().forEach(this::reportUnreadable);
			for (ScheduleState state : read.schedules().values()) {
				if (state.paused() || state.nextTickMillis() == Long.MAX_VALUE) {
					continue;
				}
				long next = state.nextTickMillis();
				if (next <= read.nowMillis()) {
					try {
						next = send(state, read.nowMillis());
					}
					catch (IllegalArgumentException | IllegalStateException ex) {
						// Redis answered, and refused it: the others go on.
						reportUnreadable(state.name(), "could not be sent: " + ex.getMessage());
						next = read.nowMillis() + POLL_MILLIS;
					}
				}
				wait = Math.min(wait, next - read.nowMillis());
			}
		}
		return wait;
	}

	private void saveDeclared() {
		for (Schedule schedule : List.copyOf(this.declared.values())) {
			try {
				ScheduleInfo saved = DelayQueueSchedules.save(this.store, schedule);
				this.declared.remove(schedule.name());
				logger.info("Schedule '" + schedule.name() + "' on topic '" + schedule.topic() + "': next tick "
						+ saved.nextFire() + (saved.paused() ? " (paused)" : ""));
			}
			catch (IllegalArgumentException | IllegalStateException ex) {
				// Redis answered, and refused it: the others go on, this one is tried
				// again.
				reportUnreadable(schedule.name(), "could not be saved: " + ex.getMessage());
			}
		}
	}

	private void reportUnreadable(String name, String problem) {
		if (!problem.equals(this.unreadable.put(name, problem))) {
			logger.warn("Schedule '" + name + "' " + problem + "; this instance sends no tick of it");
		}
	}

	/**
	 * Sends a due schedule's ticks and moves it on, unless another instance did.
	 * @return its next tick (epoch ms), as far as this instance knows
	 */
	private long send(ScheduleState state, long now) {
		Schedule schedule;
		try {
			schedule = Schedule.parse(state.name(), state.definition());
		}
		catch (InvalidMessageException ex) {
			reportUnreadable(state.name(),
					"has a definition this instance cannot read (saved by another version?): " + ex.getMessage());
			return now + POLL_MILLIS;
		}
		TickPlan plan = TickPlan.of(schedule, state.nextTickMillis(), now);
		byte[] body = MessageFormat.encodeBody(Map.of(), schedule.payload().getBytes(StandardCharsets.UTF_8));
		boolean advanced = this.store.advance(state, plan.next(), plan.ticks(), body);
		if (advanced && logger.isDebugEnabled()) {
			logger.debug("Schedule '" + schedule.name() + "' sent ticks " + plan.ticks() + " to topic '"
					+ schedule.topic() + "', next tick " + plan.next());
		}
		if (advanced && plan.missed() > 0) {
			logger.warn("Schedule '" + schedule.name() + "' of topic '" + schedule.topic() + "' missed "
					+ ((plan.missed() > Schedule.MAX_MISSED_TICKS) ? "more than " + Schedule.MAX_MISSED_TICKS
							: plan.missed())
					+ " ticks from " + Instant.ofEpochMilli(state.nextTickMillis()) + "; by its misfire policy "
					+ schedule.misfire() + " it sent " + plan.ticks().size() + " messages");
		}
		return advanced ? plan.next() : now + MIN_WAIT_MILLIS;
	}

}

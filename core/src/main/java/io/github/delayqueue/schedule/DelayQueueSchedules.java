package io.github.delayqueue.schedule;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.BiFunction;

import io.github.delayqueue.producer.DelayMessage;
import io.github.delayqueue.producer.DelayQueueTemplate;
import io.github.delayqueue.producer.InvalidMessageException;
import io.github.delayqueue.producer.SendResult;
import io.github.delayqueue.store.ScheduleState;
import io.github.delayqueue.store.ScheduleStore;
import io.github.delayqueue.store.ScheduleStore.SchedulesRead;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.dao.DataAccessException;

/**
 * Creates, changes and lists recurring schedules, kept in Redis: each is one call, and
 * saving the same definition again changes nothing, so several instances may declare the
 * same schedules at startup and converge on one. The ticks are sent by the
 * {@link SchedulePoller} of every instance, each tick once. Times come from the Redis
 * clock. Every method may throw a {@link DataAccessException} when Redis failed or did
 * not answer in time.
 */
public class DelayQueueSchedules {

	/** How often a save is tried while other instances change the schedule under it. */
	private static final int MAX_SAVE_ATTEMPTS = 10;

	/**
	 * The numbers that end a triggered message's id: five digits at most, so that the id
	 * of a schedule's longest name stays within a message id's length.
	 */
	static final int TRIGGER_NUMBERS = 100_000;

	/**
	 * How long a triggered message's id is remembered once handled: longer than a client
	 * takes to send a command again after a lost reply.
	 */
	public static final Duration TRIGGER_DEDUPLICATION = Duration.ofMinutes(1);

	private static final Log logger = LogFactory.getLog(DelayQueueSchedules.class);

	private final ScheduleStore store;

	private final DelayQueueTemplate template;

	private Runnable changed = () -> {
	};

	private BiFunction<String, byte[], @Nullable String> payloadProblem = (topic, payload) -> null;

	/**
	 * Creates the schedules' API.
	 * @param store where schedules are kept
	 * @param template the template that sends a tick asked for now
	 */
	public DelayQueueSchedules(ScheduleStore store, DelayQueueTemplate template) {
		this.store = store;
		this.template = template;
	}

	/**
	 * Sets what to do once a schedule was saved or resumed here, such as waking this
	 * application's {@link SchedulePoller} ({@link SchedulePoller#wakeUp()}), so that a
	 * first tick sooner than its next look is not late.
	 * @param changed what to run
	 */
	public void onChange(Runnable changed) {
		this.changed = changed;
	}

	/**
	 * Creates a schedule, or gives it a new definition (paused as it was): its next tick
	 * is then the first after now by the new definition. Saving the definition it has
	 * changes nothing. A schedule keeps its topic: remove it to move it to another.
	 * @param schedule the schedule
	 * @return the schedule as Redis keeps it
	 * @throws IllegalArgumentException if a schedule of that name sends to another topic,
	 * its payload is larger than a send accepts, or this application's listener of its
	 * topic cannot read its payload
	 */
	public ScheduleInfo save(Schedule schedule) {
		int size = schedule.payload().getBytes(StandardCharsets.UTF_8).length;
		if (size > this.template.maxPayloadBytes()) {
			throw new InvalidMessageException("Schedule '" + schedule.name() + "' has a payload of " + size
					+ " bytes, but sends accept at most " + this.template.maxPayloadBytes());
		}
		checkPayload(schedule, this.payloadProblem);
		ScheduleInfo saved = save(this.store, schedule);
		this.changed.run();
		return saved;
	}

	/**
	 * Saves a schedule: registers its name to its topic first (taking it from another
	 * topic only where its schedule is gone), then saves it in its partition; if another
	 * instance took the name meanwhile, takes back what it saved and refuses.
	 */
	/**
	 * Sets what tells why a listener of this application could not read a payload, so
	 * that a schedule whose every tick it would dead-letter is refused when saved.
	 * @param payloadProblem the problem for a topic and payload, or {@code null} when
	 * none is known
	 */
	public void checkPayloads(BiFunction<String, byte[], @Nullable String> payloadProblem) {
		this.payloadProblem = payloadProblem;
	}

	/**
	 * Refuses a schedule whose payload a listener of this application could not read.
	 * @throws InvalidMessageException naming the listener and the problem
	 */
	static void checkPayload(Schedule schedule, BiFunction<String, byte[], @Nullable String> payloadProblem) {
		String problem = payloadProblem.apply(schedule.topic(), schedule.payload().getBytes(StandardCharsets.UTF_8));
		if (problem != null) {
			throw new InvalidMessageException("Schedule '" + schedule.name() + "' has a payload that would be"
					+ " dead-lettered at every tick: " + problem);
		}
	}

	static ScheduleInfo save(ScheduleStore store, Schedule schedule) {
		String name = schedule.name();
		String registered = store.registry().names().get(name);
		String takingFrom = null;
		if (registered != null && !registered.equals(schedule.topic())) {
			if (store.read(registered, name).schedules().containsKey(name)) {
				throw sendsElsewhere(name, registered, schedule.topic());
			}
			takingFrom = registered;
		}
		try {
			registered = store.register(name, schedule.topic(), takingFrom);
		}
		catch (RuntimeException ex) {
			if (!schedule.topic().equals(registered)) {
				// The claim may have run, its reply lost: do not leave the name kept for
				// a topic where nothing was saved (released only if it names it).
				releaseQuietly(store, name, schedule.topic());
			}
			throw ex;
		}
		if (!registered.equals(schedule.topic())) {
			if (registered.equals(takingFrom)) {
				throw new IllegalArgumentException("Schedule '" + name + "' is registered to topic '" + registered
						+ "', where it is not saved but a save of it may still be on its way: try again in "
						+ store.saveTime().toSeconds() + " s, or remove it");
			}
			throw sendsElsewhere(name, registered, schedule.topic());
		}
		for (int attempt = 1; attempt <= MAX_SAVE_ATTEMPTS; attempt++) {
			// The next tick comes from the time read with the state: after every tick
			// sent.
			SchedulesRead read = store.read(schedule.topic(), name);
			ScheduleState current = read.schedules().get(name);
			// And after every tick the definition it replaces sent, should the Redis
			// clock have stepped back since: no tick id is sent twice.
			long from = (current != null) ? Math.max(read.nowMillis(), lastTickSent(current)) : read.nowMillis();
			ScheduleState state = store.save(schedule.topic(), name, ScheduleDefinitions.of(schedule),
					schedule.nextAfter(from), current);
			if (state != null) {
				String now = store.registry().names().get(name);
				if (now != null && !now.equals(schedule.topic())) {
					// Another instance found it gone here and took the name meanwhile.
					store.remove(schedule.topic(), name, state);
					throw sendsElsewhere(name, now, schedule.topic());
				}
				return info(state);
			}
		}
		throw new IllegalStateException("Schedule '" + name + "' changed under each of " + MAX_SAVE_ATTEMPTS
				+ " attempts to save it: other instances keep changing it");
	}

	/**
	 * The latest tick a schedule's state may have sent: the tick of its definition before
	 * its next one ({@link Long#MIN_VALUE} when its definition cannot be read).
	 */
	private static long lastTickSent(ScheduleState state) {
		if (state.nextTickMillis() == Long.MAX_VALUE) {
			return Long.MIN_VALUE;
		}
		try {
			return TickPlan.lastTickBefore(ScheduleDefinitions.schedule(state), state.nextTickMillis());
		}
		catch (InvalidMessageException ex) {
			return Long.MIN_VALUE;
		}
	}

	private static void releaseQuietly(ScheduleStore store, String name, String topic) {
		try {
			store.unregister(name, topic);
		}
		catch (RuntimeException ex) {
			// The pollers forget a registration whose schedule stays gone.
		}
	}

	private static IllegalArgumentException sendsElsewhere(String name, String registered, String topic) {
		return new IllegalArgumentException("Schedule '" + name + "' sends to topic '" + registered + "', not '" + topic
				+ "': remove it first to move it to another topic");
	}

	/**
	 * @param name a schedule's name
	 * @return the schedule, if Redis has it
	 */
	public Optional<ScheduleInfo> get(String name) {
		return find(name).map(DelayQueueSchedules::info);
	}

	/**
	 * Every registered schedule, by name. A topic that cannot be read (a Cluster node out
	 * of reach, a number of partitions this application does not share) and a schedule
	 * whose definition cannot be read are left out, with a WARN; the others are listed.
	 * @return the schedules
	 */
	public List<ScheduleInfo> list() {
		List<ScheduleInfo> schedules = new ArrayList<>();
		Map<String, String> names = this.store.registry().names();
		for (String topic : new LinkedHashSet<>(names.values())) {
			SchedulesRead read;
			try {
				read = this.store.readTopic(topic);
			}
			catch (RuntimeException ex) {
				logger.warn("Schedules of topic '" + topic + "' left out of the list: " + ex.getMessage());
				continue;
			}
			read.schedules().forEach((name, state) -> {
				if (topic.equals(names.get(name))) {
					try {
						schedules.add(info(state));
					}
					catch (IllegalStateException ex) {
						logger.warn("Schedule '" + name + "' of topic '" + topic + "' left out of the list: "
								+ ex.getMessage());
					}
				}
			});
		}
		schedules.sort(Comparator.comparing((info) -> info.schedule().name()));
		return schedules;
	}

	/**
	 * Pauses a schedule: no tick is sent until it is resumed.
	 * @param name the schedule's name
	 * @return whether it was running
	 * @throws IllegalArgumentException if there is no such schedule
	 */
	public boolean pause(String name) {
		ScheduleState before = state(name);
		ScheduleState after = this.store.pause(before.topic(), name, true, 0);
		return after != null && !before.paused();
	}

	/**
	 * Resumes a paused schedule: its next tick is the first after now; ticks missed while
	 * it was paused are not sent.
	 * @param name the schedule's name
	 * @return whether it was paused
	 * @throws IllegalArgumentException if there is no such schedule
	 */
	public boolean resume(String name) {
		ScheduleState before = state(name);
		for (int attempt = 1; attempt <= MAX_SAVE_ATTEMPTS; attempt++) {
			// The next tick comes from the definition read with the time, and the resume
			// is refused if another instance saved another definition meanwhile.
			SchedulesRead read = this.store.read(before.topic(), name);
			ScheduleState current = read.schedules().get(name);
			if (current == null) {
				throw new IllegalArgumentException("No schedule named '" + name + "'");
			}
			Schedule schedule = ScheduleDefinitions.schedule(current);
			ScheduleState after = this.store.pause(current.topic(), name, false, schedule.nextAfter(read.nowMillis()),
					current.definition());
			if (after == null || !after.paused() || Objects.equals(after.definition(), current.definition())) {
				this.changed.run();
				return after != null && current.paused();
			}
		}
		throw new IllegalStateException("Schedule '" + name + "' changed under each of " + MAX_SAVE_ATTEMPTS
				+ " attempts to resume it: other instances keep changing it");
	}

	/**
	 * Removes a schedule; messages of ticks already sent stay. A schedule this
	 * application declares in its properties comes back: pause it instead, or remove it
	 * from the properties.
	 * @param name the schedule's name
	 * @return whether it existed
	 */
	public boolean remove(String name) {
		String topic = this.store.registry().names().get(name);
		if (topic == null) {
			return false;
		}
		boolean removed = this.store.remove(topic, name, null);
		// Only while it is still registered there: a save racing this one may have
		// registered it again, and then keeps it (the pollers register what they find).
		this.store.unregister(name, topic);
		return removed;
	}

	/**
	 * Sends one message of a schedule now, apart from its ticks: id
	 * {@code <name>~<now epoch ms>~<n>}, {@code n} a random number below
	 * {@value #TRIGGER_NUMBERS} (never a tick's id; two triggers in one millisecond, here
	 * or in another instance, get ids of their own: a send of an id stored with the same
	 * body counts as the same message sent again), due at once. Its id is remembered for
	 * {@link #TRIGGER_DEDUPLICATION} once handled, so that the send, sent again by the
	 * client after a lost reply, stores nothing when the message was handled meanwhile.
	 * @param name the schedule's name
	 * @return the send's result
	 * @throws IllegalArgumentException if there is no such schedule
	 */
	public SendResult trigger(String name) {
		ScheduleState state = state(name);
		Schedule schedule = ScheduleDefinitions.schedule(state);
		long now = this.store.read(state.topic(), name).nowMillis();
		return this.template.send(DelayMessage.builder(schedule.topic(), schedule.payload())
			.id(schedule.tickId(now) + '~' + ThreadLocalRandom.current().nextInt(TRIGGER_NUMBERS))
			.delay(Duration.ZERO)
			.deduplicateFor(TRIGGER_DEDUPLICATION)
			.build());
	}

	private ScheduleState state(String name) {
		return find(name).orElseThrow(() -> new IllegalArgumentException("No schedule named '" + name + "'"));
	}

	/** A registered schedule's state, as Redis keeps it. */
	private Optional<ScheduleState> find(String name) {
		String topic = this.store.registry().names().get(name);
		return (topic != null) ? Optional.ofNullable(this.store.read(topic, name).schedules().get(name))
				: Optional.empty();
	}

	static ScheduleInfo info(ScheduleState state) {
		Schedule schedule;
		try {
			schedule = ScheduleDefinitions.schedule(state);
		}
		catch (InvalidMessageException ex) {
			throw new IllegalStateException(ex.getMessage(), ex);
		}
		Instant next = (state.nextTickMillis() == Long.MAX_VALUE) ? null : Instant.ofEpochMilli(state.nextTickMillis());
		return new ScheduleInfo(schedule, next, state.paused());
	}

}

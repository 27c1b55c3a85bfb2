package io.github.delayqueue.schedule;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import io.github.delayqueue.core.DelayMessage;
import io.github.delayqueue.core.DelayQueueTemplate;
import io.github.delayqueue.core.InvalidMessageException;
import io.github.delayqueue.core.SendResult;
import io.github.delayqueue.store.ScheduleState;
import io.github.delayqueue.store.ScheduleStore;
import io.github.delayqueue.store.ScheduleStore.SchedulesRead;

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

	private final ScheduleStore store;

	private final DelayQueueTemplate template;

	private Runnable changed = () -> {
	};

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
	 * or its payload is larger than a send accepts
	 */
	public ScheduleInfo save(Schedule schedule) {
		int size = schedule.payload().getBytes(StandardCharsets.UTF_8).length;
		if (size > this.template.maxPayloadBytes()) {
			throw new InvalidMessageException("Schedule '" + schedule.name() + "' has a payload of " + size
					+ " bytes, but sends accept at most " + this.template.maxPayloadBytes());
		}
		ScheduleInfo saved = save(this.store, schedule);
		this.changed.run();
		return saved;
	}

	static ScheduleInfo save(ScheduleStore store, Schedule schedule) {
		String registeredTopic = store.registered().get(schedule.name());
		if (registeredTopic != null && !registeredTopic.equals(schedule.topic())
				&& store.read(registeredTopic, schedule.name()).schedules().containsKey(schedule.name())) {
			throw new IllegalArgumentException("Schedule '" + schedule.name() + "' sends to topic '" + registeredTopic
					+ "', not '" + schedule.topic() + "': remove it first to move it to another topic");
		}
		for (int attempt = 1; attempt <= MAX_SAVE_ATTEMPTS; attempt++) {
			// The next tick comes from the time read with the state: after every tick
			// sent.
			SchedulesRead read = store.read(schedule.topic(), schedule.name());
			ScheduleState state = store.save(schedule.topic(), schedule.name(), schedule.definition(),
					schedule.nextAfter(read.nowMillis()), read.schedules().get(schedule.name()));
			if (state != null) {
				return info(state);
			}
		}
		throw new IllegalStateException("Schedule '" + schedule.name() + "' changed under each of " + MAX_SAVE_ATTEMPTS
				+ " attempts to save it: other instances keep changing it");
	}

	/**
	 * @param name a schedule's name
	 * @return the schedule, if Redis has it
	 */
	public Optional<ScheduleInfo> get(String name) {
		return find(name).map(DelayQueueSchedules::info);
	}

	/**
	 * @return every registered schedule, by name
	 */
	public List<ScheduleInfo> list() {
		List<ScheduleInfo> schedules = new ArrayList<>();
		for (Map.Entry<String, String> registered : this.store.registered().entrySet()) {
			ScheduleState state = this.store.read(registered.getValue(), registered.getKey())
				.schedules()
				.get(registered.getKey());
			if (state != null) {
				schedules.add(info(state));
			}
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
		Schedule schedule = Schedule.parse(name, before.definition());
		SchedulesRead read = this.store.read(before.topic(), name);
		ScheduleState after = this.store.pause(before.topic(), name, false, schedule.nextAfter(read.nowMillis()));
		this.changed.run();
		return after != null && before.paused();
	}

	/**
	 * Removes a schedule; messages of ticks already sent stay.
	 * @param name the schedule's name
	 * @return whether it existed
	 */
	public boolean remove(String name) {
		String topic = this.store.registered().get(name);
		return topic != null && this.store.remove(topic, name);
	}

	/**
	 * Sends one message of a schedule now, apart from its ticks: id
	 * {@code <name>~<now epoch ms>~} (never a tick's), due at once.
	 * @param name the schedule's name
	 * @return the send's result
	 * @throws IllegalArgumentException if there is no such schedule
	 */
	public SendResult trigger(String name) {
		ScheduleState state = state(name);
		Schedule schedule = Schedule.parse(name, state.definition());
		long now = this.store.read(state.topic(), name).nowMillis();
		return this.template.send(DelayMessage.builder(schedule.topic(), schedule.payload())
			.id(schedule.tickId(now) + '~')
			.delay(Duration.ZERO)
			.build());
	}

	private ScheduleState state(String name) {
		return find(name).orElseThrow(() -> new IllegalArgumentException("No schedule named '" + name + "'"));
	}

	/** A registered schedule's state, as Redis keeps it. */
	private Optional<ScheduleState> find(String name) {
		String topic = this.store.registered().get(name);
		return (topic != null) ? Optional.ofNullable(this.store.read(topic, name).schedules().get(name))
				: Optional.empty();
	}

	static ScheduleInfo info(ScheduleState state) {
		Schedule schedule;
		try {
			schedule = Schedule.parse(state.name(), state.definition());
		}
		catch (InvalidMessageException ex) {
			throw new IllegalStateException(ex.getMessage(), ex);
		}
		Instant next = (state.nextTickMillis() == Long.MAX_VALUE) ? null : Instant.ofEpochMilli(state.nextTickMillis());
		return new ScheduleInfo(schedule, next, state.paused());
	}

}

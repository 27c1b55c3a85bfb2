package io.github.delayqueue.store.redis;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.github.delayqueue.store.CorruptMessageException;
import io.github.delayqueue.store.ScheduleState;
import io.github.delayqueue.store.ScheduleStore;
import org.jspecify.annotations.Nullable;

/**
 * Recurring schedules in Redis: each in the schedules hash
 * ({@link TopicKeys#schedules()}) of the partition of its topic that its name belongs to,
 * where its tick messages ({@code <name>~<tick ms>}, which belong to the same partition)
 * are stored by the same call that advances it; the registry
 * ({@link TopicKeys#scheduleRegistry(String)}) names each schedule's topic.
 */
final class RedisScheduleStore implements ScheduleStore {

	private final ScriptCalls calls;

	private final PartitionRouter router;

	private final String registry;

	RedisScheduleStore(ScriptCalls calls, PartitionRouter router) {
		this.calls = calls;
		this.router = router;
		this.registry = TopicKeys.scheduleRegistry(calls.prefix());
	}

	@Override
	public SchedulesRead read(String topic, String name) {
		long deadline = this.calls.deadline();
		String partition = this.router.partitionOf(topic, name, deadline);
		ScriptCodecs.Schedules.Reply reply = this.calls.run(partition, new ScriptCodecs.Schedules(),
				PartitionCounts.remaining(deadline));
		Map<String, ScheduleState> schedules = new LinkedHashMap<>();
		Map<String, String> unreadable = new LinkedHashMap<>();
		reply.states().forEach((schedule, state) -> {
			try {
				schedules.put(schedule, ScheduleState.parse(schedule, topic, state));
			}
			catch (CorruptMessageException ex) {
				unreadable.put(schedule, "has an unreadable state in Redis");
			}
		});
		return new SchedulesRead(reply.nowMillis(), schedules, unreadable);
	}

	@Override
	public @Nullable ScheduleState save(String topic, String name, String definition, long nextTickMillis,
			@Nullable ScheduleState read) {
		long deadline = this.calls.deadline();
		String partition = this.router.partitionOf(topic, name, deadline);
		String state = this.router.settlingRefusal(topic, deadline,
				() -> this.calls.run(
						partition, new ScriptCodecs.SaveSchedule(this.router.countOf(partition), name, definition,
								nextTickMillis, (read != null) ? read.stored() : ""),
						PartitionCounts.remaining(deadline)));
		if (state == null) {
			return null;
		}
		registry("set", name, topic);
		return ScheduleState.parse(name, topic, state);
	}

	@Override
	public boolean advance(ScheduleState read, long nextTickMillis, List<Long> ticksMillis, byte[] body) {
		long deadline = this.calls.deadline();
		String partition = this.router.partitionOf(read.topic(), read.name(), deadline);
		return this.router.settlingRefusal(read.topic(), deadline, () -> this.calls.run(partition,
				new ScriptCodecs.AdvanceSchedule(this.calls.signalChannel(partition), partition,
						this.router.countOf(partition), read.name(), read.stored(), nextTickMillis, body, ticksMillis),
				PartitionCounts.remaining(deadline)));
	}

	@Override
	public @Nullable ScheduleState pause(String topic, String name, boolean paused, long nextTickMillis) {
		long deadline = this.calls.deadline();
		String partition = this.router.partitionOf(topic, name, deadline);
		String state = this.router.settlingRefusal(topic, deadline,
				() -> this.calls.run(partition,
						new ScriptCodecs.PauseSchedule(this.router.countOf(partition), name, paused, nextTickMillis),
						PartitionCounts.remaining(deadline)));
		return (state != null) ? ScheduleState.parse(name, topic, state) : null;
	}

	@Override
	public boolean remove(String topic, String name) {
		long deadline = this.calls.deadline();
		String partition = this.router.partitionOf(topic, name, deadline);
		boolean removed = this.router.settlingRefusal(topic, deadline,
				() -> this.calls.run(partition, new ScriptCodecs.RemoveSchedule(this.router.countOf(partition), name),
						PartitionCounts.remaining(deadline)));
		registry("delete", name, "");
		return removed;
	}

	@Override
	public Map<String, String> registered() {
		return registry("read", "", "");
	}

	/** Changes and reads the registry, within the store's timeout. */
	private Map<String, String> registry(String operation, String name, String topic) {
		return this.calls.run(new ScriptCodecs.ScheduleRegistry(operation, name, topic), (key) -> this.registry,
				this.calls.timeout());
	}

}

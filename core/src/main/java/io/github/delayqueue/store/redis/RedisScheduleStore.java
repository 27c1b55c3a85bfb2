package io.github.delayqueue.store.redis;

import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.github.delayqueue.store.ScheduleState;
import io.github.delayqueue.store.ScheduleStore;
import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.core.RedisTemplate;

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

	private final RedisTemplate<String, byte[]> redis;

	private final String registry;

	RedisScheduleStore(ScriptCalls calls, PartitionRouter router, RedisTemplate<String, byte[]> redis) {
		this.calls = calls;
		this.router = router;
		this.redis = redis;
		this.registry = TopicKeys.scheduleRegistry(calls.prefix());
	}

	@Override
	public SchedulesRead read(String topic, String name) {
		long deadline = this.calls.deadline();
		String partition = this.router.partitionOf(topic, name, deadline);
		ScriptCodecs.Schedules.Reply reply = this.calls.run(partition, new ScriptCodecs.Schedules(),
				PartitionCounts.remaining(deadline));
		Map<String, ScheduleState> schedules = new LinkedHashMap<>();
		reply.states()
			.forEach((schedule, state) -> schedules.put(schedule, ScheduleState.parse(schedule, topic, state)));
		return new SchedulesRead(reply.nowMillis(), schedules);
	}

	@Override
	public ScheduleState save(String topic, String name, String definition, long nextTickMillis) {
		long deadline = this.calls.deadline();
		String partition = this.router.partitionOf(topic, name, deadline);
		String state = this.router.settlingRefusal(topic, deadline,
				() -> this.calls.run(partition,
						new ScriptCodecs.SaveSchedule(this.router.countOf(partition), name, definition, nextTickMillis),
						PartitionCounts.remaining(deadline)));
		this.redis.opsForHash().put(this.registry, name, topic.getBytes(StandardCharsets.UTF_8));
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
		this.redis.opsForHash().delete(this.registry, name);
		return removed;
	}

	@Override
	public Map<String, String> registered() {
		Map<String, String> registered = new LinkedHashMap<>();
		this.redis.<String, byte[]>opsForHash()
			.entries(this.registry)
			.forEach((name, topic) -> registered.put(name, new String(topic, StandardCharsets.UTF_8)));
		return registered;
	}

}

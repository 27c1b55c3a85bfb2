package io.github.delayqueue.store.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;

import io.github.delayqueue.store.CorruptMessageException;
import io.github.delayqueue.store.ScheduleDefinition;
import io.github.delayqueue.store.ScheduleState;
import io.github.delayqueue.store.ScheduleStore;
import io.github.delayqueue.store.TopicPartitions;
import io.github.delayqueue.store.redis.ScriptRunner.ScriptCall;
import org.jspecify.annotations.Nullable;

/**
 * Recurring schedules in Redis: each in the schedules hash
 * ({@link TopicKeys#schedules()}) of the partition of its topic that its name belongs to,
 * where its tick messages ({@code <name>~<tick ms>}, which belong to the same partition)
 * are stored by the same call that advances it; the registry
 * ({@link TopicKeys#scheduleRegistry(String)}) names each schedule's topic and keeps the
 * topics that have held one. A partition whose schedules hash holds the wrong type has
 * its wrong-type keys moved aside when read, and is reported; the others are read.
 */
final class RedisScheduleStore implements ScheduleStore {

	private final ScriptCalls calls;

	private final PartitionRouter router;

	private final WrongTypeKeys wrongTypeKeys;

	/** The most topics {@link #findTopics()} returns. */
	static final int MAX_FOUND_TOPICS = 10_000;

	private final String registry;

	private final Supplier<List<String>> scan;

	RedisScheduleStore(ScriptCalls calls, PartitionRouter router, WrongTypeKeys wrongTypeKeys,
			Supplier<List<String>> scan) {
		this.calls = calls;
		this.router = router;
		this.wrongTypeKeys = wrongTypeKeys;
		this.scan = scan;
		this.registry = TopicKeys.scheduleRegistry(calls.prefix());
	}

	@Override
	public SchedulesRead read(String topic, String name) {
		long deadline = this.calls.deadline();
		return readPartitions(topic, List.of(this.router.partitionOf(topic, name, deadline)), deadline);
	}

	@Override
	public SchedulesRead readTopic(String topic) {
		long deadline = this.calls.deadline();
		this.router.agree(topic, false, deadline);
		return readPartitions(topic, TopicPartitions.names(topic, this.router.countOf(topic)), deadline);
	}

	/**
	 * Reads the schedules of partitions in one round trip, each apart from the others.
	 */
	private SchedulesRead readPartitions(String topic, List<String> partitions, long deadline) {
		List<ScriptCall> reads = new ArrayList<>();
		partitions.forEach((partition) -> reads.add(this.calls.call(partition, new ScriptCodecs.Schedules())));
		List<Object> replies = this.calls.runAll(reads, PartitionCounts.remaining(deadline),
				WrongTypeKeys::isWrongType);
		Map<String, ScheduleState> schedules = new LinkedHashMap<>();
		Map<String, String> unreadable = new LinkedHashMap<>();
		long now = 0;
		for (int i = 0; i < partitions.size(); i++) {
			Object reply = replies.get(i);
			if (reply instanceof Throwable) {
				List<String> moved = this.wrongTypeKeys.quarantine(partitions.get(i));
				unreadable.put(partitions.get(i),
						"Partition '" + partitions.get(i) + "' of topic '" + topic
								+ "' had keys of the wrong type, moved aside as <key>:quarantined:<ms> " + moved
								+ ": the schedules kept there are lost (the ones an application declares are saved"
								+ " again)");
				continue;
			}
			ScriptCodecs.Schedules.Reply read = new ScriptCodecs.Schedules().read(reply);
			now = Math.max(now, read.nowMillis());
			read.states().forEach((schedule, state) -> {
				try {
					schedules.put(schedule, ScheduleFormat.state(schedule, topic, state));
				}
				catch (CorruptMessageException ex) {
					unreadable.put(schedule, "Schedule '" + schedule + "' of topic '" + topic
							+ "' has an unreadable state in Redis; this instance sends no tick of it");
				}
			});
		}
		return new SchedulesRead(now, schedules, unreadable);
	}

	@Override
	public List<String> findTopics() {
		return this.scan.get();
	}

	@Override
	public Registry registry() {
		ScriptCodecs.ScheduleRegistry.Reply reply = registry(ScriptCodecs.ScheduleRegistry.read());
		Set<String> topics = new LinkedHashSet<>(reply.topics());
		topics.addAll(reply.names().values());
		return new Registry(reply.names(), topics);
	}

	@Override
	public String register(String name, String topic, @Nullable String takingFrom) {
		// A save, like a send, may set the count of a topic it is the first to use.
		this.router.agree(topic, true, this.calls.deadline());
		return registry(new ScriptCodecs.ScheduleRegistry("claim", name, topic, (takingFrom != null) ? takingFrom : "",
				saveTime().toMillis()))
			.registered();
	}

	@Override
	public boolean unregister(String name, String topic) {
		return registry(new ScriptCodecs.ScheduleRegistry("release", name, topic, "", 0)).done();
	}

	@Override
	public boolean unregisterIfStale(String name, String topic) {
		return registry(new ScriptCodecs.ScheduleRegistry("release", name, topic, "", saveTime().toMillis())).done();
	}

	@Override
	public boolean forgetTopic(String topic) {
		return registry(new ScriptCodecs.ScheduleRegistry("forget-topic", "", topic, "", saveTime().toMillis())).done();
	}

	@Override
	public Duration saveTime() {
		return this.calls.timeout().multipliedBy(2).plusSeconds(1);
	}

	@Override
	public @Nullable ScheduleState save(String topic, String name, ScheduleDefinition definition, long nextTickMillis,
			@Nullable ScheduleState read) {
		long deadline = this.calls.deadline();
		String partition = this.router.partitionOf(topic, name, deadline);
		String state = this.router
			.settlingRefusal(topic, deadline,
					() -> this.calls.run(partition, new ScriptCodecs.SaveSchedule(this.router.countOf(partition), name,
							ScheduleFormat.encode(definition), nextTickMillis, (read != null) ? read.stored() : ""),
							PartitionCounts.remaining(deadline)));
		return (state != null) ? ScheduleFormat.state(name, topic, state) : null;
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
	public @Nullable ScheduleState pause(String topic, String name, boolean paused, long nextTickMillis,
			@Nullable ScheduleDefinition definition) {
		long deadline = this.calls.deadline();
		String partition = this.router.partitionOf(topic, name, deadline);
		String state = this.router.settlingRefusal(topic, deadline,
				() -> this.calls.run(partition,
						new ScriptCodecs.PauseSchedule(this.router.countOf(partition), name, paused, nextTickMillis,
								(definition != null) ? ScheduleFormat.encode(definition) : ""),
						PartitionCounts.remaining(deadline)));
		return (state != null) ? ScheduleFormat.state(name, topic, state) : null;
	}

	@Override
	public boolean remove(String topic, String name, @Nullable ScheduleState read) {
		long deadline = this.calls.deadline();
		String partition = this.router.partitionOf(topic, name, deadline);
		return this.router.settlingRefusal(topic, deadline,
				() -> this.calls.run(partition, new ScriptCodecs.RemoveSchedule(this.router.countOf(partition), name,
						(read != null) ? read.stored() : ""), PartitionCounts.remaining(deadline)));
	}

	/**
	 * Changes or reads the registry, within the store's timeout; a registry of the wrong
	 * type is moved aside (what it held is lost: the pollers restore what their
	 * applications declare), and the call made once more.
	 */
	private ScriptCodecs.ScheduleRegistry.Reply registry(ScriptCodecs.ScheduleRegistry call) {
		try {
			return this.calls.run(call, (key) -> this.registry, this.calls.timeout());
		}
		catch (RuntimeException ex) {
			if (!WrongTypeKeys.isWrongType(ex) || !this.wrongTypeKeys.quarantineHash(this.registry)) {
				throw ex;
			}
			return this.calls.run(call, (key) -> this.registry, this.calls.timeout());
		}
	}

}

package io.github.delayqueue.store.redis;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.function.Supplier;

import io.github.delayqueue.store.PartitionCountException;
import io.github.delayqueue.store.TopicPartitions;

/**
 * Routes the calls that name a topic and a message id to the message's partition, once
 * the topic's number of partitions agrees with Redis, and settles a partition's refusal
 * of this application's count before the call is made once more. A message of a group is
 * in its group's partition, not its id's: a call by id that does not find its message in
 * the id's partition {@link #runOnOthers asks the others}, in one round trip.
 */
final class PartitionRouter {

	private final ScriptCalls calls;

	private volatile PartitionCounts counts;

	PartitionRouter(ScriptCalls calls) {
		this.calls = calls;
		this.counts = new PartitionCounts(calls, TopicPartitions.NONE);
	}

	/** Spreads topics over partitions from now on; call before the first send. */
	void use(TopicPartitions partitions) {
		this.counts = new PartitionCounts(this.calls, partitions);
	}

	TopicPartitions partitions() {
		return this.counts.partitions();
	}

	/**
	 * Makes sure Redis spreads the topic over the count configured here; for a
	 * dead-letter queue, the topic whose dead letters it holds.
	 * @see PartitionCounts#agree(String, boolean, long)
	 */
	void agree(String topic, boolean mayChange, long deadline) {
		this.counts.agree(TopicPartitions.topicOf(topic), mayChange, deadline);
	}

	/**
	 * @return whether the topic's count is agreed, so that {@link #agree} returns at once
	 */
	boolean isAgreed(String topic) {
		return this.counts.isAgreed(TopicPartitions.topicOf(topic));
	}

	/**
	 * Settles the topic's count after a partition refused a call.
	 * @see PartitionCounts#settle(String, long)
	 */
	void settle(String topic, long deadline) {
		this.counts.settle(TopicPartitions.topicOf(topic), deadline);
	}

	/**
	 * The partition of a message, once the topic's count is agreed (by a call that does
	 * not change it).
	 */
	String partitionOf(String topic, String id, long deadline) {
		agree(topic, false, deadline);
		return partitions().nameFor(topic, id);
	}

	/**
	 * The partition of a group's messages, once the topic's count is agreed (by a call
	 * that does not change it).
	 */
	String partitionOfGroup(String topic, String group, long deadline) {
		agree(topic, false, deadline);
		return partitions().nameForGroup(topic, group);
	}

	/**
	 * Runs one call on each partition of a topic but one, all sent before the first reply
	 * is awaited: where a call by id looks for a message of a group, whose partition is
	 * its group's, once the id's partition did not have it. The partitions that refused
	 * this application's count (which changed nothing there) are asked once more after
	 * the count is settled as {@link #settlingRefusal} does; the replies of the others
	 * are kept, since a call that acted (a replay, a purge) would find nothing left to
	 * act on when run again.
	 * @param topic the topic (or its dead-letter queue)
	 * @param asked the partition asked already
	 * @param deadline the {@link System#nanoTime()} by which to be done
	 * @param codec the call for a partition
	 * @return the replies, read, in the order of the partitions; empty for a topic of one
	 * partition
	 * @throws PartitionCountException if Redis has another count, or a partition refuses
	 * again
	 */
	<T> List<T> runOnOthers(String topic, String asked, long deadline, Function<String, ScriptCodec<T>> codec) {
		List<String> others = partitions().names(topic).stream().filter((name) -> !name.equals(asked)).toList();
		if (others.isEmpty()) {
			return List.of();
		}
		List<Object> replies = runEach(others, deadline, codec);
		List<Integer> refused = new ArrayList<>();
		for (int i = 0; i < replies.size(); i++) {
			if (replies.get(i) instanceof Throwable) {
				refused.add(i);
			}
		}
		if (!refused.isEmpty()) {
			settle(topic, deadline);
			List<Object> again = runEach(refused.stream().map(others::get).toList(), deadline, codec);
			for (int i = 0; i < refused.size(); i++) {
				if (again.get(i) instanceof Throwable) {
					throw PartitionCountException.refusedAgain(topic, partitions().count(topic));
				}
				replies.set(refused.get(i), again.get(i));
			}
		}
		List<T> read = new ArrayList<>(replies.size());
		for (Object reply : replies) {
			@SuppressWarnings("unchecked")
			T value = (T) reply;
			read.add(value);
		}
		return read;
	}

	/**
	 * Runs one call on each partition, all sent before the first reply is awaited.
	 * @return the replies, read, in the order of the partitions; a refusal of this
	 * application's count in the place of its reply
	 */
	private <T> List<Object> runEach(List<String> partitions, long deadline, Function<String, ScriptCodec<T>> codec) {
		List<ScriptCodec<T>> codecs = partitions.stream().map(codec).toList();
		List<ScriptRunner.ScriptCall> calls = new ArrayList<>(partitions.size());
		for (int i = 0; i < partitions.size(); i++) {
			calls.add(this.calls.call(partitions.get(i), codecs.get(i)));
		}
		List<Object> replies = new ArrayList<>(
				this.calls.runAll(calls, PartitionCounts.remaining(deadline), PartitionCounts::isRefusal));
		for (int i = 0; i < replies.size(); i++) {
			if (!(replies.get(i) instanceof Throwable)) {
				replies.set(i, codecs.get(i).read(replies.get(i)));
			}
		}
		return replies;
	}

	/** The ids by partition, in the order given within each. */
	Map<String, List<String>> byPartition(String topic, List<String> ids, long deadline) {
		Map<String, List<String>> byPartition = new LinkedHashMap<>();
		ids.forEach((id) -> byPartition.computeIfAbsent(partitionOf(topic, id, deadline), (name) -> new ArrayList<>())
			.add(id));
		return byPartition;
	}

	/** The number of partitions of the topic a partition (or topic) belongs to. */
	int countOf(String partition) {
		return partitions().count(TopicPartitions.topicOf(partition));
	}

	/**
	 * Runs one call on a partition of a topic; if the partition refused this
	 * application's count (which changed nothing), settles the count and runs it once
	 * more.
	 * @throws PartitionCountException if Redis has another count, or the call is refused
	 * again
	 */
	<T> T settlingRefusal(String topic, long deadline, Supplier<T> call) {
		try {
			return call.get();
		}
		catch (RuntimeException ex) {
			if (!PartitionCounts.isRefusal(ex)) {
				throw ex;
			}
		}
		settle(topic, deadline);
		try {
			return call.get();
		}
		catch (RuntimeException ex) {
			if (PartitionCounts.isRefusal(ex)) {
				throw PartitionCountException.refusedAgain(topic, partitions().count(topic));
			}
			throw ex;
		}
	}

}

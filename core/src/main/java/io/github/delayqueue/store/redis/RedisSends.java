package io.github.delayqueue.store.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.github.delayqueue.store.NewMessage;
import io.github.delayqueue.store.NotReplicatedException;
import io.github.delayqueue.store.PartitionCountException;
import io.github.delayqueue.store.Sent;
import io.github.delayqueue.store.TopicPartitions;
import io.github.delayqueue.store.redis.ScriptRunner.ScriptCall;
import org.jspecify.annotations.Nullable;

import org.springframework.dao.DataAccessException;
import org.springframework.data.redis.connection.RedisConnectionFactory;

/**
 * Sends messages: each partition's share in chunks of one script call, all calls of a
 * batch sent before the first reply is awaited, with confirmed replication if it is on.
 */
final class RedisSends implements AutoCloseable {

	/** Most messages in one send script call: about a millisecond of Redis time. */
	static final int MAX_SEND_CHUNK = 250;

	/** Most body bytes in one send script call. */
	static final int MAX_SEND_CHUNK_BYTES = 512 * 1024;

	private final ScriptCalls calls;

	private final PartitionRouter router;

	private volatile @Nullable ReplicatedWrites replicatedWrites;

	RedisSends(ScriptCalls calls, PartitionRouter router) {
		this.calls = calls;
		this.router = router;
	}

	/**
	 * Makes every send return only once Redis confirms its writes on replicas.
	 * @see RedisMessageStore#confirmReplication(int, Duration)
	 */
	void confirmReplication(RedisConnectionFactory connectionFactory, int replicas, Duration timeout) {
		this.replicatedWrites = new ReplicatedWrites(connectionFactory, replicas, timeout);
	}

	@Override
	public void close() {
		ReplicatedWrites replicated = this.replicatedWrites;
		if (replicated != null) {
			replicated.close();
		}
	}

	/**
	 * Stores and schedules messages of several topics: at most {@value #MAX_SEND_CHUNK}
	 * messages (and about {@value #MAX_SEND_CHUNK_BYTES} bytes) per script call, all
	 * calls sent before the first reply is awaited, so the whole batch costs one round
	 * trip. A call that fails because Redis lost the script is sent again alone; the
	 * others are not repeated.
	 * @param messagesByTopic the messages of each topic, in send order
	 * @return the results of each topic, in the same order as its messages
	 * @throws DataAccessException if Redis failed or did not answer in time; any subset
	 * of the messages may have been stored, and a retry with the same ids stores the rest
	 * @throws NotReplicatedException if replication is confirmed and too few replicas
	 * confirmed the writes in time
	 */
	Map<String, List<Sent>> send(Map<String, List<NewMessage>> messagesByTopic) {
		long deadline = this.calls.deadline();
		messagesByTopic.keySet().forEach((topic) -> this.router.agree(topic, true, deadline));
		TopicPartitions partitions = this.router.partitions();
		if (!partitions.any()) {
			return sendToPartitions(messagesByTopic, deadline);
		}
		Map<String, List<NewMessage>> byPartition = new LinkedHashMap<>();
		messagesByTopic.forEach((topic,
				messages) -> messages.forEach((message) -> byPartition
					.computeIfAbsent(partitions.nameFor(topic, message.id()), (name) -> new ArrayList<>())
					.add(message)));
		Map<String, Iterator<Sent>> sent = new LinkedHashMap<>();
		sendToPartitions(byPartition, deadline).forEach((name, results) -> sent.put(name, results.iterator()));
		Map<String, List<Sent>> results = new LinkedHashMap<>();
		messagesByTopic.forEach((topic, messages) -> results.put(topic,
				messages.stream().map((message) -> sent.get(partitions.nameFor(topic, message.id())).next()).toList()));
		return results;
	}

	/**
	 * Sends messages to partitions (or topics), all script calls before the first reply
	 * is awaited. The calls a partition refused (they stored nothing) are sent once more,
	 * alone, after the count is settled; the others are not repeated.
	 */
	private Map<String, List<Sent>> sendToPartitions(Map<String, List<NewMessage>> messagesByTopic, long deadline) {
		List<String> topics = new ArrayList<>();
		List<ScriptCodecs.Send> sends = new ArrayList<>();
		List<ScriptCall> calls = new ArrayList<>();
		messagesByTopic.forEach((topic, messages) -> {
			for (List<NewMessage> chunk : chunks(messages)) {
				ScriptCodecs.Send send = new ScriptCodecs.Send(this.calls.signalChannel(topic), topic,
						this.router.countOf(topic), chunk);
				topics.add(topic);
				sends.add(send);
				calls.add(this.calls.call(topic, send));
			}
		});
		List<Object> replies = new ArrayList<>(runSends(calls, deadline));
		List<Integer> refused = refused(replies);
		if (!refused.isEmpty()) {
			refused.stream()
				.map((i) -> TopicPartitions.topicOf(topics.get(i)))
				.distinct()
				.forEach((topic) -> this.router.settle(topic, deadline));
			List<Object> again = runSends(refused.stream().map(calls::get).toList(), deadline);
			for (int r = 0; r < refused.size(); r++) {
				if (again.get(r) instanceof RuntimeException) {
					String topic = TopicPartitions.topicOf(topics.get(refused.get(r)));
					throw PartitionCountException.refusedAgain(topic, this.router.partitions().count(topic));
				}
				replies.set(refused.get(r), again.get(r));
			}
		}
		Map<String, List<Sent>> results = new LinkedHashMap<>();
		messagesByTopic.keySet().forEach((topic) -> results.put(topic, new ArrayList<>()));
		for (int i = 0; i < calls.size(); i++) {
			results.get(topics.get(i)).addAll(sends.get(i).read(replies.get(i)));
		}
		return results;
	}

	/**
	 * Runs send calls, all sent before the first reply is awaited, with confirmed
	 * replication if it is on.
	 * @return the replies, in order; the failure of a call that a partition refused
	 */
	private List<Object> runSends(List<ScriptCall> calls, long deadline) {
		ReplicatedWrites replicated = this.replicatedWrites;
		Duration timeout = PartitionCounts.remaining(deadline);
		return (replicated != null) ? replicated.runAll(calls, timeout, PartitionCounts::isRefusal)
				: this.calls.runAll(calls, timeout, PartitionCounts::isRefusal);
	}

	/** The indexes of the calls a partition refused. */
	private static List<Integer> refused(List<Object> replies) {
		List<Integer> refused = new ArrayList<>();
		for (int i = 0; i < replies.size(); i++) {
			if (replies.get(i) instanceof RuntimeException) {
				refused.add(i);
			}
		}
		return refused;
	}

	private static List<List<NewMessage>> chunks(List<NewMessage> messages) {
		List<List<NewMessage>> chunks = new ArrayList<>();
		int from = 0;
		while (from < messages.size()) {
			int to = from;
			long bytes = 0;
			while (to < messages.size() && to - from < MAX_SEND_CHUNK
					&& (to == from || bytes + messages.get(to).body().length <= MAX_SEND_CHUNK_BYTES)) {
				bytes += messages.get(to).body().length;
				to++;
			}
			chunks.add(messages.subList(from, to));
			from = to;
		}
		return chunks;
	}

}

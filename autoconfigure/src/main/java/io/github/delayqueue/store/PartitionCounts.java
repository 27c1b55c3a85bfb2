package io.github.delayqueue.store;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.data.redis.core.RedisTemplate;

/**
 * Keeps every application of a topic on the same number of partitions: the number a
 * topic's messages were sent with is kept in Redis ({@link TopicKeys#partitionCount()}),
 * and the first call of this application for the topic compares it with its own. A
 * different count replaces the stored one only while the partitions it would leave behind
 * hold no message; else it is refused with a {@link PartitionCountException}.
 * Thread-safe.
 */
final class PartitionCounts {

	private static final Log logger = LogFactory.getLog(PartitionCounts.class);

	private final RedisTemplate<String, byte[]> redis;

	private final Function<String, TopicKeys> keys;

	private final Function<String, TopicStats> stats;

	private final TopicPartitions partitions;

	private final Set<String> agreed = ConcurrentHashMap.newKeySet();

	/**
	 * @param redis the template of the store
	 * @param keys the keys of a topic or partition
	 * @param stats reads the counts of one partition
	 * @param partitions the partitions configured here
	 */
	PartitionCounts(RedisTemplate<String, byte[]> redis, Function<String, TopicKeys> keys,
			Function<String, TopicStats> stats, TopicPartitions partitions) {
		this.redis = redis;
		this.keys = keys;
		this.stats = stats;
		this.partitions = partitions;
	}

	TopicPartitions partitions() {
		return this.partitions;
	}

	/**
	 * Makes sure Redis holds the topic's messages with the count configured here; once
	 * per topic and application, later calls return at once.
	 * @param topic the topic
	 * @throws PartitionCountException if Redis has another count and the partitions only
	 * it has still hold messages
	 */
	void agree(String topic) {
		if (this.agreed.contains(topic)) {
			return;
		}
		int configured = this.partitions.count(topic);
		String key = this.keys.apply(topic).partitionCount();
		byte[] value = this.redis.opsForValue().get(key);
		int stored = (value != null) ? Integer.parseInt(new String(value, StandardCharsets.UTF_8)) : 1;
		if (stored != configured) {
			long held = heldBeyondFirst(topic, stored);
			if (held > 0) {
				throw new PartitionCountException(topic, stored, configured, held);
			}
			if (configured == 1) {
				this.redis.delete(key);
			}
			else {
				this.redis.opsForValue().set(key, Integer.toString(configured).getBytes(StandardCharsets.UTF_8));
			}
			logger.info("Topic '" + topic + "' now has " + configured + " partitions (had " + stored + ")");
		}
		this.agreed.add(topic);
	}

	/** The messages in the partitions, other than partition 0, of a count. */
	private long heldBeyondFirst(String topic, int count) {
		List<String> names = TopicPartitions.names(topic, count);
		long held = 0;
		for (String name : names.subList(1, names.size())) {
			TopicStats partition = this.stats.apply(name);
			held += partition.scheduled() + partition.ready() + partition.inFlight() + partition.dead();
		}
		return held;
	}

}

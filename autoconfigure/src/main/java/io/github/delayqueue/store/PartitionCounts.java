package io.github.delayqueue.store;

import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * Keeps every application of a topic on the same number of partitions: the number a
 * topic's messages were sent with is kept in Redis ({@link TopicKeys#partitionCount()}),
 * and the first call of this application for the topic compares it with its own
 * ({@code partition_count.lua}). A different count is replaced only while the partitions
 * it would leave behind hold no message; else it is refused with a
 * {@link PartitionCountException}. Thread-safe.
 */
final class PartitionCounts {

	private static final Log logger = LogFactory.getLog(PartitionCounts.class);

	private final RedisMessageStore store;

	private final TopicPartitions partitions;

	private final Set<String> agreed = ConcurrentHashMap.newKeySet();

	/**
	 * @param store the store, whose calls are bounded by its timeout
	 * @param partitions the partitions configured here
	 */
	PartitionCounts(RedisMessageStore store, TopicPartitions partitions) {
		this.store = store;
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
		PartitionCount count = this.store.partitionCount(topic, configured, 0);
		if (!count.taken()) {
			long held = heldBeyondFirst(topic, count.found());
			if (held > 0) {
				throw new PartitionCountException(topic, count.found(), configured, held);
			}
			count = this.store.partitionCount(topic, configured, count.found());
			if (!count.taken()) {
				// Changed by another application meanwhile: compare again.
				agree(topic);
				return;
			}
		}
		if (count.found() != configured) {
			logger.info("Topic '" + topic + "' now has " + configured + " partitions (had " + count.found() + ")");
		}
		this.agreed.add(topic);
	}

	/** The messages in the partitions, other than partition 0, of a count. */
	private long heldBeyondFirst(String topic, int count) {
		List<String> names = TopicPartitions.names(topic, count);
		long held = 0;
		for (String name : names.subList(1, names.size())) {
			TopicStats partition = this.store.partitionStats(name);
			held += partition.scheduled() + partition.ready() + partition.inFlight() + partition.dead();
		}
		return held;
	}

	/**
	 * What {@code partition_count.lua} found and did.
	 *
	 * @param found the count kept in Redis before the call
	 * @param taken whether Redis now keeps the count configured here
	 */
	record PartitionCount(int found, boolean taken) {
	}

}

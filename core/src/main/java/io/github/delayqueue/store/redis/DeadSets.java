package io.github.delayqueue.store.redis;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import java.util.function.LongSupplier;

import io.github.delayqueue.store.DeadLetterRetention;
import io.github.delayqueue.store.TopicPartitions;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * The dead sets of a store's topics: each topic's retention, which the scripts that bury
 * a dead letter apply, and a WARN, at most once per {@link #WARN_INTERVAL} and topic,
 * when this application dead-letters more than {@link #FAST_GROWTH} messages of a topic
 * within a minute. Thread-safe.
 */
final class DeadSets {

	private static final Log logger = LogFactory.getLog(DeadSets.class);

	/** More dead letters than this within a minute is a dead set growing fast. */
	static final int FAST_GROWTH = 1000;

	/** The shortest time between two warnings about one topic. */
	static final Duration WARN_INTERVAL = Duration.ofMinutes(10);

	private static final long MINUTE_NANOS = Duration.ofMinutes(1).toNanos();

	private final LongSupplier nanoTime;

	private final Map<String, Growth> growth = new ConcurrentHashMap<>();

	private volatile Function<String, DeadLetterRetention> retention = (topic) -> DeadLetterRetention.KEEP_ALL;

	DeadSets(LongSupplier nanoTime) {
		this.nanoTime = nanoTime;
	}

	void useRetention(Function<String, DeadLetterRetention> retention) {
		this.retention = retention;
	}

	/**
	 * @param partition a partition of a topic, or of a dead-letter queue
	 * @return the retention of its topic
	 */
	DeadLetterRetention retentionOf(String partition) {
		return this.retention.apply(nameOf(partition));
	}

	/**
	 * The retention one partition applies to its own dead set, which the script that
	 * buries sees alone: the topic's count divided among its partitions (at least one
	 * each), so that the topic as a whole keeps no more than its count (unless it is
	 * smaller than the number of partitions); the age as it is.
	 * @param partition a partition of a topic, or of a dead-letter queue
	 * @param partitions the number of partitions of the topic
	 * @return the retention of the partition's dead set
	 */
	DeadLetterRetention retentionOf(String partition, int partitions) {
		DeadLetterRetention topic = retentionOf(partition);
		if (topic.maxCount() == 0 || partitions <= 1) {
			return topic;
		}
		return new DeadLetterRetention(Math.max(1, topic.maxCount() / partitions), topic.maxAge());
	}

	/**
	 * @return the topic of a partition, or the dead-letter queue {@code <topic>#dead} of
	 * a partition of one
	 */
	private static String nameOf(String partition) {
		String topic = TopicPartitions.topicOf(partition);
		return TopicPartitions.isDeadLetters(partition) ? TopicPartitions.deadLettersOf(topic) : topic;
	}

	/**
	 * Counts dead letters this application buried, and warns when the topic's dead set
	 * grows fast.
	 * @param partition the partition they died in
	 * @param count how many
	 * @return whether it warned
	 */
	boolean buried(String partition, int count) {
		if (count == 0) {
			return false;
		}
		String topic = nameOf(partition);
		long now = this.nanoTime.getAsLong();
		long inMinute = this.growth.computeIfAbsent(topic, (t) -> new Growth()).add(now, count);
		if (inMinute <= FAST_GROWTH || !this.growth.get(topic).mayWarn(now)) {
			return false;
		}
		DeadLetterRetention retention = retentionOf(partition);
		logger.warn("Topic '" + topic + "': " + inMinute + " messages dead-lettered by this application within a"
				+ " minute; its dead set grows fast"
				+ (retention.equals(DeadLetterRetention.KEEP_ALL)
						? " and keeps them all: bound it with delay-queue.topics." + topic + ".dead-letters.max-count"
								+ " or max-age"
						: " (kept: at most " + retention.maxCount() + ", for at most " + retention.maxAge() + ")")
				+ ". Said at most every " + WARN_INTERVAL.toMinutes() + " minutes");
		return true;
	}

	/**
	 * One topic's dead letters in the current minute, and when it was last warned about.
	 */
	private static final class Growth {

		private long minuteStart;

		private long count;

		private long warnedAt;

		private boolean warned;

		synchronized long add(long now, int buried) {
			if (this.count == 0 || now - this.minuteStart > MINUTE_NANOS) {
				this.minuteStart = now;
				this.count = 0;
			}
			this.count += buried;
			return this.count;
		}

		synchronized boolean mayWarn(long now) {
			if (this.warned && now - this.warnedAt < WARN_INTERVAL.toNanos()) {
				return false;
			}
			this.warned = true;
			this.warnedAt = now;
			return true;
		}

	}

}

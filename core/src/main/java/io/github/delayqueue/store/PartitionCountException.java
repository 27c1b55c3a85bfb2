package io.github.delayqueue.store;

import java.time.Instant;
import java.util.List;

/**
 * The number of partitions configured for a topic here is not the one Redis spreads its
 * messages over, and this application may not use it: changing the count now would move
 * messages out of reach of the calls that find them by id, the count was changed by
 * another application since this one started, or a change of it is on its way. Every
 * application of a topic must use the same count. Nothing was stored or changed by the
 * call that throws it, except that a {@code sendAll} may have stored the messages of
 * other partitions, as when it fails in Redis.
 */
public class PartitionCountException extends IllegalStateException {

	private final String topic;

	private final int stored;

	private final int configured;

	private PartitionCountException(String topic, int stored, int configured, String message) {
		super(message);
		this.topic = topic;
		this.stored = stored;
		this.configured = configured;
	}

	/**
	 * The count cannot change while the topic holds messages that the new count would
	 * look for in other partitions.
	 * @param topic the topic
	 * @param stored its number of partitions in Redis
	 * @param configured its number of partitions configured here
	 * @param held the messages, stored or dead, that would be out of reach
	 * @return the exception
	 */
	public static PartitionCountException wouldStrand(String topic, int stored, int configured, long held) {
		return new PartitionCountException(topic, stored, configured, "Topic '" + topic + "' has " + stored
				+ " partitions in Redis, but " + configured + " are configured here (delay-queue.topics." + topic
				+ ".partitions), and what it holds (" + held + " found: messages scheduled, ready, in flight or dead,"
				+ " in the topic or its dead-letter queue '" + topic + "#dead', recurring schedules, and paused groups)"
				+ " would then be out of reach of the calls that find them by id. Every application must use the same"
				+ " count; it can change only while " + ((configured == 1) ? "partitions 1 and up are" : "the topic is")
				+ " empty and has no schedule (see docs/redis.md, \"Partitioned topics\")");
	}

	/**
	 * The count cannot change while partitions of either count remember ids sent with a
	 * deduplication window that has not ended: the new count would look for them in
	 * another partition, and store and deliver such an id again within its window.
	 * @param topic the topic
	 * @param stored its number of partitions in Redis
	 * @param configured its number of partitions configured here
	 * @param remembered how many ids are remembered
	 * @param someIds the first few of them
	 * @param lastWindowEnd when the last of their windows ends
	 * @return the exception
	 */
	public static PartitionCountException remembersIds(String topic, int stored, int configured, long remembered,
			List<String> someIds, Instant lastWindowEnd) {
		return new PartitionCountException(topic, stored, configured,
				"Topic '" + topic + "' has " + stored + " partitions in Redis, but " + configured
						+ " are configured here (delay-queue.topics." + topic + ".partitions), and it remembers "
						+ remembered + " id" + ((remembered == 1) ? "" : "s") + " sent"
						+ " with a deduplication window that has not ended (" + String.join(", ", someIds)
						+ ((remembered > someIds.size()) ? ", ..." : "") + "; the last window ends at " + lastWindowEnd
						+ "): the new count would look for them in another partition and store them again. Every"
						+ " application must use the same count; it can change once those windows have ended (see"
						+ " docs/redis.md, \"Partitioned topics\")");
	}

	/**
	 * The counts differ, and the call is not one that may change the count (only a send,
	 * or a listener starting, may).
	 * @param topic the topic
	 * @param stored its number of partitions in Redis
	 * @param configured its number of partitions configured here
	 * @return the exception
	 */
	public static PartitionCountException differs(String topic, int stored, int configured) {
		return new PartitionCountException(topic, stored, configured, "Topic '" + topic + "' has " + stored
				+ " partitions in Redis, but " + configured + " are configured here (delay-queue.topics." + topic
				+ ".partitions). Every application must use the same count; only a send or a listener starting"
				+ " changes it, and only while no message would move (see docs/redis.md, \"Partitioned topics\")");
	}

	/**
	 * Another application changed the count while this one was running.
	 * @param topic the topic
	 * @param stored its number of partitions in Redis now
	 * @param configured its number of partitions configured here
	 * @return the exception
	 */
	public static PartitionCountException changedElsewhere(String topic, int stored, int configured) {
		return new PartitionCountException(topic, stored, configured,
				"Topic '" + topic + "' has " + stored + " partitions in Redis, but " + configured
						+ " are configured here (delay-queue.topics." + topic + ".partitions): another application"
						+ " changed the count. Every application must use the same count: restart this one with "
						+ stored);
	}

	/**
	 * A change of the count, by another application, did not end in time.
	 * @param topic the topic
	 * @param stored its number of partitions in Redis
	 * @param configured its number of partitions configured here
	 * @param change the change on its way
	 * @return the exception
	 */
	public static PartitionCountException changing(String topic, int stored, int configured, String change) {
		return new PartitionCountException(topic, stored, configured,
				"Topic '" + topic + "' has " + stored + " partitions in Redis, and an application is changing the"
						+ " count (" + change + "); this one has " + configured + " configured (delay-queue.topics."
						+ topic + ".partitions). Try again once the change" + " has ended");
	}

	/**
	 * Redis holds no count for the topic: something else wrote its count key.
	 * @param topic the topic
	 * @param key the topic's count key
	 * @param stored what the key holds
	 * @param configured the count configured here
	 * @return the exception
	 */
	public static PartitionCountException unreadable(String topic, String key, String stored, int configured) {
		return new PartitionCountException(topic, 0, configured,
				"Topic '" + topic + "': its partition count key " + key + " holds '"
						+ ((stored.length() > 40) ? stored.substring(0, 40) + "..." : stored)
						+ "', which is no count (written by something else); no call by id can be routed. Set it to"
						+ " the topic's number of partitions (" + configured + " configured here; delete it for 1)");
	}

	/**
	 * A partition refused the calls of this application's count although Redis keeps the
	 * same count and no change is on its way.
	 * @param topic the topic
	 * @param configured its number of partitions, here and in Redis
	 * @return the exception
	 */
	public static PartitionCountException refusedAgain(String topic, int configured) {
		return new PartitionCountException(topic, configured, configured,
				"Topic '" + topic + "': a partition refused a call made with the topic's count (" + configured
						+ ") although Redis keeps that count; its count marker keeps changing. Try again");
	}

	/**
	 * @return the topic
	 */
	public String topic() {
		return this.topic;
	}

	/**
	 * @return its number of partitions in Redis
	 */
	public int stored() {
		return this.stored;
	}

	/**
	 * @return its number of partitions configured here
	 */
	public int configured() {
		return this.configured;
	}

}

package io.github.delayqueue.store;

/**
 * The number of partitions configured for a topic differs from the one its messages in
 * Redis were sent with, and changing it now would strand messages in partitions that no
 * application would read any more. Every application of a topic must use the same count;
 * it can change only once the partitions other than partition 0 are empty.
 */
public class PartitionCountException extends IllegalStateException {

	private final String topic;

	private final int stored;

	private final int configured;

	/**
	 * Creates an exception.
	 * @param topic the topic
	 * @param stored its number of partitions in Redis
	 * @param configured its number of partitions configured here
	 * @param held the messages still in the partitions that would be stranded
	 */
	public PartitionCountException(String topic, int stored, int configured, long held) {
		super("Topic '" + topic + "' has " + stored + " partitions in Redis, but " + configured
				+ " are configured here (delay-queue.topics." + topic + ".partitions), and its partitions 1 to "
				+ (stored - 1) + " still hold " + held + " messages. Every application must use the same count; "
				+ "to change it, keep " + stored + " until those partitions are empty (see the README, "
				+ "\"Partitioned topics\")");
		this.topic = topic;
		this.stored = stored;
		this.configured = configured;
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

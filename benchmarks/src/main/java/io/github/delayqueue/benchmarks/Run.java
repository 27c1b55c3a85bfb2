package io.github.delayqueue.benchmarks;

import java.util.Map;

/**
 * What every scenario needs: its options, which queue it measures, and the Redis server
 * under test (flushed before the scenario starts).
 */
final class Run {

	/** The value of an option that leaves the setting at the starter's default. */
	static final String DEFAULT = "default";

	private final Options options;

	private final QueueClient.Kind kind;

	private final String redisUrl;

	private final RedisServer server;

	Run(Options options, QueueClient.Kind kind, String redisUrl, RedisServer server) {
		this.options = options;
		this.kind = kind;
		this.redisUrl = redisUrl;
		this.server = server;
	}

	Options options() {
		return this.options;
	}

	QueueClient.Kind kind() {
		return this.kind;
	}

	String redisUrl() {
		return this.redisUrl;
	}

	RedisServer server() {
		return this.server;
	}

	/**
	 * Starts the queue under test.
	 * @param consumers what it consumes
	 * @param properties extra Spring properties for delay-queue (Redisson has none)
	 * @return the client; close it when done
	 */
	QueueClient open(ConsumerSpec consumers, Map<String, String> properties) {
		return switch (this.kind) {
			case DELAY_QUEUE -> new DelayQueueClient(this.redisUrl, consumers, properties);
			case REDISSON -> new RedissonQueueClient(this.redisUrl, consumers);
		};
	}

	QueueClient open(ConsumerSpec consumers) {
		return open(consumers, listenerProperties());
	}

	/**
	 * @return the delay-queue listener settings given on the command line; none by
	 * default, so that a run measures what users get without setting anything
	 */
	Map<String, String> listenerProperties() {
		String prefetch = this.options.string("prefetch", DEFAULT);
		return DEFAULT.equals(prefetch) ? Map.of() : Map.of("delay-queue.listener.prefetch", prefetch);
	}

}

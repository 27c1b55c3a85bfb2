package io.github.delayqueue.metrics;

/**
 * Names and tags of the queue's meters. Every meter has the tag {@value #TOPIC}; tag
 * values are bounded (topics, outcomes, exception class names).
 */
public final class DelayQueueMeterNames {

	/**
	 * Counter of messages sent; tag {@value #OUTCOME}: {@code sent} or {@code duplicate}.
	 */
	public static final String SENT = "delay.queue.sent";

	/** Timer of send calls to Redis (one per topic and call). */
	public static final String SEND_LATENCY = "delay.queue.send.latency";

	/** Counter of messages claimed and handed to their listener. */
	public static final String DELIVERED = "delay.queue.delivered";

	/** Timer of claim time minus due time, by the Redis clock. */
	public static final String LATENESS = "delay.queue.lateness";

	/**
	 * Timer of handlers; tags {@value #OUTCOME} ({@code success}, {@code retry},
	 * {@code dead}) and {@value #EXCEPTION}.
	 */
	public static final String HANDLER = "delay.queue.handler";

	/** Counter of messages acknowledged. */
	public static final String ACKED = "delay.queue.acked";

	/** Counter of retries scheduled after a failed attempt; tag {@value #EXCEPTION}. */
	public static final String RETRIED = "delay.queue.retried";

	/**
	 * Counter of messages dead-lettered; tag {@value #REASON}: {@code failed},
	 * {@code unreadable}, {@code corrupt}, {@code late} or {@code lease-expired}.
	 */
	public static final String DEAD_LETTERED = "delay.queue.dead.lettered";

	/** Counter of messages delivered again because their lease expired. */
	public static final String LEASE_EXPIRED = "delay.queue.lease.expired";

	/** Counter of pending messages cancelled. */
	public static final String CANCELLED = "delay.queue.cancelled";

	/** Counter of pending messages rescheduled. */
	public static final String RESCHEDULED = "delay.queue.rescheduled";

	/**
	 * Counter of claims that used up the room of their topic's rate limit, after which
	 * its due messages wait for the window.
	 */
	public static final String RATE_LIMITED = "delay.queue.rate.limited";

	/**
	 * Counter of the times this application found that Redis lost the queue's data
	 * (restarted without persistence, flushed, or failed over to an empty replica).
	 */
	public static final String REDIS_DATA_LOST = "delay.queue.redis.data.lost";

	/**
	 * Gauge of a topic's messages; tag {@value #STATE}: {@code scheduled}, {@code ready},
	 * {@code in-flight} or {@code dead}.
	 */
	public static final String MESSAGES = "delay.queue.messages";

	/**
	 * Gauge of a topic's ready messages of one priority; tag {@value #PRIORITY}.
	 * Registered for a priority once the topic is seen with ready messages of it, and
	 * only for topics that use priorities above 0.
	 */
	public static final String READY_BY_PRIORITY = "delay.queue.ready.priority";

	/** Gauge of how long the oldest due but unclaimed message of a topic has waited. */
	public static final String OLDEST_LATENESS = "delay.queue.oldest.lateness";

	/** Tag: the state of the messages counted. */
	public static final String STATE = "state";

	/** Tag: the priority of the messages counted, 0 to 9. */
	public static final String PRIORITY = "priority";

	/** Tag: the topic. */
	public static final String TOPIC = "topic";

	/** Tag: the outcome. */
	public static final String OUTCOME = "outcome";

	/** Tag: the simple class name of an exception, or {@code none}. */
	public static final String EXCEPTION = "exception";

	/** Tag: why a message was dead-lettered. */
	public static final String REASON = "reason";

	private DelayQueueMeterNames() {
	}

}

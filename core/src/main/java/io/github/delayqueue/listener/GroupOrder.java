package io.github.delayqueue.listener;

/**
 * The order in which a group's messages are handled when one of them fails, as
 * {@code delay-queue.topics.<topic>.group-order} sets it.
 */
public enum GroupOrder {

	/**
	 * A message that fails waits for its next attempt in the schedule, and its group goes
	 * on: later messages of the group may pass it (as in Kafka with retries). The
	 * default.
	 */
	RELAXED,

	/**
	 * A message that fails, or whose handler asks to slow down, waits for its next
	 * attempt in its group, ready at its rank, and its group waits with it (in every
	 * application): no later message of the group passes it. With a group concurrency of
	 * 1, a group's messages are handled one at a time, in order, failures included.
	 */
	STRICT

}

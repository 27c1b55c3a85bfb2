package io.github.delayqueue.listener;

/**
 * What a listener does with a message that is claimed much later than it was due, e.g.
 * after an outage or a long stop.
 */
public enum LatePolicy {

	/** Deliver it anyway; {@link Delivery#lateness()} tells how late it is. */
	DELIVER,

	/**
	 * Move it to the dead-letter set when it is later than the topic's late threshold.
	 */
	DEAD_LETTER

}

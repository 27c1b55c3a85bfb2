package io.github.delayqueue.store;

/**
 * What a message of a group that fails, or whose handler asks to slow down, does to its
 * group while it waits for its next attempt. A message of no group does nothing to any.
 */
public enum GroupWait {

	/** Nothing: the message waits in the schedule; its group goes on. */
	NONE,

	/**
	 * Its group waits too, until the next attempt, in every application: the message
	 * waits in the schedule (a slow-down of a message of a group).
	 */
	GROUP,

	/**
	 * The message waits in its group, ready at its rank (its priority and due time), and
	 * its group waits until the next attempt, so that no later message of the group
	 * passes it: strict group order.
	 */
	IN_GROUP

}

package io.github.delayqueue.schedule;

/**
 * What a schedule sends for the ticks it missed (all instances were down, or Redis was
 * out of reach): when more than one tick is due at once, every due tick is missed; a
 * single due tick is missed when it is more than {@link Schedule#MISFIRE_THRESHOLD} late.
 */
public enum MisfirePolicy {

	/** One message for all the missed ticks, that of the last of them. */
	FIRE_ONCE,

	/** Nothing for the missed ticks: only the next tick to come. */
	SKIP,

	/** One message for each missed tick, at most {@value Schedule#MAX_MISSED_TICKS}. */
	FIRE_ALL

}

package io.github.delayqueue.schedule;

/**
 * What a schedule sends for the ticks it missed, when no instance sent them within
 * {@link Schedule#MISFIRE_THRESHOLD} of their time (all instances were down, or Redis was
 * out of reach).
 */
public enum MisfirePolicy {

	/** One message for all the missed ticks, that of the last of them. */
	FIRE_ONCE,

	/** Nothing for the missed ticks: only the next tick to come. */
	SKIP,

	/** One message for each missed tick, at most {@value Schedule#MAX_MISSED_TICKS}. */
	FIRE_ALL

}

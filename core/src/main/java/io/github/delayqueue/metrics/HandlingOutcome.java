package io.github.delayqueue.metrics;

import java.util.Locale;

/**
 * What became of a message after its handler ran.
 */
public enum HandlingOutcome {

	/** The handler returned; the message was acknowledged. */
	SUCCESS,

	/** The handler threw; another attempt is scheduled. */
	RETRY,

	/** The handler threw on the last attempt; the message was dead-lettered. */
	DEAD,

	/**
	 * The handler asked to slow down; the message comes again later, no attempt counted.
	 */
	SLOW_DOWN;

	/**
	 * @return the tag value, in lower case
	 */
	public String tag() {
		return name().toLowerCase(Locale.ROOT);
	}

}

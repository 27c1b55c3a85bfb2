package io.github.delayqueue.listener;

import java.time.Duration;

import io.github.delayqueue.time.Durations;

/**
 * What happens to a message whose listener failed, as a {@link DelayListenerErrorHandler}
 * decides: retried after a pause (counting an attempt), dead-lettered now, or delivered
 * again after a pause without counting an attempt while this application's listener of
 * the topic claims nothing new (a slow-down, as {@link SlowDownException} asks for).
 */
public final class FailureAction {

	/** The longest pause before a retry. */
	public static final Duration MAX_RETRY_PAUSE = Duration.ofDays(365);

	private static final FailureAction DEAD_LETTER = new FailureAction(Kind.DEAD_LETTER, Duration.ZERO);

	private final Kind kind;

	private final Duration pause;

	private FailureAction(Kind kind, Duration pause) {
		this.kind = kind;
		this.pause = pause;
	}

	/**
	 * Retries the message after a pause; the failed delivery counts as an attempt, even
	 * past the listener's maximum attempts.
	 * @param pause how long until the next attempt, from 0 to {@link #MAX_RETRY_PAUSE}
	 * @return the action
	 * @throws IllegalArgumentException if the pause is negative or too long
	 */
	public static FailureAction retryAfter(Duration pause) {
		if (pause.isNegative() || pause.compareTo(MAX_RETRY_PAUSE) > 0) {
			throw new IllegalArgumentException("A retry pause must be from 0 to " + Durations.format(MAX_RETRY_PAUSE)
					+ ", but was " + Durations.format(pause));
		}
		return new FailureAction(Kind.RETRY, pause);
	}

	/**
	 * Moves the message to the dead-letter set now, with the failure as its last error.
	 * @return the action
	 */
	public static FailureAction deadLetter() {
		return DEAD_LETTER;
	}

	/**
	 * Delivers the message again after a pause without counting an attempt, and claims no
	 * new message of the topic in this application until the pause is over; for a message
	 * of a group, its group waits instead, in every application.
	 * @param pause the pause, positive and at most {@link SlowDownException#MAX_PAUSE}
	 * @return the action
	 * @throws IllegalArgumentException if the pause is not positive or too long
	 */
	public static FailureAction slowDown(Duration pause) {
		if (pause.isNegative() || pause.isZero() || pause.compareTo(SlowDownException.MAX_PAUSE) > 0) {
			throw new IllegalArgumentException("A slow-down pause must be positive and at most "
					+ Durations.format(SlowDownException.MAX_PAUSE) + ", but was " + Durations.format(pause));
		}
		return new FailureAction(Kind.SLOW_DOWN, pause);
	}

	/**
	 * @return what happens to the message
	 */
	public Kind kind() {
		return this.kind;
	}

	/**
	 * @return the pause before a retry or after a slow-down; zero for a dead letter
	 */
	public Duration pause() {
		return this.pause;
	}

	@Override
	public boolean equals(Object other) {
		return other instanceof FailureAction action && action.kind == this.kind && action.pause.equals(this.pause);
	}

	@Override
	public int hashCode() {
		return 31 * this.kind.hashCode() + this.pause.hashCode();
	}

	@Override
	public String toString() {
		return switch (this.kind) {
			case RETRY -> "retry after " + Durations.format(this.pause);
			case DEAD_LETTER -> "dead-letter";
			case SLOW_DOWN -> "slow down for " + Durations.format(this.pause);
		};
	}

	/** What happens to the message. */
	public enum Kind {

		/** Delivered again after the pause, counting the failed attempt. */
		RETRY,

		/** Moved to the dead-letter set now. */
		DEAD_LETTER,

		/** Delivered again after the pause without counting an attempt; claims pause. */
		SLOW_DOWN

	}

}

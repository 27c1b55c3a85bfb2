package io.github.delayqueue.listener;

import io.github.delayqueue.time.Durations;
import java.time.Duration;

import org.jspecify.annotations.Nullable;

/**
 * Thrown by a {@link DelayListener} method to ask for a pause, e.g. after a partner API
 * answered HTTP 429: the message is delivered again after the pause without counting an
 * attempt (it is never dead-lettered for it), and the topic's listener in this
 * application claims no new message until the pause is over. Handlers already running go
 * on; other application instances are not paused. For a message sent in a group, its
 * group waits instead, in every application, while the listener goes on with the other
 * groups (see {@code DelayQueueGroups}).
 */
public class SlowDownException extends RuntimeException {

	/** The longest pause a handler may ask for. */
	public static final Duration MAX_PAUSE = Duration.ofHours(1);

	private final Duration pause;

	/**
	 * Asks for a pause.
	 * @param pause how long to wait before this message and the topic's next claims
	 * @throws IllegalArgumentException if the pause is not positive or longer than
	 * {@link #MAX_PAUSE}
	 */
	public SlowDownException(Duration pause) {
		this(pause, null);
	}

	/**
	 * Asks for a pause, with the reason.
	 * @param pause how long to wait before this message and the topic's next claims
	 * @param cause why, e.g. the client's exception for HTTP 429, or {@code null}
	 * @throws IllegalArgumentException if the pause is not positive or longer than
	 * {@link #MAX_PAUSE}
	 */
	public SlowDownException(Duration pause, @Nullable Throwable cause) {
		super("Slow down for " + pause, cause);
		if (pause.isNegative() || pause.isZero() || pause.compareTo(MAX_PAUSE) > 0) {
			throw new IllegalArgumentException("A slow-down pause must be positive and at most "
					+ Durations.format(MAX_PAUSE) + ", but is " + Durations.format(pause));
		}
		this.pause = pause;
	}

	/**
	 * Returns how long to wait before this message and the topic's next claims.
	 * @return the pause
	 */
	public Duration pause() {
		return this.pause;
	}

}

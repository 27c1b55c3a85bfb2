package io.github.delayqueue.runtime.consumer;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

import io.github.delayqueue.runtime.support.Nanoseconds;

/**
 * The pause of a topic's claims that a handler asks for by throwing
 * {@link io.github.delayqueue.listener.SlowDownException}: one per topic in this
 * application, shared by the consumers of all its partitions, so that none of them claims
 * anything new until it is over. A pause already longer stays. Thread-safe.
 */
public final class ClaimPause {

	/** When the pause ends ({@link System#nanoTime()}). */
	private final AtomicLong untilNanos = new AtomicLong(System.nanoTime());

	/** Creates a pause that is over. */
	public ClaimPause() {
	}

	/**
	 * Claims nothing new for a while; a pause already longer stays.
	 * @param pause how long
	 */
	void pauseFor(Duration pause) {
		long until = System.nanoTime() + Nanoseconds.of(pause);
		this.untilNanos.accumulateAndGet(until, (current, next) -> (next - current > 0) ? next : current);
	}

	/**
	 * @return the nanoseconds until the pause is over; zero or less when it is
	 */
	long remainingNanos() {
		return this.untilNanos.get() - System.nanoTime();
	}

}

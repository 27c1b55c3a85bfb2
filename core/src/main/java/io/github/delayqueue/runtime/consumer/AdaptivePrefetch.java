package io.github.delayqueue.runtime.consumer;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

import io.github.delayqueue.runtime.support.Nanoseconds;

/**
 * How many claimed messages may wait in this application for a free handler: as many as
 * the handlers finish in a short wait ({@link #TARGET_WAIT}, or a quarter of the lease if
 * that is shorter), at most the configured prefetch. It follows how long the handlers
 * take per message, weighted to the recent calls: none until a handler has returned, so
 * that nothing is claimed ahead of a listener that has not finished a message yet, many
 * while a backlog is due and the handlers are fast, and fewer as soon as they slow down
 * (a slow call weighs at once, a fast one gradually). On a quiet topic it changes
 * nothing: a claim takes only what is ready. Thread-safe.
 */
final class AdaptivePrefetch {

	/** How long a message claimed ahead should wait for a free handler at most. */
	static final Duration TARGET_WAIT = Duration.ofMillis(10);

	/** The weight of the last call in the average, as a power of two: 1/8. */
	private static final int WEIGHT_SHIFT = 3;

	private final int max;

	private final int concurrency;

	private final long targetWaitNanos;

	/**
	 * How long one handler takes per message, weighted to recent calls (ns); 0 until a
	 * handler returned.
	 */
	private final AtomicLong averageNanos = new AtomicLong();

	/**
	 * Creates the prefetch of one consumer.
	 * @param max the most messages claimed ahead (the configured prefetch); 0 for none
	 * @param concurrency the handler calls that run at once
	 * @param visibilityTimeout the lease of a claimed message
	 */
	AdaptivePrefetch(int max, int concurrency, Duration visibilityTimeout) {
		this.max = max;
		this.concurrency = concurrency;
		this.targetWaitNanos = Math.max(1,
				Math.min(Nanoseconds.of(TARGET_WAIT), Nanoseconds.of(visibilityTimeout) / 4));
	}

	/**
	 * A handler call returned.
	 * @param messages how many messages it handled
	 * @param nanos how long it took
	 */
	void handled(int messages, long nanos) {
		if (this.max == 0 || messages == 0) {
			return;
		}
		long perMessage = Math.max(1, nanos / messages);
		this.averageNanos.accumulateAndGet(perMessage, (average, sample) -> {
			if (average == 0 || sample >= average) {
				// The first call, or a slower one: weighs at once.
				return sample;
			}
			return average - Math.max(1, (average - sample) >> WEIGHT_SHIFT);
		});
	}

	/**
	 * @return how many claimed messages may wait for a free handler now
	 */
	int current() {
		long average = this.averageNanos.get();
		if (average == 0) {
			return 0;
		}
		long ahead = this.concurrency * this.targetWaitNanos / average;
		return (int) Math.min(this.max, ahead);
	}

}

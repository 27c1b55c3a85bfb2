package io.github.delayqueue.schedule;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.delayqueue.store.MessageStore;

/**
 * A {@link SchedulePoller} whose regular look is {@link #INTERVAL} away instead of a
 * second: it looks sooner only for a tick it knows is due within the second, or when it
 * is woken up. A tick delivered within seconds of a change thus proves that the change
 * woke it up.
 */
public class SlowSchedulePoller extends SchedulePoller {

	/** The time between two regular looks. */
	public static final Duration INTERVAL = Duration.ofMinutes(10);

	private final AtomicInteger looks = new AtomicInteger();

	/**
	 * Creates the poller, with no declared schedule.
	 * @param messages the store
	 */
	public SlowSchedulePoller(MessageStore messages) {
		super(messages, List.of());
	}

	@Override
	long pollOnce() {
		long wait = super.pollOnce();
		this.looks.incrementAndGet();
		return (wait < POLL_MILLIS) ? wait : INTERVAL.toMillis();
	}

	/**
	 * @return the looks finished so far
	 */
	public int looks() {
		return this.looks.get();
	}

}

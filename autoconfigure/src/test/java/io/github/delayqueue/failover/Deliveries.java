package io.github.delayqueue.failover;

import java.time.Duration;
import java.util.Collection;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import io.github.delayqueue.store.TopicStats;

/**
 * What a failover test's listeners received, around the moment the test killed a Redis
 * node: messages are numbered in send order, and a message numbered from
 * {@link #killed(int)}'s sequence on was sent after the kill.
 */
final class Deliveries {

	private final Map<String, AtomicInteger> counts = new ConcurrentHashMap<>();

	private final AtomicLong firstAfterKillNanos = new AtomicLong();

	private volatile long killedAtNanos;

	private volatile int firstSequenceAfterKill = Integer.MAX_VALUE;

	/**
	 * Notes that the node is being killed now, before the message of this sequence.
	 */
	void killed(int sequence) {
		this.firstSequenceAfterKill = sequence;
		this.killedAtNanos = System.nanoTime();
	}

	boolean isKilled() {
		return this.killedAtNanos != 0;
	}

	void delivered(String id, int sequence) {
		this.counts.computeIfAbsent(id, (key) -> new AtomicInteger()).incrementAndGet();
		if (sequence >= this.firstSequenceAfterKill) {
			this.firstAfterKillNanos.compareAndSet(0, System.nanoTime());
		}
	}

	int delivered() {
		return this.counts.size();
	}

	long lost(Collection<String> acknowledged) {
		return acknowledged.stream().filter((id) -> !this.counts.containsKey(id)).count();
	}

	long duplicated() {
		return this.counts.values().stream().filter((count) -> count.get() > 1).count();
	}

	/**
	 * @return milliseconds from the kill to the first delivery of a message sent after
	 * it, -1 if none came
	 */
	long firstDeliveryAfterKillMillis() {
		return millisAfterKill(this.firstAfterKillNanos.get());
	}

	long millisAfterKill(long nanos) {
		return (nanos == 0) ? -1 : Duration.ofNanos(nanos - this.killedAtNanos).toMillis();
	}

	/** Every message handled: the tests send only messages due within a second. */
	static boolean isSettled(TopicStats stats) {
		return stats.scheduled() == 0 && stats.ready() == 0 && stats.inFlight() == 0;
	}

	static void pause(long millis) {
		try {
			Thread.sleep(millis);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

}

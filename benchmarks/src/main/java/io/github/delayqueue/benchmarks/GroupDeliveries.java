package io.github.delayqueue.benchmarks;

import java.time.Clock;
import java.time.Instant;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * What consumers received in one phase of the group concurrency scenario: the messages of
 * {@code groups} groups with {@code perGroup} messages each, message {@code j} of group
 * {@code g} carrying the sequence {@code first + j * groups + g} and due {@code j} ms
 * after the first of its group. For each group, how many of its messages were being
 * handled at once (the most), and how often one was handled after a later-due one of its
 * group had started (an order violation); for each message how often it arrived and
 * whether before its due time. Thread-safe.
 */
final class GroupDeliveries implements PayloadHandler {

	private static final Clock CLOCK = Clock.systemUTC();

	private final int first;

	private final int groups;

	private final int perGroup;

	private final AtomicIntegerArray counts;

	private final AtomicIntegerArray handling;

	private final AtomicIntegerArray latestStarted;

	private final AtomicInteger mostAtOnce = new AtomicInteger();

	private final AtomicLong groupsOverOne = new AtomicLong();

	private final AtomicIntegerArray overOne;

	private final AtomicLong orderViolations = new AtomicLong();

	private final AtomicLong distinct = new AtomicLong();

	private final AtomicLong early = new AtomicLong();

	private final AtomicLong strays = new AtomicLong();

	private final AtomicLong lastArrivalMillis = new AtomicLong();

	private final long workNanos;

	/**
	 * Makes room for a phase.
	 * @param first the sequence of the phase's first message
	 * @param groups how many groups
	 * @param perGroup how many messages each group has
	 * @param workNanos how long the handler waits (parked) before it returns, 0 for not
	 * at all
	 */
	GroupDeliveries(int first, int groups, int perGroup, long workNanos) {
		this.first = first;
		this.groups = groups;
		this.perGroup = perGroup;
		this.counts = new AtomicIntegerArray(groups * perGroup);
		this.handling = new AtomicIntegerArray(groups);
		this.overOne = new AtomicIntegerArray(groups);
		this.latestStarted = new AtomicIntegerArray(groups);
		for (int g = 0; g < groups; g++) {
			this.latestStarted.set(g, -1);
		}
		this.workNanos = workNanos;
	}

	/**
	 * @param index the message's index in the phase, {@code j * groups + g}
	 * @return its sequence in the payload
	 */
	int sequence(int index) {
		return this.first + index;
	}

	/**
	 * @param index the message's index in the phase
	 * @return the name of its group
	 */
	String group(int index) {
		return "g-" + (index % this.groups);
	}

	/**
	 * @param index the message's index in the phase
	 * @return how many ms after the first of its group it is due
	 */
	int offsetMillis(int index) {
		return index / this.groups;
	}

	int messages() {
		return this.counts.length();
	}

	@Override
	public void handle(String payload) {
		Instant now = CLOCK.instant();
		int index = Payloads.sequence(payload) - this.first;
		if (index < 0 || index >= this.counts.length()) {
			// A message of an earlier phase, handled again after that phase ended.
			this.strays.incrementAndGet();
			return;
		}
		int group = index % this.groups;
		int rank = index / this.groups;
		int atOnce = this.handling.incrementAndGet(group);
		try {
			this.mostAtOnce.accumulateAndGet(atOnce, Math::max);
			if (atOnce > 1 && this.overOne.compareAndSet(group, 0, 1)) {
				this.groupsOverOne.incrementAndGet();
			}
			int latest = this.latestStarted.getAndAccumulate(group, rank, Math::max);
			if (latest > rank) {
				this.orderViolations.incrementAndGet();
			}
			if (this.counts.getAndIncrement(index) == 0) {
				if (now.toEpochMilli() < Payloads.dueAtMillis(payload)) {
					this.early.incrementAndGet();
				}
				this.lastArrivalMillis.accumulateAndGet(now.toEpochMilli(), Math::max);
				this.distinct.incrementAndGet();
			}
			if (this.workNanos > 0) {
				LockSupport.parkNanos(this.workNanos);
			}
		}
		finally {
			this.handling.decrementAndGet(group);
		}
	}

	long delivered() {
		return this.distinct.get();
	}

	boolean complete() {
		return this.distinct.get() == this.counts.length();
	}

	long lastArrivalMillis() {
		return this.lastArrivalMillis.get();
	}

	/**
	 * @return the most messages of one group handled at once
	 */
	int mostAtOnce() {
		return this.mostAtOnce.get();
	}

	/**
	 * @return how many groups had two or more messages handled at once
	 */
	long groupsOverOne() {
		return this.groupsOverOne.get();
	}

	/**
	 * @return how many messages started after a later-due one of their group had started
	 */
	long orderViolations() {
		return this.orderViolations.get();
	}

	long early() {
		return this.early.get();
	}

	long strays() {
		return this.strays.get();
	}

	long duplicates() {
		long duplicates = 0;
		for (int i = 0; i < this.counts.length(); i++) {
			duplicates += Math.max(0, this.counts.get(i) - 1);
		}
		return duplicates;
	}

	int groups() {
		return this.groups;
	}

	int perGroup() {
		return this.perGroup;
	}

}

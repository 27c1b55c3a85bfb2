package io.github.delayqueue.benchmarks;

import java.time.Clock;
import java.time.Instant;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What consumers received in one phase of the groups scenario: a burst of messages
 * (sequences 0 to {@code burst - 1}) and the small groups' steady stream beside it (the
 * sequences after the burst's); for each message how often it arrived, its due time and
 * how late it was handled, and when the last of the burst arrived. Thread-safe.
 */
final class BurstDeliveries implements PayloadHandler {

	private static final Clock CLOCK = Clock.systemUTC();

	private final int burst;

	private final AtomicIntegerArray counts;

	private final long[] dueMillis;

	private final long[] latenessMicros;

	private final AtomicLong burstDistinct = new AtomicLong();

	private final AtomicLong smallDistinct = new AtomicLong();

	private final AtomicLong lastBurstArrivalMillis = new AtomicLong();

	private final AtomicLong strays = new AtomicLong();

	/**
	 * Makes room for a phase.
	 * @param burst how many messages the burst has
	 * @param small the most messages the small groups may send
	 */
	BurstDeliveries(int burst, int small) {
		this.burst = burst;
		this.counts = new AtomicIntegerArray(burst + small);
		this.dueMillis = new long[burst + small];
		this.latenessMicros = new long[burst + small];
	}

	@Override
	public void handle(String payload) {
		Instant now = CLOCK.instant();
		int sequence = Payloads.sequence(payload);
		if (sequence >= this.counts.length()) {
			// A message of an earlier phase, handled again after that phase ended.
			this.strays.incrementAndGet();
			return;
		}
		if (this.counts.getAndIncrement(sequence) == 0) {
			long due = Payloads.dueAtMillis(payload);
			this.dueMillis[sequence] = due;
			this.latenessMicros[sequence] = now.getEpochSecond() * 1_000_000 + now.getNano() / 1000 - due * 1000;
			if (sequence < this.burst) {
				this.lastBurstArrivalMillis.accumulateAndGet(now.toEpochMilli(), Math::max);
				this.burstDistinct.incrementAndGet();
			}
			else {
				this.smallDistinct.incrementAndGet();
			}
		}
	}

	/**
	 * @return the first sequence of the small groups' messages
	 */
	int firstSmall() {
		return this.burst;
	}

	/**
	 * @return how many sequences the small groups may use
	 */
	int smallCapacity() {
		return this.counts.length() - this.burst;
	}

	long burstDelivered() {
		return this.burstDistinct.get();
	}

	boolean burstComplete() {
		return this.burstDistinct.get() == this.burst;
	}

	long smallDelivered() {
		return this.smallDistinct.get();
	}

	/**
	 * @return when the last new message of the burst arrived, epoch milliseconds; 0 if
	 * none did
	 */
	long lastBurstArrivalMillis() {
		return this.lastBurstArrivalMillis.get();
	}

	/**
	 * @return how many messages arrived whose sequence is not one of this phase's: an
	 * earlier phase's, handled again after that phase ended
	 */
	long strays() {
		return this.strays.get();
	}

	/**
	 * @param from the first sequence
	 * @param to the sequence after the last
	 * @return how many times messages of the range arrived more than once
	 */
	long duplicates(int from, int to) {
		long duplicates = 0;
		for (int i = from; i < to; i++) {
			duplicates += Math.max(0, this.counts.get(i) - 1);
		}
		return duplicates;
	}

	/**
	 * @param from the first sequence
	 * @param to the sequence after the last
	 * @return how many messages of the range arrived before their due time
	 */
	long early(int from, int to) {
		long early = 0;
		for (int i = from; i < to; i++) {
			if (this.counts.get(i) > 0 && this.latenessMicros[i] < 0) {
				early++;
			}
		}
		return early;
	}

	/**
	 * The lateness of the delivered messages of a range that were due within a window,
	 * sorted.
	 * @param from the first sequence
	 * @param to the sequence after the last
	 * @param dueFromMillis the window's start, epoch milliseconds, included
	 * @param dueToMillis the window's end, epoch milliseconds, included
	 * @return microseconds, lowest first
	 */
	long[] sortedLatenessMicros(int from, int to, long dueFromMillis, long dueToMillis) {
		long[] lateness = new long[to - from];
		int n = 0;
		for (int i = from; i < to; i++) {
			if (this.counts.get(i) > 0 && this.dueMillis[i] >= dueFromMillis && this.dueMillis[i] <= dueToMillis) {
				lateness[n++] = this.latenessMicros[i];
			}
		}
		long[] sorted = Arrays.copyOf(lateness, n);
		Arrays.sort(sorted);
		return sorted;
	}

	/**
	 * @param sortedMicros lateness, lowest first
	 * @param percentile for example 99
	 * @return the lateness below which that share of the messages arrived, ms; NaN if
	 * there are none
	 */
	static double percentileMillis(long[] sortedMicros, double percentile) {
		if (sortedMicros.length == 0) {
			return Double.NaN;
		}
		int index = (int) Math.ceil(percentile / 100.0 * sortedMicros.length) - 1;
		return sortedMicros[Math.max(0, Math.min(sortedMicros.length - 1, index))] / 1000.0;
	}

}

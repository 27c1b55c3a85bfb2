package io.github.delayqueue.benchmarks;

import java.time.Clock;
import java.time.Instant;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What consumers received in one phase: how often each message arrived, how late (to the
 * microsecond, against the due time the producer wrote in the payload), and when the last
 * new one arrived. Thread-safe.
 */
final class Deliveries implements PayloadHandler {

	private static final Clock CLOCK = Clock.systemUTC();

	private final AtomicIntegerArray counts;

	private final long[] latenessMicros;

	private final AtomicLong distinct = new AtomicLong();

	private volatile long lastArrivalMillis;

	Deliveries(int messages) {
		this.counts = new AtomicIntegerArray(messages);
		this.latenessMicros = new long[messages];
	}

	@Override
	public void handle(String payload) {
		Instant now = CLOCK.instant();
		int sequence = Payloads.sequence(payload);
		if (this.counts.getAndIncrement(sequence) == 0) {
			long nowMicros = now.getEpochSecond() * 1_000_000 + now.getNano() / 1000;
			this.latenessMicros[sequence] = nowMicros - Payloads.dueAtMillis(payload) * 1000;
			this.lastArrivalMillis = now.toEpochMilli();
			this.distinct.incrementAndGet();
		}
	}

	long distinct() {
		return this.distinct.get();
	}

	boolean complete() {
		return this.distinct.get() == this.counts.length();
	}

	long lastArrivalMillis() {
		return this.lastArrivalMillis;
	}

	long lost() {
		return this.counts.length() - this.distinct.get();
	}

	long duplicates() {
		long duplicates = 0;
		for (int i = 0; i < this.counts.length(); i++) {
			duplicates += Math.max(0, this.counts.get(i) - 1);
		}
		return duplicates;
	}

	/**
	 * @return how many messages arrived before their due time
	 */
	long early() {
		long early = 0;
		for (int i = 0; i < this.counts.length(); i++) {
			if (this.counts.get(i) > 0 && this.latenessMicros[i] < 0) {
				early++;
			}
		}
		return early;
	}

	/**
	 * The lateness below which a share of the delivered messages arrived.
	 * @param percentile for example 99.9
	 * @return milliseconds
	 */
	double latenessMillis(double percentile) {
		long[] delivered = new long[(int) distinct()];
		int n = 0;
		for (int i = 0; i < this.counts.length() && n < delivered.length; i++) {
			if (this.counts.get(i) > 0) {
				delivered[n++] = this.latenessMicros[i];
			}
		}
		if (n == 0) {
			return Double.NaN;
		}
		Arrays.sort(delivered, 0, n);
		int index = (int) Math.ceil(percentile / 100.0 * n) - 1;
		return delivered[Math.max(0, Math.min(n - 1, index))] / 1000.0;
	}

	/**
	 * The counts and lateness percentiles of a phase, for its report line.
	 * @return delivered, lost, duplicates, early, and p50, p99, p99.9 and max lateness in
	 * ms
	 */
	Map<String, Object> summary() {
		Map<String, Object> summary = new LinkedHashMap<>();
		summary.put("delivered", distinct());
		summary.put("lost", lost());
		summary.put("duplicates", duplicates());
		summary.put("early", early());
		summary.put("p50_ms", latenessMillis(50));
		summary.put("p99_ms", latenessMillis(99));
		summary.put("p999_ms", latenessMillis(99.9));
		summary.put("max_ms", latenessMillis(100));
		return summary;
	}

}

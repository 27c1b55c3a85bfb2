package io.github.delayqueue.runtime.consumer;

import java.time.Instant;
import java.util.List;

import io.github.delayqueue.store.ClaimResult;
import io.github.delayqueue.store.ClaimedMessage;

/**
 * A message this application is handling, with the lease it holds. Its lease token, given
 * by the claim, is the proof of the lease in Redis and never changes. Every use of the
 * lease (extend, ack, retry, dead-letter, hand back) happens while holding this object's
 * monitor, and the first of them that ends the lease marks the message
 * {@link #isSettled() settled}.
 */
final class InFlightMessage {

	private final ClaimedMessage claimed;

	private final long startedNanos = System.nanoTime();

	private boolean settled;

	private boolean overdueReported;

	InFlightMessage(ClaimedMessage claimed) {
		this.claimed = claimed;
	}

	/**
	 * @return the messages a claim leased, in its order
	 */
	static List<InFlightMessage> of(ClaimResult result) {
		return result.messages().stream().map(InFlightMessage::new).toList();
	}

	String id() {
		return this.claimed.id();
	}

	ClaimedMessage claimed() {
		return this.claimed;
	}

	String leaseToken() {
		return this.claimed.leaseToken();
	}

	/**
	 * @return the Redis clock now, estimated from the claim time and the local time since
	 */
	Instant redisClock() {
		return this.claimed.claimedAt().plusNanos(System.nanoTime() - this.startedNanos);
	}

	long handlingNanos() {
		return System.nanoTime() - this.startedNanos;
	}

	boolean isSettled() {
		return this.settled;
	}

	void settle() {
		this.settled = true;
	}

	/**
	 * @return {@code true} the first time only
	 */
	boolean reportOverdue() {
		boolean first = !this.overdueReported;
		this.overdueReported = true;
		return first;
	}

}

package io.github.delayqueue.store;

import java.util.List;

/**
 * The outcome of one lease-expiry call.
 *
 * @param requeued ids whose lease expired and that are ready again
 * @param deadLettered ids whose lease expired on their last attempt
 * @param nextExpiryInMillis ms until the next lease ends, -1 if nothing is in flight
 */
public record LeaseExpiryResult(List<String> requeued, List<String> deadLettered, long nextExpiryInMillis) {

	/** @return how many leases expired */
	public int expired() {
		return this.requeued.size() + this.deadLettered.size();
	}

}

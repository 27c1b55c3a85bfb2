package io.github.delayqueue.store;

import java.time.Duration;
import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * The outcome of one lease-expiry call.
 *
 * @param requeued ids whose lease expired and that are ready again
 * @param deadLettered ids whose lease expired on their last attempt
 * @param nextExpiryIn how long until the next lease ends, or {@code null} if nothing is
 * in flight
 */
public record LeaseExpiryResult(List<String> requeued, List<String> deadLettered, @Nullable Duration nextExpiryIn) {

	/**
	 * @return how many leases expired
	 */
	public int expired() {
		return this.requeued.size() + this.deadLettered.size();
	}

}

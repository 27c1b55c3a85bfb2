package io.github.delayqueue.store;

import java.time.Duration;
import java.time.Instant;

/**
 * A message leased to this consumer by a claim, still in its stored form.
 *
 * @param id the message id
 * @param leaseToken the proof of the lease for ack, retry, dead-letter, release and
 * extension; it stays the same when the lease is extended
 * @param leaseDeadlineMillis the lease deadline (epoch ms)
 * @param claimedAt when it was claimed, by the Redis clock (to the microsecond)
 * @param stored the stored value, decoded with
 * {@link MessageFormat#decode(String, byte[])}
 */
public record ClaimedMessage(String id, String leaseToken, long leaseDeadlineMillis, Instant claimedAt, byte[] stored) {

	/**
	 * How long after the claim the message is due, by the Redis clock.
	 * @return zero or less if it was already due; zero if its header is unreadable
	 */
	public Duration dueIn() {
		long dueAt = MessageFormat.dueAtMillis(this.stored);
		return (dueAt < 0) ? Duration.ZERO : Duration.between(this.claimedAt, Instant.ofEpochMilli(dueAt));
	}

}

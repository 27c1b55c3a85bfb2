package io.github.delayqueue.store;

/**
 * A message leased to this consumer by a claim, still in its stored form.
 *
 * @param id the message id
 * @param leaseToken the proof of the lease for ack, retry, dead-letter, release and extension; it
 * stays the same when the lease is extended
 * @param leaseDeadline the lease deadline (epoch ms)
 * @param claimedAtMicros when it was claimed, by the Redis clock (epoch µs)
 * @param stored the stored value, decoded with {@link MessageFormat#decode(String, byte[])}
 */
public record ClaimedMessage(String id, String leaseToken, long leaseDeadline, long claimedAtMicros, byte[] stored) {

	/**
	 * How long after the claim the message is due, by the Redis clock.
	 * @return microseconds, zero or less if it was already due; zero if its header is unreadable
	 */
	public long dueInMicros() {
		long dueAt = MessageFormat.dueAtMillis(this.stored);
		return (dueAt < 0) ? 0 : dueAt * 1000 - this.claimedAtMicros;
	}

}

package io.github.delayqueue.store;

/**
 * A message leased to this consumer by a claim, still in its stored form.
 *
 * @param id the message id
 * @param leaseDeadline the lease deadline (epoch ms); also the proof of the lease for ack, retry
 * and dead-letter
 * @param claimedAt when it was claimed, by the Redis clock (epoch ms)
 * @param stored the stored value, decoded with {@link MessageFormat#decode(String, byte[])}
 */
public record ClaimedMessage(String id, long leaseDeadline, long claimedAt, byte[] stored) {
}

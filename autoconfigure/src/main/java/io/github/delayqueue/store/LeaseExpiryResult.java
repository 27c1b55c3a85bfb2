package io.github.delayqueue.store;

/**
 * The outcome of one lease-expiry call.
 *
 * @param requeued messages whose lease expired and that are ready again
 * @param deadLettered messages whose lease expired on their last attempt
 * @param nextExpiryInMillis ms until the next lease ends, -1 if nothing is in flight
 */
public record LeaseExpiryResult(int requeued, int deadLettered, long nextExpiryInMillis) {
}

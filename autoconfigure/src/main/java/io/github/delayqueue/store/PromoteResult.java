package io.github.delayqueue.store;

/**
 * The outcome of one promote call.
 *
 * @param moved messages moved from scheduled to ready
 * @param nextDueInMicros microseconds until the next scheduled message is due, 0 if one already is, -1 if
 * none is scheduled
 * @param nextLeaseEndInMicros microseconds until the earliest lease of the topic ends, 0 if one has
 * ended, -1 if nothing is in flight
 */
public record PromoteResult(int moved, long nextDueInMicros, long nextLeaseEndInMicros) {
}

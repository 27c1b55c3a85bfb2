package io.github.delayqueue.store;

import java.time.Duration;

import org.jspecify.annotations.Nullable;

/**
 * The outcome of one promote call.
 *
 * @param moved messages moved from scheduled to ready
 * @param nextDueIn how long until the next scheduled message is due, by the Redis clock
 * (zero if one already is), or {@code null} if none is scheduled
 * @param nextLeaseEndIn how long until the earliest lease of the topic ends (zero if one
 * has ended), or {@code null} if nothing is in flight
 * @param countAgreed whether the partition's count marker has the caller's number of
 * partitions: {@code false} when the topic's count changed, or a change of it is on its
 * way
 * @param readyWaiting whether a ready list of the partition held an id after the call
 * (possibly one a claim drops); {@code false} only when nothing was ready
 */
public record PromoteResult(int moved, @Nullable Duration nextDueIn, @Nullable Duration nextLeaseEndIn,
		boolean countAgreed, boolean readyWaiting) {
}

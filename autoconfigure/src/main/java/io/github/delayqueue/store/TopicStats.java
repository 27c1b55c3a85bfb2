package io.github.delayqueue.store;

import java.time.Duration;

/**
 * A topic's message counts and due times, all read at one instant of the Redis clock.
 *
 * @param nowMillis the Redis time of the reading (epoch ms)
 * @param scheduled messages waiting for their due time
 * @param ready messages due and waiting for a consumer
 * @param inFlight messages leased to a consumer
 * @param dead messages in the dead-letter set
 * @param nextDueMillis due time of the earliest scheduled message (epoch ms), -1 if none
 * is scheduled
 * @param oldestReadyDueMillis due time of the message at the head of the ready list
 * (epoch ms), -1 if none is ready
 */
public record TopicStats(long nowMillis, long scheduled, long ready, long inFlight, long dead, long nextDueMillis,
		long oldestReadyDueMillis) {

	/**
	 * How late the longest-waiting message is: Redis time minus the due time of the
	 * earliest message that is due but not yet claimed. That is the earliest scheduled
	 * message when it is already due (no broker has moved it yet), or the message at the
	 * head of the ready list (moved, and waiting for a consumer), whichever is older; a
	 * message handed back after a lease expiry keeps its first due time, so the time it
	 * spent in flight counts too.
	 * @return the lateness, zero when nothing is due
	 */
	public Duration oldestLateness() {
		long oldestDue = Long.MAX_VALUE;
		if (this.nextDueMillis >= 0 && this.nextDueMillis <= this.nowMillis) {
			oldestDue = this.nextDueMillis;
		}
		if (this.oldestReadyDueMillis >= 0) {
			oldestDue = Math.min(oldestDue, this.oldestReadyDueMillis);
		}
		return (oldestDue == Long.MAX_VALUE) ? Duration.ZERO
				: Duration.ofMillis(Math.max(0, this.nowMillis - oldestDue));
	}

	/**
	 * Adds the stats of another partition of the same topic.
	 * @param other the other partition's stats
	 * @return the counts added, the later reading time and the earlier due times
	 */
	public TopicStats plus(TopicStats other) {
		return new TopicStats(Math.max(this.nowMillis, other.nowMillis), this.scheduled + other.scheduled,
				this.ready + other.ready, this.inFlight + other.inFlight, this.dead + other.dead,
				earliest(this.nextDueMillis, other.nextDueMillis),
				earliest(this.oldestReadyDueMillis, other.oldestReadyDueMillis));
	}

	private static long earliest(long millis, long otherMillis) {
		if (millis < 0) {
			return otherMillis;
		}
		return (otherMillis < 0) ? millis : Math.min(millis, otherMillis);
	}

}

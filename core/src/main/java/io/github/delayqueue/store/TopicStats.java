package io.github.delayqueue.store;

import java.time.Duration;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

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
 * @param readyByPriority ready messages of each priority that has some, empty while the
 * topic uses no priority above 0; the count of a priority above 0 is the length of its
 * ready list, ids that claim will drop (cancelled or rescheduled since) included, and
 * priority 0 has the rest of {@code ready}
 * @param rememberedIds ids of handled messages remembered for their deduplication window
 * @param groupsWithReady the groups that have ready messages, 0 while none has
 * @param busiestGroups the ready messages of the groups that have the most (up to
 * {@value #BUSIEST_GROUPS}, most first; members left by a cancel included), read from the
 * first 2,000 groups: empty while no group has ready messages
 * @param busiestInFlight the messages in flight of the groups that have the most (up to
 * {@value #BUSIEST_GROUPS}, most first, ties by name), read from the first 2,000 groups
 * with messages in flight: empty while no message of a group is in flight
 * @param pausedGroups the groups paused at the reading (see {@code DelayQueueGroups})
 * @param firstPausesToEnd the paused groups whose pauses end first (up to
 * {@value #BUSIEST_GROUPS}), each with when its pause ends (epoch ms; 0 for a pause until
 * it is resumed, which come last)
 */
public record TopicStats(long nowMillis, long scheduled, long ready, long inFlight, long dead, long nextDueMillis,
		long oldestReadyDueMillis, Map<Integer, Long> readyByPriority, long rememberedIds, long groupsWithReady,
		Map<String, Long> busiestGroups, Map<String, Long> busiestInFlight, long pausedGroups,
		Map<String, Long> firstPausesToEnd) {

	/** The most groups {@link #busiestGroups()} names. */
	public static final int BUSIEST_GROUPS = 10;

	/**
	 * Keeps an unmodifiable copy of the counts by priority, in priority order.
	 * @param nowMillis the Redis time of the reading
	 * @param scheduled messages waiting for their due time
	 * @param ready messages due and waiting for a consumer
	 * @param inFlight messages leased to a consumer
	 * @param dead messages in the dead-letter set
	 * @param nextDueMillis due time of the earliest scheduled message, or -1
	 * @param oldestReadyDueMillis due time of the oldest ready message, or -1
	 * @param readyByPriority ready messages of each priority that has some
	 * @param rememberedIds ids remembered for their deduplication window
	 * @param groupsWithReady the groups that have ready messages
	 * @param busiestGroups the ready messages of the groups that have the most
	 * @param busiestInFlight the messages in flight of the groups that have the most
	 * @param pausedGroups the groups paused at the reading
	 * @param firstPausesToEnd the paused groups whose pauses end first, with their ends
	 */
	public TopicStats {
		readyByPriority = Collections.unmodifiableMap(new TreeMap<>(readyByPriority));
		busiestGroups = Collections.unmodifiableMap(new LinkedHashMap<>(busiestGroups));
		busiestInFlight = Collections.unmodifiableMap(new LinkedHashMap<>(busiestInFlight));
		firstPausesToEnd = Collections.unmodifiableMap(new LinkedHashMap<>(firstPausesToEnd));
	}

	/**
	 * Stats that name no paused group.
	 * @param nowMillis the Redis time of the reading
	 * @param scheduled messages waiting for their due time
	 * @param ready messages due and waiting for a consumer
	 * @param inFlight messages leased to a consumer
	 * @param dead messages in the dead-letter set
	 * @param nextDueMillis due time of the earliest scheduled message, or -1
	 * @param oldestReadyDueMillis due time of the oldest ready message, or -1
	 * @param readyByPriority ready messages of each priority that has some
	 * @param rememberedIds ids remembered for their deduplication window
	 * @param groupsWithReady the groups that have ready messages
	 * @param busiestGroups the ready messages of the groups that have the most
	 * @param busiestInFlight the messages in flight of the groups that have the most
	 */
	public TopicStats(long nowMillis, long scheduled, long ready, long inFlight, long dead, long nextDueMillis,
			long oldestReadyDueMillis, Map<Integer, Long> readyByPriority, long rememberedIds, long groupsWithReady,
			Map<String, Long> busiestGroups, Map<String, Long> busiestInFlight) {
		this(nowMillis, scheduled, ready, inFlight, dead, nextDueMillis, oldestReadyDueMillis, readyByPriority,
				rememberedIds, groupsWithReady, busiestGroups, busiestInFlight, 0, Map.of());
	}

	/**
	 * Stats that name no group's messages in flight.
	 * @param nowMillis the Redis time of the reading
	 * @param scheduled messages waiting for their due time
	 * @param ready messages due and waiting for a consumer
	 * @param inFlight messages leased to a consumer
	 * @param dead messages in the dead-letter set
	 * @param nextDueMillis due time of the earliest scheduled message, or -1
	 * @param oldestReadyDueMillis due time of the oldest ready message, or -1
	 * @param readyByPriority ready messages of each priority that has some
	 * @param rememberedIds ids remembered for their deduplication window
	 * @param groupsWithReady the groups that have ready messages
	 * @param busiestGroups the ready messages of the groups that have the most
	 */
	public TopicStats(long nowMillis, long scheduled, long ready, long inFlight, long dead, long nextDueMillis,
			long oldestReadyDueMillis, Map<Integer, Long> readyByPriority, long rememberedIds, long groupsWithReady,
			Map<String, Long> busiestGroups) {
		this(nowMillis, scheduled, ready, inFlight, dead, nextDueMillis, oldestReadyDueMillis, readyByPriority,
				rememberedIds, groupsWithReady, busiestGroups, Map.of());
	}

	/**
	 * Stats of a topic whose messages have no group.
	 * @param nowMillis the Redis time of the reading
	 * @param scheduled messages waiting for their due time
	 * @param ready messages due and waiting for a consumer
	 * @param inFlight messages leased to a consumer
	 * @param dead messages in the dead-letter set
	 * @param nextDueMillis due time of the earliest scheduled message, or -1
	 * @param oldestReadyDueMillis due time of the oldest ready message, or -1
	 * @param readyByPriority ready messages of each priority that has some
	 * @param rememberedIds ids remembered for their deduplication window
	 */
	public TopicStats(long nowMillis, long scheduled, long ready, long inFlight, long dead, long nextDueMillis,
			long oldestReadyDueMillis, Map<Integer, Long> readyByPriority, long rememberedIds) {
		this(nowMillis, scheduled, ready, inFlight, dead, nextDueMillis, oldestReadyDueMillis, readyByPriority,
				rememberedIds, 0, Map.of());
	}

	/**
	 * Stats of a topic that remembers no id.
	 * @param nowMillis the Redis time of the reading
	 * @param scheduled messages waiting for their due time
	 * @param ready messages due and waiting for a consumer
	 * @param inFlight messages leased to a consumer
	 * @param dead messages in the dead-letter set
	 * @param nextDueMillis due time of the earliest scheduled message, or -1
	 * @param oldestReadyDueMillis due time of the oldest ready message, or -1
	 * @param readyByPriority ready messages of each priority that has some
	 */
	public TopicStats(long nowMillis, long scheduled, long ready, long inFlight, long dead, long nextDueMillis,
			long oldestReadyDueMillis, Map<Integer, Long> readyByPriority) {
		this(nowMillis, scheduled, ready, inFlight, dead, nextDueMillis, oldestReadyDueMillis, readyByPriority, 0);
	}

	/**
	 * Stats of a topic that uses no priority above 0.
	 * @param nowMillis the Redis time of the reading
	 * @param scheduled messages waiting for their due time
	 * @param ready messages due and waiting for a consumer
	 * @param inFlight messages leased to a consumer
	 * @param dead messages in the dead-letter set
	 * @param nextDueMillis due time of the earliest scheduled message, or -1
	 * @param oldestReadyDueMillis due time of the oldest ready message, or -1
	 */
	public TopicStats(long nowMillis, long scheduled, long ready, long inFlight, long dead, long nextDueMillis,
			long oldestReadyDueMillis) {
		this(nowMillis, scheduled, ready, inFlight, dead, nextDueMillis, oldestReadyDueMillis, Map.of());
	}

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
		Map<Integer, Long> byPriority = new TreeMap<>(this.readyByPriority);
		if (!this.readyByPriority.isEmpty() || !other.readyByPriority.isEmpty()) {
			byPriority.merge(0, 0L, Long::sum);
			other.readyByPriority.forEach((priority, count) -> byPriority.merge(priority, count, Long::sum));
			byPriority.put(0,
					Math.max(0,
							this.ready + other.ready
									- byPriority.entrySet()
										.stream()
										.filter((entry) -> entry.getKey() > 0)
										.mapToLong(Map.Entry::getValue)
										.sum()));
		}
		Map<String, Long> byGroup = new HashMap<>(this.busiestGroups);
		other.busiestGroups.forEach((group, count) -> byGroup.merge(group, count, Long::sum));
		Map<String, Long> inFlightByGroup = new HashMap<>(this.busiestInFlight);
		other.busiestInFlight.forEach((group, count) -> inFlightByGroup.merge(group, count, Long::sum));
		return new TopicStats(Math.max(this.nowMillis, other.nowMillis), this.scheduled + other.scheduled,
				this.ready + other.ready, this.inFlight + other.inFlight, this.dead + other.dead,
				earliest(this.nextDueMillis, other.nextDueMillis),
				earliest(this.oldestReadyDueMillis, other.oldestReadyDueMillis), byPriority,
				this.rememberedIds + other.rememberedIds, this.groupsWithReady + other.groupsWithReady,
				busiest(byGroup), busiest(inFlightByGroup), this.pausedGroups + other.pausedGroups,
				firstToEnd(this.firstPausesToEnd, other.firstPausesToEnd));
	}

	/**
	 * The pauses of two partitions that end first, those until resumed (0) last.
	 */
	private static Map<String, Long> firstToEnd(Map<String, Long> one, Map<String, Long> other) {
		Map<String, Long> all = new HashMap<>(one);
		other.forEach((group, end) -> all.merge(group, end, (a, b) -> (a == 0 || b == 0) ? 0 : Math.max(a, b)));
		Map<String, Long> first = new LinkedHashMap<>();
		all.entrySet()
			.stream()
			.sorted(Map.Entry
				.<String, Long>comparingByValue(
						(a, b) -> Long.compare((a == 0) ? Long.MAX_VALUE : a, (b == 0) ? Long.MAX_VALUE : b))
				.thenComparing(Map.Entry.comparingByKey()))
			.limit(BUSIEST_GROUPS)
			.forEach((entry) -> first.put(entry.getKey(), entry.getValue()));
		return first;
	}

	/**
	 * The groups with the most messages (ready, or in flight), most first (ties by name).
	 * @param readyByGroup messages of each group
	 * @return up to {@value #BUSIEST_GROUPS} of them, in that order
	 */
	public static Map<String, Long> busiest(Map<String, Long> readyByGroup) {
		Map<String, Long> busiest = new LinkedHashMap<>();
		readyByGroup.entrySet()
			.stream()
			.sorted(Map.Entry.<String, Long>comparingByValue().reversed().thenComparing(Map.Entry.comparingByKey()))
			.limit(BUSIEST_GROUPS)
			.forEach((entry) -> busiest.put(entry.getKey(), entry.getValue()));
		return busiest;
	}

	/**
	 * Counts ready messages by priority from the lengths of the ready lists of priorities
	 * 1 to 9; priority 0 gets the rest of {@code ready}.
	 * @param ready the ready messages of all priorities
	 * @param listLengths the length of the ready list of each priority from 1 up, empty
	 * while the topic uses no priority
	 * @return the counts of the priorities that have ready messages, and always of 0
	 * while the topic uses priorities; empty while it uses none
	 */
	public static Map<Integer, Long> byPriority(long ready, List<Long> listLengths) {
		Map<Integer, Long> counts = new TreeMap<>();
		if (listLengths.isEmpty()) {
			return counts;
		}
		long prioritized = 0;
		for (int priority = 1; priority <= listLengths.size(); priority++) {
			long length = listLengths.get(priority - 1);
			if (length > 0) {
				counts.put(priority, length);
				prioritized += length;
			}
		}
		counts.put(0, Math.max(0, ready - prioritized));
		return counts;
	}

	private static long earliest(long millis, long otherMillis) {
		if (millis < 0) {
			return otherMillis;
		}
		return (otherMillis < 0) ? millis : Math.min(millis, otherMillis);
	}

}

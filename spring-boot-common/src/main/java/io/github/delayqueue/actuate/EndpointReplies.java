package io.github.delayqueue.actuate;

import java.time.Instant;
import java.time.ZoneOffset;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

import io.github.delayqueue.actuate.DelayQueueEndpoint.GroupDescriptor;
import io.github.delayqueue.actuate.DelayQueueEndpoint.ListenerDescriptor;
import io.github.delayqueue.actuate.DelayQueueEndpoint.MessageEntry;
import io.github.delayqueue.actuate.DelayQueueEndpoint.PageDescriptor;
import io.github.delayqueue.actuate.DelayQueueEndpoint.ScheduleDescriptor;
import io.github.delayqueue.actuate.DelayQueueEndpoint.TopicDescriptor;
import io.github.delayqueue.schedule.Schedule;
import io.github.delayqueue.schedule.ScheduleTrigger;
import io.github.delayqueue.schedule.ScheduleInfo;
import io.github.delayqueue.store.GroupView;
import io.github.delayqueue.store.MessageState;
import io.github.delayqueue.store.MessageSummary;
import io.github.delayqueue.store.PartialStats.PartitionFailure;
import io.github.delayqueue.store.TopicPartitions;
import io.github.delayqueue.store.TopicStats;
import org.jspecify.annotations.Nullable;

/**
 * The replies of the {@code delayqueue} endpoint about topics, pages and schedules, as
 * the endpoint shows them: times as ISO-8601 instants, states in lower case with hyphens.
 * {@link MessageReplies} shows one message.
 */
final class EndpointReplies {

	private EndpointReplies() {
	}

	/**
	 * One topic.
	 * @param topic the topic, only when asked for by name
	 * @param partitions the number of partitions this application spreads it over
	 * @param stats its counts
	 * @param listener its listener here, if any
	 * @param page a page of its messages, only when asked for by name
	 * @param unreachable the partitions that did not answer, absent when all did
	 * @return the reply
	 */
	static TopicDescriptor topic(@Nullable String topic, int partitions, TopicStats stats,
			@Nullable ListenerDescriptor listener, @Nullable PageDescriptor page,
			@Nullable Map<String, String> unreachable) {
		return topic(topic, partitions, stats, listener, page, unreachable, null);
	}

	/**
	 * One topic, with one of its groups read by name.
	 * @param topic the topic, only when asked for by name
	 * @param partitions the number of partitions this application spreads it over
	 * @param stats its counts
	 * @param listener its listener here, if any
	 * @param page a page of its messages, only when asked for by name
	 * @param unreachable the partitions that did not answer, absent when all did
	 * @param group the group asked for by name, if any
	 * @return the reply
	 */
	static TopicDescriptor topic(@Nullable String topic, int partitions, TopicStats stats,
			@Nullable ListenerDescriptor listener, @Nullable PageDescriptor page,
			@Nullable Map<String, String> unreachable, @Nullable GroupView group) {
		return new TopicDescriptor(topic, partitions, stats.scheduled(), stats.ready(),
				stats.readyByPriority().isEmpty() ? null : stats.readyByPriority(), stats.inFlight(), stats.dead(),
				instant(stats.nextDueMillis()), stats.oldestLateness().toString(), listener, page,
				stats.rememberedIds(), unreachable, (stats.groupsWithReady() > 0) ? stats.groupsWithReady() : null,
				stats.busiestGroups().isEmpty() ? null : stats.busiestGroups(),
				stats.busiestInFlight().isEmpty() ? null : stats.busiestInFlight(),
				(group != null) ? group(group) : null, (stats.pausedGroups() > 0) ? stats.pausedGroups() : null,
				(stats.pausedGroups() > 0) ? pausesToEnd(stats.firstPausesToEnd()) : null);
	}

	/**
	 * The ends of the first pauses to end, as the endpoint shows them.
	 */
	private static Map<String, String> pausesToEnd(Map<String, Long> firstPausesToEnd) {
		Map<String, String> ends = new LinkedHashMap<>();
		firstPausesToEnd.forEach(
				(group, end) -> ends.put(group, (end > 0) ? Instant.ofEpochMilli(end).toString() : "until resumed"));
		return ends;
	}

	/**
	 * One group of a topic.
	 * @param group the group as read
	 * @return the reply
	 */
	static GroupDescriptor group(GroupView group) {
		return new GroupDescriptor(group.group(), group.ready(), group.inFlight(), group.waitingAtLimit(),
				group.paused(), (group.pausedUntil() != null) ? group.pausedUntil().toString() : null,
				group.firstReadyIds());
	}

	/**
	 * The server of a partition that did not answer, as the endpoint, the dashboard and
	 * the health group them.
	 * @param failure the partition
	 * @return its primary, as {@code host:port}, or {@code Redis} where the store does
	 * not tell (outside a Cluster there is one server)
	 */
	static String server(PartitionFailure failure) {
		return (failure.server() != null) ? failure.server() : "Redis";
	}

	/**
	 * The partitions that did not answer, as the endpoint shows them.
	 * @param failures the partitions that did not answer
	 * @return each partition with why and its primary, such as {@code Redis did not
	 * answer within 5s (primary 10.0.0.7:6379)}; {@code null} when there is none
	 */
	static @Nullable Map<String, String> unreachable(Map<String, PartitionFailure> failures) {
		if (failures.isEmpty()) {
			return null;
		}
		Map<String, String> unreachable = new LinkedHashMap<>();
		failures.forEach((partition, failure) -> unreachable.put(partition, failure.describe()));
		return unreachable;
	}

	/**
	 * A message of a page.
	 * @param summary the message
	 * @param partitions the number of partitions of its topic: above one, the entry names
	 * the message's partition (the one its id, or the id a dead letter's name stands for,
	 * routes to)
	 * @return the reply
	 */
	static MessageEntry entry(MessageSummary summary, int partitions) {
		return new MessageEntry(summary.id(), instant(summary.dueAtMillis()),
				(summary.attempts() >= 0) ? summary.attempts() : null, summary.priority(),
				(summary.state() == MessageState.IN_FLIGHT) ? instant(summary.score()) : null,
				(summary.state() == MessageState.DEAD) ? instant(summary.score()) : null, summary.lastError(),
				(partitions > 1) ? TopicPartitions.indexOf(summary.id(), partitions) : null);
	}

	/**
	 * One recurring schedule: the one place the endpoint reads a schedule's trigger, zone
	 * and misfire policy.
	 * @param info the schedule
	 * @return the reply
	 */
	static ScheduleDescriptor schedule(ScheduleInfo info) {
		Schedule schedule = info.schedule();
		ScheduleTrigger.Cron cron = (schedule.trigger() instanceof ScheduleTrigger.Cron c) ? c : null;
		return new ScheduleDescriptor(schedule.name(), schedule.topic(), (cron != null) ? cron.expression() : null,
				(schedule.trigger() instanceof ScheduleTrigger.FixedRate rate) ? rate.rate().toString() : null,
				(cron != null) ? cron.zone().getId() : ZoneOffset.UTC.getId(),
				schedule.misfire().name().toLowerCase(Locale.ROOT).replace('_', '-'),
				(info.nextFire() != null) ? info.nextFire().toString() : null, info.paused());
	}

	/**
	 * A state as the endpoint names it.
	 * @param state the state
	 * @return {@code scheduled}, {@code ready}, {@code in-flight} or {@code dead}
	 */
	static String stateName(MessageState state) {
		return state.name().toLowerCase(Locale.ROOT).replace('_', '-');
	}

	/**
	 * A time as the endpoint shows it.
	 * @param epochMillis the time, negative for none
	 * @return the time, ISO-8601, or {@code null} for none
	 */
	static @Nullable String instant(long epochMillis) {
		return (epochMillis >= 0) ? Instant.ofEpochMilli(epochMillis).toString() : null;
	}

}

package io.github.delayqueue.schedule;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.function.LongUnaryOperator;

import io.github.delayqueue.time.Durations;
import org.jspecify.annotations.Nullable;

/**
 * What a schedule whose next tick is due sends now, and its next tick. One due tick sent
 * within {@link Schedule#MISFIRE_THRESHOLD} of its time is on time and sent, and so are
 * several due ticks when the oldest is less than {@link #ON_TIME_GRACE} late (a fast
 * schedule whose poller is a moment behind). Otherwise the ticks are missed, all those
 * due now, and the schedule's {@link MisfirePolicy} decides what is sent for them: more
 * than one tick overdue is a misfire however recent they are, so a 5-second schedule back
 * after 40 seconds sends one message by {@link MisfirePolicy#FIRE_ONCE}, not 8. Planning
 * takes a bounded time however long the schedule was behind.
 *
 * @param ticks the ticks to send (epoch ms), oldest first
 * @param next the first tick after now (epoch ms), {@link Long#MAX_VALUE} for none
 * @param missed how many ticks were missed; more than {@link Schedule#MAX_MISSED_TICKS}
 * stands for any number above it
 * @param firstMissed the oldest missed tick (epoch ms), -1 when none was missed
 * @param lastMissed the latest missed tick (epoch ms), -1 when none was missed
 */
record TickPlan(List<Long> ticks, long next, long missed, long firstMissed, long lastMissed) {

	/**
	 * How late the oldest of several due ticks may be for all of them to count as on
	 * time: about the poller's interval.
	 */
	static final Duration ON_TIME_GRACE = Duration.ofSeconds(1);

	/** How far back the search for the last missed tick of a cron expression starts. */
	private static final long FIRST_SEARCH_SPAN_MILLIS = 60_000;

	/**
	 * Plans a due schedule.
	 * @param schedule the schedule
	 * @param dueTick its next tick, due by now (epoch ms)
	 * @param now the time (epoch ms, Redis clock)
	 * @return the plan
	 */
	static TickPlan of(Schedule schedule, long dueTick, long now) {
		LongUnaryOperator next = schedule.trigger().ticks();
		List<Long> due = new ArrayList<>();
		long tick = dueTick;
		while (tick <= now && due.size() < Schedule.MAX_MISSED_TICKS) {
			due.add(tick);
			tick = next.applyAsLong(tick);
		}
		long dueCount = due.size();
		if (tick <= now) {
			// More due ticks than any policy sends: on to the last of them, which takes
			// the place of the last kept.
			tick = lastBefore(schedule, next, tick, now + 1);
			due.set(due.size() - 1, tick);
			dueCount = Schedule.MAX_MISSED_TICKS + 1;
			tick = next.applyAsLong(tick);
		}
		if (due.isEmpty()) {
			return new TickPlan(List.of(), tick, 0, -1, -1);
		}
		long late = now - dueTick;
		boolean misfire = (dueCount == 1) ? late > Schedule.MISFIRE_THRESHOLD.toMillis()
				: late > ON_TIME_GRACE.toMillis();
		if (!misfire) {
			return new TickPlan(List.copyOf(due), tick, 0, -1, -1);
		}
		long last = due.get(due.size() - 1);
		List<Long> ticks = switch (schedule.misfire()) {
			case FIRE_ONCE -> List.of(last);
			case FIRE_ALL -> List.copyOf(due);
			case SKIP -> List.of();
		};
		return new TickPlan(ticks, tick, dueCount, dueTick, last);
	}

	/**
	 * What the plan did about missed ticks and why, for the log: which ticks were missed
	 * and what the misfire policy sent for them.
	 * @param schedule the schedule
	 * @param now the time it was planned at (epoch ms)
	 * @return the description, {@code null} when no tick was missed
	 */
	@Nullable String misfireReport(Schedule schedule, long now) {
		if (this.missed == 0) {
			return null;
		}
		String which = "Schedule '" + schedule.name() + "' of topic '" + schedule.topic() + "' ";
		String why;
		if (this.missed == 1) {
			why = "missed its tick of " + Instant.ofEpochMilli(this.firstMissed) + ": it is "
					+ Durations.format(Duration.ofMillis(now - this.firstMissed)) + " late, more than "
					+ Durations.format(Schedule.MISFIRE_THRESHOLD) + ", so its misfire policy " + schedule.misfire()
					+ " applies";
		}
		else {
			why = "is behind: "
					+ ((this.missed > Schedule.MAX_MISSED_TICKS) ? "more than " + Schedule.MAX_MISSED_TICKS
							: String.valueOf(this.missed))
					+ " ticks are due, from " + Instant.ofEpochMilli(this.firstMissed) + " ("
					+ Durations.format(Duration.ofMillis(now - this.firstMissed)) + " late) to "
					+ Instant.ofEpochMilli(this.lastMissed) + ", and more than one overdue tick is a misfire,"
					+ " so its misfire policy " + schedule.misfire() + " applies";
		}
		String what = switch (schedule.misfire()) {
			case FIRE_ONCE ->
				"it sent one message, for the tick of " + Instant.ofEpochMilli(this.lastMissed)
						+ ((this.missed > 1) ? ", and none for the " + ((this.missed > Schedule.MAX_MISSED_TICKS)
								? "more than " + (Schedule.MAX_MISSED_TICKS - 1) : String.valueOf(this.missed - 1))
								+ " before it" : "");
			case SKIP -> "it sent nothing for " + ((this.missed == 1) ? "it" : "them");
			case FIRE_ALL -> (this.missed > Schedule.MAX_MISSED_TICKS)
					? "it sent " + this.ticks.size() + " messages, at most " + Schedule.MAX_MISSED_TICKS
							+ ": for the oldest " + (this.ticks.size() - 1) + " ticks and the last"
					: "it sent " + this.ticks.size() + ((this.ticks.size() == 1) ? " message" : " messages")
							+ ", one for each";
		};
		return which + why + ": " + what + "; its next tick is "
				+ ((this.next == Long.MAX_VALUE) ? "none" : Instant.ofEpochMilli(this.next).toString()) + ".";
	}

	/**
	 * The last tick of a schedule before a time, searched back at most a year and a month
	 * (the start of that span when none is found there): for a save that must start a new
	 * definition after every tick the old one sent.
	 * @param schedule the schedule
	 * @param time a time (epoch ms)
	 * @return the tick (epoch ms)
	 */
	static long lastTickBefore(Schedule schedule, long time) {
		if (schedule.trigger() instanceof ScheduleTrigger.FixedRate rate) {
			return time - rate.rate().toMillis();
		}
		return lastBefore(schedule, schedule.trigger().ticks(), time - LONGEST_SEARCH_MILLIS, time);
	}

	/** How far back {@link #lastTickBefore} searches. */
	private static final long LONGEST_SEARCH_MILLIS = Duration.ofDays(400).toMillis();

	/**
	 * The last tick before a time, from a tick before it: for a fixed rate at once; for a
	 * cron expression, searching back from the time in windows that double until one
	 * holds a tick, so that it walks only the ticks of that window.
	 */
	private static long lastBefore(Schedule schedule, LongUnaryOperator next, long tick, long time) {
		if (schedule.trigger() instanceof ScheduleTrigger.FixedRate fixedRate) {
			long rate = fixedRate.rate().toMillis();
			return tick + (time - 1 - tick) / rate * rate;
		}
		for (long span = FIRST_SEARCH_SPAN_MILLIS;; span *= 2) {
			long from = Math.max(tick, time - span);
			long first = (from == tick) ? tick : next.applyAsLong(from - 1);
			if (first < time) {
				long last = first;
				for (long later = next.applyAsLong(first); later < time; later = next.applyAsLong(later)) {
					last = later;
				}
				return last;
			}
		}
	}

}

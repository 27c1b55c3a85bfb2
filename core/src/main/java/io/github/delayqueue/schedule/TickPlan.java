package io.github.delayqueue.schedule;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.LongUnaryOperator;

/**
 * What a schedule whose next tick is due sends now, and its next tick: each due tick sent
 * within {@link Schedule#MISFIRE_THRESHOLD} of its time is on time and sent; for the
 * ticks missed before those, the schedule's {@link MisfirePolicy} decides. Planning takes
 * a bounded time however long the schedule was behind.
 *
 * @param ticks the ticks to send (epoch ms), oldest first
 * @param next the first tick after now (epoch ms), {@link Long#MAX_VALUE} for none
 * @param missed how many ticks were missed; more than {@link Schedule#MAX_MISSED_TICKS}
 * stands for any number above it
 */
record TickPlan(List<Long> ticks, long next, long missed) {

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
		long onTimeFrom = now - Schedule.MISFIRE_THRESHOLD.toMillis();
		LongUnaryOperator next = schedule.ticks();
		List<Long> missed = new ArrayList<>();
		long tick = dueTick;
		while (tick < onTimeFrom && missed.size() < Schedule.MAX_MISSED_TICKS) {
			missed.add(tick);
			tick = next.applyAsLong(tick);
		}
		long missedCount = missed.size();
		if (tick < onTimeFrom) {
			// More missed ticks than any policy sends: on to the last of them, which
			// takes
			// the place of the last kept.
			tick = lastBefore(schedule, next, tick, onTimeFrom);
			missed.set(missed.size() - 1, tick);
			missedCount = Schedule.MAX_MISSED_TICKS + 1;
			tick = next.applyAsLong(tick);
		}
		List<Long> onTime = new ArrayList<>();
		while (tick <= now) {
			onTime.add(tick);
			tick = next.applyAsLong(tick);
		}
		List<Long> ticks = new ArrayList<>();
		switch (schedule.misfire()) {
			case FIRE_ONCE -> {
				if (!missed.isEmpty()) {
					ticks.add(missed.get(missed.size() - 1));
				}
			}
			case FIRE_ALL -> ticks.addAll(missed);
			case SKIP -> {
			}
		}
		ticks.addAll(onTime);
		return new TickPlan(List.copyOf(ticks), tick, missedCount);
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
		if (schedule.fixedRate() != null) {
			return time - schedule.fixedRate().toMillis();
		}
		return lastBefore(schedule, schedule.ticks(), time - LONGEST_SEARCH_MILLIS, time);
	}

	/** How far back {@link #lastTickBefore} searches. */
	private static final long LONGEST_SEARCH_MILLIS = Duration.ofDays(400).toMillis();

	/**
	 * The last tick before a time, from a tick before it: for a fixed rate at once; for a
	 * cron expression, searching back from the time in windows that double until one
	 * holds a tick, so that it walks only the ticks of that window.
	 */
	private static long lastBefore(Schedule schedule, LongUnaryOperator next, long tick, long time) {
		if (schedule.fixedRate() != null) {
			long rate = schedule.fixedRate().toMillis();
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

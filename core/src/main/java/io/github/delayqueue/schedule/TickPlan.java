package io.github.delayqueue.schedule;

import java.util.ArrayList;
import java.util.List;

/**
 * What a schedule whose next tick is due sends now, and its next tick: each due tick sent
 * within {@link Schedule#MISFIRE_THRESHOLD} of its time is on time and sent; for the
 * ticks missed before those, the schedule's {@link MisfirePolicy} decides.
 *
 * @param ticks the ticks to send (epoch ms), oldest first
 * @param next the first tick after now (epoch ms), {@link Long#MAX_VALUE} for none
 * @param missed how many ticks were missed
 */
record TickPlan(List<Long> ticks, long next, long missed) {

	/**
	 * Plans a due schedule.
	 * @param schedule the schedule
	 * @param dueTick its next tick, due by now (epoch ms)
	 * @param now the time (epoch ms, Redis clock)
	 * @return the plan
	 */
	static TickPlan of(Schedule schedule, long dueTick, long now) {
		long onTimeFrom = now - Schedule.MISFIRE_THRESHOLD.toMillis();
		List<Long> missed = new ArrayList<>();
		List<Long> onTime = new ArrayList<>();
		long missedCount = 0;
		long tick = dueTick;
		while (tick <= now) {
			if (tick >= onTimeFrom) {
				onTime.add(tick);
			}
			else if (missed.size() < Schedule.MAX_MISSED_TICKS) {
				missed.add(tick);
				missedCount++;
			}
			else {
				// More missed ticks than any policy sends: on to the last missed one,
				// which
				// takes the place of the last kept.
				long last = lastAtOrBefore(schedule, tick, onTimeFrom - 1);
				missedCount += count(schedule, tick, last);
				tick = last;
				missed.set(missed.size() - 1, tick);
			}
			tick = schedule.nextAfter(tick);
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

	/** How many ticks there are from one tick to another, both included. */
	private static long count(Schedule schedule, long from, long to) {
		if (schedule.fixedRate() != null) {
			return (to - from) / schedule.fixedRate().toMillis() + 1;
		}
		long count = 1;
		for (long tick = from; tick < to; tick = schedule.nextAfter(tick)) {
			count++;
		}
		return count;
	}

	/**
	 * The last tick at or before a time, from a tick at or before it: for a fixed rate at
	 * once, for a cron expression tick by tick.
	 */
	private static long lastAtOrBefore(Schedule schedule, long tick, long time) {
		if (schedule.fixedRate() != null) {
			long rate = schedule.fixedRate().toMillis();
			return tick + (time - tick) / rate * rate;
		}
		long last = tick;
		for (long next = schedule.nextAfter(tick); next <= time; next = schedule.nextAfter(next)) {
			last = next;
		}
		return last;
	}

}

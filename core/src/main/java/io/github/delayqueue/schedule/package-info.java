/**
 * Recurring messages: a {@link io.github.delayqueue.schedule.Schedule} sends a message to
 * its topic at each tick of a cron expression or a fixed rate, exactly once across the
 * instances that share its Redis;
 * {@link io.github.delayqueue.schedule.DelayQueueSchedules} creates and changes
 * schedules, and {@link io.github.delayqueue.schedule.SchedulePoller} sends their ticks
 * when due.
 */
@NullMarked
package io.github.delayqueue.schedule;

import org.jspecify.annotations.NullMarked;

package io.github.delayqueue.schedule;

import java.time.Instant;

import org.jspecify.annotations.Nullable;

/**
 * A schedule as Redis keeps it.
 *
 * @param schedule its definition
 * @param nextFire when its next tick is due; {@code null} when it has none (a cron
 * expression that matches no time to come)
 * @param paused whether it is paused: no tick is sent while it is, and none of those
 * missed meanwhile once it is resumed
 */
public record ScheduleInfo(Schedule schedule, @Nullable Instant nextFire, boolean paused) {
}

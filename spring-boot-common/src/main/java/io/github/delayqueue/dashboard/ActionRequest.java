package io.github.delayqueue.dashboard;

import java.time.Duration;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;
import org.springframework.boot.convert.DurationStyle;

/**
 * The body of a dashboard action.
 *
 * @param action what to do, as the {@code delayqueue} endpoint names it
 * @param limit for a topic's dead letters: the most to act on
 * @param delay for {@code reschedule}: the new delay from now, such as {@code 10m} or
 * {@code PT10M}
 * @param schedule for a schedule's action: the schedule's name
 * @param group for a group's action: the group's name
 * @param duration for {@code pause-group}: how long, such as {@code 10m}; until resumed
 * when absent
 */
record ActionRequest(@Nullable String action, @Nullable Long limit, @Nullable String delay, @Nullable String schedule,
		@Nullable String group, @Nullable String duration) {

	String requiredAction() {
		if (this.action == null || this.action.isBlank()) {
			throw new InvalidEndpointRequestException("An action is missing, such as {\"action\":\"cancel\"}",
					"Missing action");
		}
		return this.action;
	}

	@Nullable Duration parsedDelay() {
		return parsed("delay", this.delay);
	}

	@Nullable Duration parsedDuration() {
		return parsed("duration", this.duration);
	}

	private static @Nullable Duration parsed(String name, @Nullable String value) {
		if (value == null || value.isBlank()) {
			return null;
		}
		try {
			return DurationStyle.detectAndParse(value.trim());
		}
		catch (IllegalArgumentException ex) {
			String shown = (value.length() > 64) ? value.substring(0, 64) + "…" : value;
			throw new InvalidEndpointRequestException(
					name + " must be a duration such as 10m or PT10M, but was '" + shown + "'", "Bad " + name);
		}
	}

}

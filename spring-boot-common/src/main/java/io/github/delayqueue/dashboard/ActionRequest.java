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
 */
record ActionRequest(@Nullable String action, @Nullable Long limit, @Nullable String delay, @Nullable String schedule) {

	String requiredAction() {
		if (this.action == null || this.action.isBlank()) {
			throw new InvalidEndpointRequestException("An action is missing, such as {\"action\":\"cancel\"}",
					"Missing action");
		}
		return this.action;
	}

	@Nullable Duration parsedDelay() {
		if (this.delay == null || this.delay.isBlank()) {
			return null;
		}
		try {
			return DurationStyle.detectAndParse(this.delay.trim());
		}
		catch (IllegalArgumentException ex) {
			String shown = (this.delay.length() > 64) ? this.delay.substring(0, 64) + "…" : this.delay;
			throw new InvalidEndpointRequestException(
					"delay must be a duration such as 10m or PT10M, but was '" + shown + "'", "Bad delay");
		}
	}

}

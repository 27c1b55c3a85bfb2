package io.github.delayqueue.time;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Durations written as people write them.
 */
class DurationsTests {

	@Test
	void usesTheLargestUnitThatIsExact() {
		assertThat(Durations.format(Duration.ofHours(88_800))).isEqualTo("3700d");
		assertThat(Durations.format(Duration.ofHours(25))).isEqualTo("25h");
		assertThat(Durations.format(Duration.ofMinutes(30))).isEqualTo("30m");
		assertThat(Durations.format(Duration.ofSeconds(90))).isEqualTo("90s");
		assertThat(Durations.format(Duration.ofMillis(1500))).isEqualTo("1500ms");
		assertThat(Durations.format(Duration.ofNanos(2_500_000))).isEqualTo("2500us");
		assertThat(Durations.format(Duration.ofNanos(7))).isEqualTo("7ns");
	}

	@Test
	void writesZeroAndNegativeDurations() {
		assertThat(Durations.format(Duration.ZERO)).isEqualTo("0s");
		assertThat(Durations.format(Duration.ofMillis(-250))).isEqualTo("-250ms");
		assertThat(Durations.format(Duration.ofDays(-2))).isEqualTo("-2d");
	}

	@Test
	void fallsBackToIso8601WhereNoUnitCanHoldIt() {
		Duration huge = Duration.ofSeconds(Long.MAX_VALUE, 5);
		assertThat(Durations.format(huge)).isEqualTo(huge.toString());
		assertThat(Durations.format(Duration.ofSeconds(Long.MIN_VALUE)))
			.isEqualTo(Duration.ofSeconds(Long.MIN_VALUE).toString());
	}

}

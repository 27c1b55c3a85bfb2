package io.github.delayqueue.producer;

import java.time.Duration;

import io.github.delayqueue.listener.LatePolicy;
import io.github.delayqueue.listener.ListenerSettings;
import io.github.delayqueue.time.RetryBackoff;
import io.github.delayqueue.schedule.Schedule;
import io.github.delayqueue.store.RateLimit;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * Every {@link Duration} the API takes, at the largest a {@code Duration} can be: a clear
 * refusal naming the value, never an {@link ArithmeticException} from converting it to
 * milliseconds, then or later.
 */
class HugeDurationsTests {

	private static final Duration HUGE = Duration.ofSeconds(Long.MAX_VALUE);

	private static final RetryBackoff BACKOFF = new RetryBackoff(Duration.ofSeconds(1), 2.0, Duration.ofMinutes(1));

	@Test
	void aHugeDeduplicationWindowIsRefusedAsAnInvalidMessage() {
		assertThatExceptionOfType(InvalidMessageException.class)
			.isThrownBy(() -> DelayMessage.builder("orders", "payload").id("a").deduplicateFor(HUGE).build())
			.withMessageContaining("deduplication window");
	}

	@Test
	void aHugeDelayIsRefusedAsAnInvalidMessage() {
		assertThatExceptionOfType(InvalidMessageException.class)
			.isThrownBy(() -> DelayMessage.builder("orders", "payload").delay(HUGE).build())
			.withMessageContaining("Delay");
	}

	@Test
	void aHugeFixedRateIsRefusedAsAnInvalidMessageNamingTheLongestRate() {
		assertThatExceptionOfType(InvalidMessageException.class)
			.isThrownBy(() -> Schedule.fixedRate("tick", "orders", HUGE))
			.withMessageContaining("fixed rate must be at most");
	}

	@Test
	void theLongestFixedRateIsAcceptedAndItsNextTickIsComputed() {
		Schedule schedule = Schedule.fixedRate("tick", "orders", Schedule.MAX_FIXED_RATE);
		assertThat(schedule.nextAfter(0)).isEqualTo(Schedule.MAX_FIXED_RATE.toMillis());
	}

	@Test
	void aHugeVisibilityTimeoutIsRefusedNamingIt() {
		assertThatIllegalArgumentException().isThrownBy(() -> settings(HUGE, Duration.ofSeconds(1)))
			.withMessageContaining("Visibility timeout must be at most");
	}

	@Test
	void aHugeIdleCheckIntervalIsRefusedNamingIt() {
		assertThatIllegalArgumentException().isThrownBy(() -> settings(Duration.ofSeconds(30), HUGE))
			.withMessageContaining("Idle check interval must be at most");
	}

	@Test
	void aHugeBatchTimeoutIsRefusedNamingIt() {
		assertThat(ListenerSettings.batchTimeoutProblem(HUGE)).startsWith("must be between 1ms and");
		ListenerSettings settings = settings(Duration.ofSeconds(30), Duration.ofSeconds(1));
		assertThatIllegalArgumentException().isThrownBy(() -> settings.withBatchTimeout(HUGE))
			.withMessageContaining("Batch timeout");
	}

	@Test
	void aHugeMaxHandlingTimeStillMeansAsLongAsItTakes() {
		ListenerSettings settings = new ListenerSettings(1, 0, 3, Duration.ofSeconds(30), BACKOFF,
				Duration.ofSeconds(1), Duration.ofSeconds(1), HUGE, LatePolicy.DELIVER, HUGE);
		assertThat(settings.maxHandlingTime()).isEqualTo(HUGE);
	}

	@Test
	void aHugeBackoffMaxIntervalIsRefusedNamingIt() {
		assertThatIllegalArgumentException().isThrownBy(() -> new RetryBackoff(Duration.ofSeconds(1), 2.0, HUGE))
			.withMessageContaining("Backoff max interval must be at most");
	}

	@Test
	void theLongestBackoffGivesItsMaxIntervalAfterManyAttempts() {
		RetryBackoff backoff = new RetryBackoff(RetryBackoff.MAX_INTERVAL, 10.0, RetryBackoff.MAX_INTERVAL);
		assertThat(backoff.after(1000)).isEqualTo(RetryBackoff.MAX_INTERVAL);
	}

	@Test
	void aHugeRateLimitPeriodIsRefusedNamingIt() {
		assertThatIllegalArgumentException().isThrownBy(() -> new RateLimit(10, HUGE))
			.withMessageContaining("Rate limit period must be between 1ms and");
	}

	private static ListenerSettings settings(Duration visibilityTimeout, Duration idleCheckInterval) {
		return new ListenerSettings(1, 0, 3, visibilityTimeout, BACKOFF, idleCheckInterval, Duration.ofSeconds(1),
				Duration.ofMinutes(5), LatePolicy.DELIVER, Duration.ofMinutes(1));
	}

}

package io.github.delayqueue.store;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.delayqueue.time.RetryBackoff;
import org.junit.jupiter.api.Test;

import org.springframework.util.backoff.BackOffExecution;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * The one back-off rule ({@link RetryBackoff}) as the two {@link StoreCalls} use it.
 */
class StoreCallsTests {

	@Test
	void retriesWaitOneHundredThenTwoHundredMillisecondsThenStop() {
		assertThat(waits(StoreCalls.RETRIES.start(), 5)).containsExactly(100L, 200L, BackOffExecution.STOP,
				BackOffExecution.STOP, BackOffExecution.STOP);
	}

	@Test
	void anOutageWaitsDoublingUpToFiveSecondsWithoutEnd() {
		assertThat(waits(StoreCalls.OUTAGE.start(), 9)).containsExactly(100L, 200L, 400L, 800L, 1600L, 3200L, 5000L,
				5000L, 5000L);
	}

	@Test
	void eachStartBeginsAgainFromTheFirstWait() {
		BackOffExecution first = StoreCalls.OUTAGE.start();
		first.nextBackOff();
		first.nextBackOff();
		assertThat(StoreCalls.OUTAGE.start().nextBackOff()).isEqualTo(100L);
	}

	@Test
	void aBackOffLimitedToNoRetriesStopsAtOnceAndANegativeNumberOfRetriesIsRefused() {
		RetryBackoff backoff = new RetryBackoff(Duration.ofMillis(100), 2.0, Duration.ofSeconds(1));
		assertThat(backoff.limitedTo(0).start().nextBackOff()).isEqualTo(BackOffExecution.STOP);
		assertThatIllegalArgumentException().isThrownBy(() -> backoff.limitedTo(-1));
	}

	@Test
	void aCallThatKeepsFailingIsTriedThreeTimesAndItsLastFailureThrown() {
		AtomicInteger calls = new AtomicInteger();
		assertThatIllegalStateException().isThrownBy(() -> StoreCalls.withRetries(() -> {
			throw new IllegalStateException("failure " + calls.incrementAndGet());
		})).withMessage("failure 3");
		assertThat(calls).hasValue(3);
	}

	@Test
	void aCallThatSucceedsOnItsSecondTryReturnsItsResult() {
		AtomicInteger calls = new AtomicInteger();
		assertThat(StoreCalls.withRetries(() -> {
			if (calls.incrementAndGet() < 2) {
				throw new IllegalStateException("not yet");
			}
			return "done";
		})).isEqualTo("done");
		assertThat(calls).hasValue(2);
	}

	private static List<Long> waits(BackOffExecution execution, int count) {
		List<Long> waits = new ArrayList<>();
		for (int i = 0; i < count; i++) {
			waits.add(execution.nextBackOff());
		}
		return waits;
	}

}

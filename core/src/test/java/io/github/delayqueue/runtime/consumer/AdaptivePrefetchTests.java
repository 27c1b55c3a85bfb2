package io.github.delayqueue.runtime.consumer;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class AdaptivePrefetchTests {

	private static final long MICROS = 1_000;

	private static final long MILLIS = 1_000_000;

	@Test
	void claimsNothingAheadUntilAHandlerHasReturned() {
		AdaptivePrefetch prefetch = new AdaptivePrefetch(256, 4, Duration.ofSeconds(30));
		assertThat(prefetch.current()).isZero();
	}

	@Test
	void fastHandlersGetAsManyAsTheyFinishInTheTargetWaitUpToTheConfiguredMost() {
		AdaptivePrefetch prefetch = new AdaptivePrefetch(256, 4, Duration.ofSeconds(30));
		prefetch.handled(1, 500 * MICROS);
		// 4 handlers finish 80 messages of 0.5 ms in 10 ms.
		assertThat(prefetch.current()).isEqualTo(80);
		prefetch.handled(1, 10 * MICROS);
		for (int i = 0; i < 100; i++) {
			prefetch.handled(1, 10 * MICROS);
		}
		assertThat(prefetch.current()).isEqualTo(256);
	}

	@Test
	void aSlowCallCutsThePrefetchAtOnceAndFastCallsRaiseItGradually() {
		AdaptivePrefetch prefetch = new AdaptivePrefetch(1000, 4, Duration.ofSeconds(30));
		prefetch.handled(1, 100 * MICROS);
		assertThat(prefetch.current()).isEqualTo(400);
		prefetch.handled(1, 50 * MILLIS);
		assertThat(prefetch.current()).isZero();
		prefetch.handled(1, 100 * MICROS);
		assertThat(prefetch.current()).isZero();
		for (int i = 0; i < 200; i++) {
			prefetch.handled(1, 100 * MICROS);
		}
		assertThat(prefetch.current()).isEqualTo(400);
	}

	@Test
	void aBatchCallCountsItsTimePerMessage() {
		AdaptivePrefetch prefetch = new AdaptivePrefetch(1000, 2, Duration.ofSeconds(30));
		prefetch.handled(100, 10 * MILLIS);
		// 2 handlers, 0.1 ms a message: 200 in 10 ms.
		assertThat(prefetch.current()).isEqualTo(200);
	}

	@Test
	void aShortLeaseShortensTheWaitToAQuarterOfIt() {
		AdaptivePrefetch prefetch = new AdaptivePrefetch(1000, 1, Duration.ofMillis(20));
		prefetch.handled(1, 1 * MILLIS);
		assertThat(prefetch.current()).isEqualTo(5);
	}

	@Test
	void aPrefetchOfZeroNeverClaimsAhead() {
		AdaptivePrefetch prefetch = new AdaptivePrefetch(0, 4, Duration.ofSeconds(30));
		prefetch.handled(1, 1);
		assertThat(prefetch.current()).isZero();
	}

}

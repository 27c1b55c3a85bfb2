package io.github.delayqueue.runtime.consumer;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * How many messages a claim asks for, due and early.
 */
class ClaimSlotsTests {

	private final AtomicInteger held = new AtomicInteger();

	@Test
	void aClaimTakesTheFreeHandlerSlotsUntilItsAnswerFreesThoseItDidNotFill() {
		ClaimSlots slots = new ClaimSlots(4, noPrefetch(), false, this.held::get);
		assertThat(slots.take()).isEqualTo(4);
		assertThat(slots.take()).isZero();
		slots.claimed(4, 1);
		assertThat(slots.take()).isEqualTo(3);
		slots.giveBack(2);
		assertThat(slots.take()).isEqualTo(2);
	}

	@Test
	void thePrefetchOfTheMomentAddsSlots() {
		AdaptivePrefetch prefetch = new AdaptivePrefetch(256, 1, Duration.ofSeconds(30));
		// 1 ms a message: ten of them in the target wait of 10 ms.
		prefetch.handled(1, Duration.ofMillis(1).toNanos());
		ClaimSlots slots = new ClaimSlots(1, prefetch, false, this.held::get);
		assertThat(slots.take()).isEqualTo(11);
	}

	@Test
	void aClaimAsksForAtMostMaxClaimDueMessages() {
		ClaimSlots slots = new ClaimSlots(1000, noPrefetch(), false, this.held::get);
		assertThat(slots.take()).isEqualTo(ClaimSlots.MAX_CLAIM);
		assertThat(slots.take()).isEqualTo(ClaimSlots.MAX_CLAIM);
	}

	@Test
	void aClaimTakesAsManyEarlyMessagesAsTheHeldOnesHaveRoomFor() {
		ClaimSlots slots = new ClaimSlots(1, noPrefetch(), false, this.held::get);
		assertThat(slots.earlyLimit()).isEqualTo(ClaimSlots.MAX_CLAIM);
		this.held.set(EarlyMessages.MAX_HELD - 10);
		assertThat(slots.earlyLimit()).isEqualTo(10);
		this.held.set(EarlyMessages.MAX_HELD);
		assertThat(slots.earlyLimit()).isZero();
	}

	@Test
	void aRateLimitedTopicClaimsNothingEarly() {
		ClaimSlots slots = new ClaimSlots(1, noPrefetch(), true, this.held::get);
		assertThat(slots.earlyLimit()).isZero();
	}

	private static AdaptivePrefetch noPrefetch() {
		return new AdaptivePrefetch(0, 1, Duration.ofSeconds(30));
	}

}

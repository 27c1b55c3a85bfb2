package io.github.delayqueue.runtime.consumer;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.atomic.AtomicBoolean;

import io.github.delayqueue.runtime.support.Nanoseconds;
import io.github.delayqueue.store.ClaimedMessage;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The messages held until their due time, and their timer. Called holding no lock: no
 * other thread touches them here.
 */
class EarlyMessagesTests {

	private static final long LATER = Long.MAX_VALUE / 2;

	private final Instant claimedAt = Instant.now();

	private final ScheduledThreadPoolExecutor scheduler = new ScheduledThreadPoolExecutor(1);

	private final AtomicBoolean released = new AtomicBoolean();

	private final EarlyMessages early = new EarlyMessages(this.scheduler, () -> this.released.set(true));

	EarlyMessagesTests() {
		this.scheduler.setRemoveOnCancelPolicy(true);
	}

	@AfterEach
	void stopScheduler() {
		this.scheduler.shutdownNow();
	}

	@Test
	void heldMessagesFallDueInDueOrderAndInClaimOrderWithinTheSameDueTime() {
		hold("m3", Duration.ofHours(3));
		hold("m1", Duration.ofHours(1));
		hold("m2a", Duration.ofHours(2));
		hold("m2b", Duration.ofHours(2));
		assertThat(this.early.count()).isEqualTo(4);
		List<String> taken = new ArrayList<>();
		InFlightMessage next;
		while ((next = this.early.takeIfDue(System.nanoTime() + LATER, Long.MIN_VALUE)) != null) {
			taken.add(next.id());
		}
		assertThat(taken).containsExactly("m1", "m2a", "m2b", "m3");
		assertThat(this.early.count()).isZero();
	}

	@Test
	void aMessageIsDueByTheRedisClockOfAClaimBeforeItsReleaseTimeHere() {
		hold("m1", Duration.ofHours(1));
		long dueAtMillis = this.claimedAt.plus(Duration.ofHours(1)).toEpochMilli();
		assertThat(takeIfDue(dueAtMillis - 1)).isNull();
		assertThat(takeIfDue(dueAtMillis)).isNotNull();
	}

	@Test
	void theTimerRunsWhenTheEarliestMessageFallsDue() {
		hold("later", Duration.ofHours(1));
		hold("soon", Duration.ofMillis(50));
		await().atMost(Duration.ofSeconds(5)).untilTrue(this.released);
		this.early.timerRan();
		InFlightMessage taken = takeIfDue(Long.MIN_VALUE);
		assertThat(taken).isNotNull();
		assertThat(taken.id()).isEqualTo("soon");
	}

	@Test
	void takingAllGivesUpEveryMessageAndCancelsTheTimer() {
		hold("m1", Duration.ofHours(1));
		hold("m2", Duration.ofHours(2));
		List<InFlightMessage> givenUp = new ArrayList<>();
		this.early.takeAll(givenUp);
		assertThat(givenUp).extracting(InFlightMessage::id).containsExactlyInAnyOrder("m1", "m2");
		assertThat(this.early.count()).isZero();
		assertThat(this.scheduler.getQueue()).isEmpty();
	}

	@Test
	void theHeldMessagesAreFullAtMaxHeld() {
		for (int i = 0; i < EarlyMessages.MAX_HELD; i++) {
			assertThat(this.early.isFull()).isFalse();
			hold("m" + i, Duration.ofHours(1));
		}
		assertThat(this.early.isFull()).isTrue();
	}

	private @Nullable InFlightMessage takeIfDue(long redisNowMillis) {
		return this.early.takeIfDue(System.nanoTime(), redisNowMillis);
	}

	private void hold(String id, Duration dueIn) {
		long dueAtMillis = this.claimedAt.plus(dueIn).toEpochMilli();
		byte[] stored = ("0:" + dueAtMillis + ":x").getBytes(StandardCharsets.US_ASCII);
		InFlightMessage message = new InFlightMessage(new ClaimedMessage(id, "token", 0, this.claimedAt, stored));
		this.early.hold(message, Nanoseconds.of(dueIn));
	}

}

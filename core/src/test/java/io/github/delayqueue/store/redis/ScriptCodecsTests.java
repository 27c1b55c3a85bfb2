package io.github.delayqueue.store.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import io.github.delayqueue.store.ClaimResult;
import io.github.delayqueue.store.ClaimedMessage;
import io.github.delayqueue.store.LeaseExpiryResult;
import io.github.delayqueue.store.MessagePage;
import io.github.delayqueue.store.MessageState;
import io.github.delayqueue.store.NewMessage;
import io.github.delayqueue.store.GroupWait;
import io.github.delayqueue.store.RateLimit;
import io.github.delayqueue.store.TopicStats;
import io.github.delayqueue.store.TopicStore;
import io.github.delayqueue.testsupport.Transitions;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.awaitility.Awaitility.await;

/**
 * The codecs (review 21) read each script's reply and build its arguments as the code
 * they replaced did, on real Redis.
 */
class ScriptCodecsTests {

	private static NewMessage now(String id) {
		return new NewMessage(id, true, 0, id.getBytes(StandardCharsets.UTF_8));
	}

	@Test
	void mismatchedIdAndTokenCountsAreRefusedOnTheCallersThreadBeforeAnythingIsSent() {
		ScriptTest.run((template, store, redis) -> {
			TopicStore topic = store.topic("orders");
			assertThatIllegalArgumentException().isThrownBy(() -> topic.ack(List.of("a", "b"), List.of("t")));
			assertThatIllegalArgumentException().isThrownBy(() -> topic.release(List.of("a"), List.of("t", "u")));
			assertThatIllegalArgumentException()
				.isThrownBy(() -> topic.extendLeases(List.of(), List.of(), Duration.ofSeconds(1)));
			List<String> many = new ArrayList<>();
			for (int i = 0; i < 1001; i++) {
				many.add("id" + i);
			}
			assertThatIllegalArgumentException().isThrownBy(() -> topic.ack(many, many));
			assertThatIllegalArgumentException().isThrownBy(() -> store.replayDead("orders", many));
			assertThatIllegalArgumentException().isThrownBy(() -> store.purgeDead("orders", List.of()));
		});
	}

	@Test
	void rescheduleRoundsASubMillisecondDelayUpAndRetryAndPostponeRoundTheirsDown() {
		Duration delay = Duration.ofNanos(1_500_000);
		assertThat(new ScriptCodecs.Reschedule("a", delay, "c", "p", 1).arguments().get(2)).isEqualTo(2L);
		assertThat(new ScriptCodecs.Retry("a", "t", delay, "c", "p", true, "boom", GroupWait.NONE).arguments())
			.containsExactly("a", "t", 1L, "c", "p", 1, "boom");
		assertThat(new ScriptCodecs.Retry("a", "t", delay, "c", "p", false, "", GroupWait.NONE).arguments().get(5))
			.isEqualTo(0);
		assertThat(new ScriptCodecs.Retry("a", "t", delay, "c", "p", false, "", GroupWait.GROUP).arguments())
			.containsExactly("a", "t", 1L, "c", "p", 0, "", 1);
		assertThat(new ScriptCodecs.Retry("a", "t", delay, "c", "p", true, "boom", GroupWait.IN_GROUP).arguments())
			.endsWith("boom", 2);
		assertThat(new ScriptCodecs.Claim(5, delay, -3, "tok", null, 0).arguments()).containsExactly(5, 1L, 0, "tok");
		assertThat(new ScriptCodecs.Claim(5, delay, 2, "tok", new RateLimit(7, Duration.ofMillis(1500)), 0).arguments())
			.containsExactly(5, 1L, 2, "tok", 7, 1500L);
		assertThat(new ScriptCodecs.Claim(5, delay, 0, "tok", null, 2).arguments()).containsExactly(5, 1L, 0, "tok", "",
				"", 2);
		assertThat(new ScriptCodecs.Claim(5, delay, 0, "tok", new RateLimit(7, Duration.ofMillis(1500)), 3).arguments())
			.containsExactly(5, 1L, 0, "tok", 7, 1500L, 3);
	}

	@Test
	void anEmptyClaimGivesNoMessagesNoMoreAndNoRateLimitWait() {
		ScriptTest.run((template, store, redis) -> {
			ClaimResult result = Transitions.claim(store, "orders", "c1", "c1.0", 5, 0, Duration.ofSeconds(30));
			assertThat(result.messages()).isEmpty();
			assertThat(result.more()).isFalse();
			assertThat(result.rateLimitedFor()).isZero();
			ClaimResult limited = Transitions.claim(store, "orders", "c1", "c1.1", 5, 0, Duration.ofSeconds(30),
					new RateLimit(1, Duration.ofSeconds(10)));
			assertThat(limited.messages()).isEmpty();
		});
	}

	@Test
	void aRateLimitedClaimTakesNoMoreThanTheLimitAndSaysHowLongTheRestWaits() {
		ScriptTest.run((template, store, redis) -> {
			store.send("orders", List.of(now("a"), now("b"), now("c")));
			Transitions.promote(store, "orders", 10);
			RateLimit limit = new RateLimit(2, Duration.ofSeconds(10));
			ClaimResult first = Transitions.claim(store, "orders", "c1", "c1.0", 10, 0, Duration.ofSeconds(30), limit);
			assertThat(first.messages()).extracting(ClaimedMessage::id).containsExactly("a", "b");
			ClaimResult second = Transitions.claim(store, "orders", "c1", "c1.1", 10, 0, Duration.ofSeconds(30), limit);
			assertThat(second.messages()).isEmpty();
			assertThat(second.rateLimitedFor()).isPositive().isLessThanOrEqualTo(Duration.ofSeconds(10));
		});
	}

	@Test
	void inspectOfAnUnknownIdIsNullAndPagesCarryTheLastErrorOnlyForDeadLetters() {
		ScriptTest.run((template, store, redis) -> {
			assertThat(store.inspect("orders", "nope", 100)).isNull();
			store.send("orders", List.of(now("a"), now("b")));
			Transitions.promote(store, "orders", 10);
			ClaimedMessage claimed = Transitions.claim(store, "orders", 1, Duration.ofMinutes(1)).get(0);
			assertThat(Transitions.deadLetter(store, "orders", claimed.id(), claimed.leaseToken(), "boom")).isTrue();
			MessagePage dead = store.page("orders", MessageState.DEAD, 0, 10);
			assertThat(dead.total()).isEqualTo(1);
			assertThat(dead.messages()).singleElement().satisfies((m) -> {
				assertThat(m.id()).isEqualTo("a");
				assertThat(m.lastError()).isEqualTo("boom");
			});
			MessagePage ready = store.page("orders", MessageState.READY, 0, 10);
			assertThat(ready.messages()).singleElement().satisfies((m) -> assertThat(m.lastError()).isNull());
			assertThat(store.inspect("orders", "a", 100).lastError()).isEqualTo("boom");
			assertThat(store.inspect("orders", "b", 100).lastError()).isNull();
		});
	}

	@Test
	void expireLeasesSplitsTheRequeuedFromTheDeadLetteredIds() {
		ScriptTest.run((template, store, redis) -> {
			store.send("orders", List.of(now("a"), now("b")));
			Transitions.promote(store, "orders", 10);
			List<ClaimedMessage> claimed = Transitions.claim(store, "orders", 10, Duration.ofMillis(1));
			assertThat(claimed).hasSize(2);
			// a second attempt for "b" only: its attempts reach the maximum of 2
			LeaseExpiryResult first = await().atMost(Duration.ofSeconds(5))
				.until(() -> Transitions.expireLeases(store, "orders", 10, 5),
						(result) -> !result.requeued().isEmpty());
			assertThat(first.requeued()).containsExactlyInAnyOrder("a", "b");
			assertThat(first.deadLettered()).isEmpty();
			List<ClaimedMessage> again = Transitions.claim(store, "orders", 10, Duration.ofMillis(1));
			assertThat(again).hasSize(2);
			LeaseExpiryResult second = await().atMost(Duration.ofSeconds(5))
				.until(() -> Transitions.expireLeases(store, "orders", 10, 2),
						(result) -> !result.deadLettered().isEmpty());
			assertThat(second.requeued()).isEmpty();
			assertThat(second.deadLettered()).containsExactlyInAnyOrder("a", "b");
			assertThat(second.nextExpiryIn()).isNull();
		});
	}

	@Test
	void statsCountReadyMessagesByPriority() {
		ScriptTest.run((template, store, redis) -> {
			store.send("orders", List.of(now("a"), now("b").withPriority(3), now("c").withPriority(3),
					new NewMessage("d", true, 3_600_000, new byte[0])));
			Transitions.promote(store, "orders", 10);
			TopicStats stats = store.stats("orders");
			assertThat(stats.scheduled()).isEqualTo(1);
			assertThat(stats.ready()).isEqualTo(3);
			assertThat(stats.readyByPriority()).containsEntry(3, 2L).containsEntry(0, 1L);
		});
	}

}

package io.github.delayqueue.store.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import io.github.delayqueue.producer.DelayMessage;
import io.github.delayqueue.producer.DelayQueueTemplate;
import io.github.delayqueue.store.ClaimResult;
import io.github.delayqueue.store.ClaimedMessage;
import io.github.delayqueue.store.LeaseTokens;
import io.github.delayqueue.store.MessageFormat;
import io.github.delayqueue.store.NewMessage;
import io.github.delayqueue.store.PromoteResult;
import io.github.delayqueue.store.RateLimit;
import io.github.delayqueue.testsupport.TestStore;
import io.github.delayqueue.testsupport.Transitions;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * {@code promote.lua} with a lookahead makes messages ready shortly before they are due
 * and tells when the next lease ends; {@code claim.lua} takes such early messages only up
 * to their own limit, leaving the rest at the head of the ready list in order; with a
 * rate limit it takes no more due messages than the limit's sliding window has room for.
 * No listener runs here.
 */
class PromoteAndClaimScriptsTests {

	private static final Duration HOUR = Duration.ofHours(1);

	@Test
	void promoteWithALookaheadMovesMessagesDueWithinItAndNoOthers() {
		ScriptTest.run((template, store, redis) -> {
			send(template, "soon", Duration.ofSeconds(30));
			send(template, "later", Duration.ofMinutes(5));
			PromoteResult promoted = Transitions.promote(store, "jobs", 10, Duration.ofMinutes(1));
			assertThat(promoted.moved()).isEqualTo(1);
			assertThat(promoted.nextDueIn()).isGreaterThan(Duration.ofMinutes(4));
			assertThat(redis.opsForList().range(store.keys("jobs").ready(), 0, -1)).containsExactly("soon");
		});
	}

	@Test
	void promoteTellsWhenTheEarliestLeaseEndsSoThatExpiryIsCheckedOnlyThen() {
		ScriptTest.run((template, store, redis) -> {
			assertThat(Transitions.promote(store, "jobs", 10, Duration.ZERO))
				.isEqualTo(new PromoteResult(0, null, null, true, false));
			send(template, "a", Duration.ZERO);
			send(template, "c", Duration.ZERO);
			send(template, "b", Duration.ofHours(1));
			assertThat(Transitions.promote(store, "jobs", 10, Duration.ZERO).nextLeaseEndIn()).isNull();
			Transitions.claim(store, "jobs", 1, Duration.ofMinutes(2));
			PromoteResult promoted = Transitions.promote(store, "jobs", 10, Duration.ZERO);
			assertThat(promoted.moved()).isZero();
			assertThat(promoted.nextLeaseEndIn()).isBetween(Duration.ofMinutes(1), Duration.ofMinutes(2));
			Transitions.claim(store, "jobs", 1, Duration.ZERO);
			assertThat(Transitions.promote(store, "jobs", 10, Duration.ZERO).nextLeaseEndIn()).isZero();
		});
	}

	@Test
	void promoteTellsWhetherAReadyListOfAnyPriorityHoldsAnIdSoThatAnIdleConsumerNeedNotLook() {
		ScriptTest.run((template, store, redis) -> {
			assertThat(Transitions.promote(store, "jobs", 10, Duration.ZERO).readyWaiting()).isFalse();
			send(template, "later", HOUR);
			assertThat(Transitions.promote(store, "jobs", 10, Duration.ZERO).readyWaiting()).isFalse();
			send(template, "now", Duration.ZERO);
			assertThat(Transitions.promote(store, "jobs", 10, Duration.ZERO).readyWaiting()).isTrue();
			assertThat(Transitions.promote(store, "jobs", 10, Duration.ZERO).readyWaiting())
				.as("made ready by an earlier call")
				.isTrue();
			Transitions.claim(store, "jobs", 1, Duration.ofMinutes(2));
			assertThat(Transitions.promote(store, "jobs", 10, Duration.ZERO).readyWaiting()).isFalse();
			template.send(DelayMessage.builder("jobs", "urgent").id("urgent").priority(7).build());
			Transitions.promote(store, "jobs", 10, Duration.ZERO);
			assertThat(redis.opsForList().size(store.keys("jobs").ready())).isZero();
			assertThat(Transitions.promote(store, "jobs", 10, Duration.ZERO).readyWaiting())
				.as("on the list of priority 7")
				.isTrue();
		});
	}

	@Test
	void promoteCountsAnIdLeftInAReadyListOfAPriorityUntilAClaimDropsIt() {
		ScriptTest.run((template, store, redis) -> {
			redis.opsForList().rightPush(store.keys("jobs").ready(3), "left");
			assertThat(Transitions.promote(store, "jobs", 10, Duration.ZERO).readyWaiting()).isTrue();
			assertThat(Transitions.claim(store, "jobs", 10, Duration.ofMinutes(2))).isEmpty();
			assertThat(redis.hasKey(store.keys("jobs").ready(3))).as("dropped by the claim").isFalse();
			assertThat(Transitions.promote(store, "jobs", 10, Duration.ZERO).readyWaiting()).isFalse();
		});
	}

	@Test
	void claimTakesMessagesNotYetDueOnlyUpToTheirLimitAndPutsTheRestBackInOrder() {
		ScriptTest.run((template, store, redis) -> {
			send(template, "e1", Duration.ofSeconds(30));
			send(template, "e2", Duration.ofSeconds(31));
			send(template, "e3", Duration.ofSeconds(32));
			Transitions.promote(store, "jobs", 10, Duration.ofMinutes(1));
			List<ClaimedMessage> claimed = claim(store, 5, 2);
			assertThat(claimed).extracting(ClaimedMessage::id).containsExactly("e1", "e2");
			assertThat(claimed.get(0).dueIn()).isGreaterThan(Duration.ofSeconds(20));
			assertThat(redis.opsForList().range(store.keys("jobs").ready(), 0, -1)).containsExactly("e3");
		});
	}

	@Test
	void claimWithoutRoomForEarlyMessagesLeavesThemAndTheMessagesBehindThemWhereTheyAre() {
		ScriptTest.run((template, store, redis) -> {
			send(template, "early", Duration.ofSeconds(30));
			send(template, "later", Duration.ofSeconds(40));
			Transitions.promote(store, "jobs", 10, Duration.ofMinutes(1));
			assertThat(Transitions.claim(store, "jobs", 5, Duration.ofMinutes(1))).isEmpty();
			assertThat(redis.opsForList().range(store.keys("jobs").ready(), 0, -1)).containsExactly("early", "later");
			assertThat(store.stats("jobs").inFlight()).isZero();
		});
	}

	@Test
	void claimCountsDueAndEarlyMessagesAgainstTheirOwnLimits() {
		ScriptTest.run((template, store, redis) -> {
			send(template, "due", Duration.ZERO);
			send(template, "early", Duration.ofSeconds(30));
			Transitions.promote(store, "jobs", 10, Duration.ofMinutes(1));
			List<ClaimedMessage> claimed = claim(store, 1, 1);
			assertThat(claimed).extracting(ClaimedMessage::id).containsExactly("due", "early");
			assertThat(claimed.get(0).dueIn()).isLessThanOrEqualTo(Duration.ZERO);
			assertThat(claimed.get(1).dueIn()).isPositive();
		});
	}

	@Test
	void aRateLimitedClaimTakesNoMoreThanTheSlidingWindowHasRoomForAtItsOwnTime() {
		withOffsetClock((store, clock) -> {
			RateLimit threePerHour = new RateLimit(3, HOUR);
			store.send("jobs", List.of(due("m1"), due("m2"), due("m3"), due("m4"), due("m5"), due("m6")));
			Transitions.promote(store, "jobs", 10, Duration.ZERO);
			ClaimResult first = claim(store, 2, threePerHour);
			assertThat(first.messages()).extracting(ClaimedMessage::id).containsExactly("m1", "m2");
			assertThat(first.rateLimitedFor()).isZero();
			clock.accept(Duration.ofMinutes(30));
			ClaimResult second = claim(store, 10, threePerHour);
			assertThat(second.messages()).extracting(ClaimedMessage::id).containsExactly("m3");
			assertThat(second.rateLimitedFor()).isBetween(Duration.ofMinutes(29), Duration.ofMinutes(30));
			// One second before the first two leave the window: still full, whatever a
			// fixed hourly bucket would say.
			clock.accept(HOUR.minusSeconds(1));
			ClaimResult atTheEdge = claim(store, 10, threePerHour);
			assertThat(atTheEdge.messages()).isEmpty();
			assertThat(atTheEdge.rateLimitedFor()).isBetween(Duration.ofMillis(1), Duration.ofSeconds(2));
			clock.accept(HOUR.plusSeconds(1));
			ClaimResult afterTheEdge = claim(store, 10, threePerHour);
			assertThat(afterTheEdge.messages()).extracting(ClaimedMessage::id).containsExactly("m4", "m5");
			assertThat(afterTheEdge.rateLimitedFor()).isBetween(Duration.ofMinutes(28), Duration.ofMinutes(30));
			assertThat(store.stats("jobs").ready()).isOne();
			assertThat(store.stats("jobs").inFlight()).isEqualTo(5);
		});
	}

	@Test
	void rateWindowEntriesLeaveAfterThePeriodAndTheKeyExpiresWithThem() {
		ScriptTest.run((template, store, redis) -> {
			RateLimit twoPer300Ms = new RateLimit(2, Duration.ofMillis(300));
			for (String id : List.of("a", "b", "c")) {
				send(template, id, Duration.ZERO);
			}
			Transitions.promote(store, "jobs", 10, Duration.ZERO);
			assertThat(claim(store, 10, twoPer300Ms).messages()).extracting(ClaimedMessage::id)
				.containsExactly("a", "b");
			ClaimResult held = claim(store, 10, twoPer300Ms);
			assertThat(held.messages()).isEmpty();
			assertThat(held.rateLimitedFor()).isBetween(Duration.ofMillis(1), Duration.ofMillis(300));
			String window = store.keys("jobs").rateWindow();
			assertThat(redis.getExpire(window, TimeUnit.MILLISECONDS)).isBetween(1L, 300L);
			List<ClaimedMessage> later = new ArrayList<>();
			await().atMost(Duration.ofSeconds(3))
				.pollInterval(Duration.ofMillis(20))
				.until(() -> later.addAll(claim(store, 10, twoPer300Ms).messages()));
			assertThat(later).extracting(ClaimedMessage::id).containsExactly("c");
			assertThat(redis.opsForZSet().size(window)).isOne();
			await().atMost(Duration.ofSeconds(3)).until(() -> !redis.hasKey(window));
		});
	}

	@Test
	void aRateLimitedClaimTakesNothingBeforeItIsDue() {
		ScriptTest.run((template, store, redis) -> {
			send(template, "early", Duration.ofSeconds(30));
			send(template, "due", Duration.ZERO);
			Transitions.promote(store, "jobs", 10, Duration.ofMinutes(1));
			ClaimResult claimed = Transitions.claim(store, "jobs", "consumer", LeaseTokens.newToken(), 5, 5,
					Duration.ofMinutes(1), new RateLimit(10, Duration.ofSeconds(1)));
			assertThat(claimed.messages()).extracting(ClaimedMessage::id).containsExactly("due");
			assertThat(redis.opsForList().range(store.keys("jobs").ready(), 0, -1)).containsExactly("early");
		});
	}

	@Test
	void aRateLimitedClaimSentAgainReturnsWhatItLeasedEvenWithTheWindowFull() {
		ScriptTest.run((template, store, redis) -> {
			send(template, "a", Duration.ZERO);
			send(template, "b", Duration.ZERO);
			Transitions.promote(store, "jobs", 10, Duration.ZERO);
			RateLimit onePerHour = new RateLimit(1, HOUR);
			ClaimResult first = Transitions.claim(store, "jobs", "consumer", "consumer.1", 5, 0, Duration.ofMinutes(1),
					onePerHour);
			ClaimResult again = Transitions.claim(store, "jobs", "consumer", "consumer.1", 5, 0, Duration.ofMinutes(1),
					onePerHour);
			assertThat(first.messages()).extracting(ClaimedMessage::id).containsExactly("a");
			assertThat(again.messages()).extracting(ClaimedMessage::id).containsExactly("a");
			assertThat(redis.opsForZSet().size(store.keys("jobs").rateWindow())).isOne();
			ClaimResult next = Transitions.claim(store, "jobs", "consumer", "consumer.2", 5, 0, Duration.ofMinutes(1),
					onePerHour);
			assertThat(next.messages()).isEmpty();
			assertThat(next.rateLimitedFor()).isGreaterThan(Duration.ofMinutes(59));
		});
	}

	@Test
	void aClaimWithoutRateLimitNeitherReadsNorWritesAWindow() {
		ScriptTest.run((template, store, redis) -> {
			String window = store.keys("jobs").rateWindow();
			send(template, "a", Duration.ZERO);
			Transitions.promote(store, "jobs", 10, Duration.ZERO);
			assertThat(claim(store, 5, 0)).hasSize(1);
			assertThat(redis.hasKey(window)).isFalse();
			// A full window (even one of the wrong type) changes nothing for it.
			redis.opsForValue().set(window, "not a window");
			send(template, "b", Duration.ZERO);
			Transitions.promote(store, "jobs", 10, Duration.ZERO);
			assertThat(claim(store, 5, 0)).extracting(ClaimedMessage::id).containsExactly("b");
			assertThat(redis.opsForValue().get(window)).isEqualTo("not a window");
		});
	}

	private static ClaimResult claim(RedisMessageStore store, int limit, RateLimit rateLimit) {
		return Transitions.claim(store, "jobs", "consumer", LeaseTokens.newToken(), limit, 0, Duration.ofMinutes(1),
				rateLimit);
	}

	private static NewMessage due(String id) {
		return NewMessage.afterDelay(id, Duration.ZERO, MessageFormat.encodeBody(Map.of(), new byte[] { 1 }));
	}

	/**
	 * Runs a test on a store whose scripts read the Redis clock plus an offset the test
	 * sets.
	 */
	private static void withOffsetClock(OffsetClockTest test) {
		try (TestStore fixture = TestStore.create()) {
			StringRedisTemplate redis = fixture.redis();
			String offsetKey = fixture.prefix() + ":clock";
			RedisMessageStore store = new RedisMessageStore(fixture.connectionFactory(), fixture.prefix(),
					RedisMessageStore.DEFAULT_TIMEOUT, ScriptClock.offsetBy(offsetKey));
			test.run(store, (offset) -> redis.opsForValue().set(offsetKey, String.valueOf(offset.toNanos() / 1000)));
		}
	}

	@FunctionalInterface
	private interface OffsetClockTest {

		void run(RedisMessageStore store, Consumer<Duration> setClockOffset);

	}

	private static List<ClaimedMessage> claim(RedisMessageStore store, int limit, int earlyLimit) {
		return Transitions
			.claim(store, "jobs", "consumer", LeaseTokens.newToken(), limit, earlyLimit, Duration.ofMinutes(1))
			.messages();
	}

	private static void send(DelayQueueTemplate template, String id, Duration delay) {
		template.send(DelayMessage.builder("jobs", "payload of " + id).id(id).delay(delay).build());
	}

}

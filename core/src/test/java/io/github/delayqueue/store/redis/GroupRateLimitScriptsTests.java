package io.github.delayqueue.store.redis;

import java.time.Duration;
import java.util.List;

import io.github.delayqueue.group.DelayQueueGroups;
import io.github.delayqueue.store.ClaimResult;
import io.github.delayqueue.store.ClaimedMessage;
import io.github.delayqueue.store.GroupWeights;
import io.github.delayqueue.store.LeaseTokens;
import io.github.delayqueue.store.MessageStore;
import io.github.delayqueue.store.RateLimit;
import io.github.delayqueue.store.WriteGate;
import org.junit.jupiter.api.Test;

import static io.github.delayqueue.store.redis.GroupScriptsSupport.LEASE;
import static io.github.delayqueue.store.redis.GroupScriptsSupport.TOPIC;
import static io.github.delayqueue.store.redis.GroupScriptsSupport.sendGroups;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The per-group rate limit through the claim script on a real Redis: a group takes at
 * most its limit at once, then waits, paused, until its next message is on time, while
 * the other groups and the messages of no group go on; the claim says when the first of
 * those pauses ends; the pace kept for a group is dropped once it is worth nothing.
 */
class GroupRateLimitScriptsTests {

	private static final RateLimit FIVE_A_SECOND = new RateLimit(5, Duration.ofSeconds(1));

	@Test
	void aGroupTakesOneThenWaitsPausedUntilItsNextMessageIsOnTime() {
		ScriptTest.run((template, store, redis) -> {
			sendGroups(store, 20, "a", "b");
			ClaimResult first = claim(store, 100, FIVE_A_SECOND);
			assertThat(countOf(first.messages(), "a")).isEqualTo(1);
			assertThat(countOf(first.messages(), "b")).isEqualTo(1);
			DelayQueueGroups groups = new DelayQueueGroups(store);
			assertThat(groups.group(TOPIC, "a").paused()).isTrue();
			assertThat(redis.opsForZSet().size(store.keys(TOPIC).groupRates())).isEqualTo(2);

			ClaimResult second = claim(store, 100, FIVE_A_SECOND);
			assertThat(second.messages()).as("both groups wait for their pace").isEmpty();
			assertThat(second.groupPauseEndsIn()).isPositive().isLessThanOrEqualTo(Duration.ofMillis(200));

			await().pollInterval(Duration.ofMillis(20))
				.atMost(Duration.ofSeconds(2))
				.until(() -> !claim(store, 100, FIVE_A_SECOND).messages().isEmpty());
		});
	}

	@Test
	void overASecondAndAHalfAGroupTakesOneMessageEveryTwoHundredMilliseconds() {
		ScriptTest.run((template, store, redis) -> {
			sendGroups(store, 40, "slow");
			long started = System.nanoTime();
			int taken = 0;
			while (System.nanoTime() - started < Duration.ofMillis(1500).toNanos()) {
				taken += claim(store, 100, FIVE_A_SECOND).messages().size();
				await().pollDelay(Duration.ofMillis(10)).until(() -> true);
			}
			// One every 200 ms: 8 in 1.5 s (at 0, 200, ... 1400 ms), one fewer when a
			// claim
			// comes late.
			assertThat(taken).isBetween(5, 8);
		});
	}

	@Test
	void withoutAPerGroupRateLimitThePacesAreNeitherReadNorKept() {
		ScriptTest.run((template, store, redis) -> {
			sendGroups(store, 20, "a");
			assertThat(claim(store, 100, null).messages()).hasSize(20);
			assertThat(redis.hasKey(store.keys(TOPIC).groupRates())).isFalse();
		});
	}

	@Test
	void aPaceThatIsWorthNothingIsDropped() {
		ScriptTest.run((template, store, redis) -> {
			sendGroups(store, 1, "a");
			sendGroups(store, 30, "b");
			RateLimit fast = new RateLimit(1000, Duration.ofMillis(10));
			claim(store, 1, fast);
			await().pollDelay(Duration.ofMillis(30)).until(() -> true);
			claim(store, 100, fast);
			assertThat(redis.opsForZSet().score(store.keys(TOPIC).groupRates(), "a"))
				.as("a's pace, past, leaves with the next claim")
				.isNull();
		});
	}

	private static ClaimResult claim(MessageStore store, int limit, RateLimit groupRateLimit) {
		String consumer = LeaseTokens.newToken();
		return ScriptCalls.await(store.topic(TOPIC)
			.claim(consumer, consumer + ".1", limit, 0, LEASE, null, 0, GroupWeights.NONE, groupRateLimit,
					WriteGate.OPEN));
	}

	private static long countOf(List<ClaimedMessage> claimed, String group) {
		return claimed.stream().filter((message) -> message.id().startsWith(group + "-")).count();
	}

}

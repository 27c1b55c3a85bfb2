package io.github.delayqueue.store;

import java.time.Duration;
import java.util.List;

import io.github.delayqueue.core.DelayMessage;
import io.github.delayqueue.core.DelayQueueTemplate;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code promote.lua} with a lookahead makes messages ready shortly before they are due
 * and tells when the next lease ends; {@code claim.lua} takes such early messages only up
 * to their own limit, leaving the rest at the head of the ready list in order. No
 * listener runs here.
 */
class PromoteAndClaimScriptsTests {

	@Test
	void promoteWithALookaheadMovesMessagesDueWithinItAndNoOthers() {
		ScriptTest.run((template, store, redis) -> {
			send(template, "soon", Duration.ofSeconds(30));
			send(template, "later", Duration.ofMinutes(5));
			PromoteResult promoted = store.promote("jobs", 10, Duration.ofMinutes(1));
			assertThat(promoted.moved()).isEqualTo(1);
			assertThat(promoted.nextDueIn()).isGreaterThan(Duration.ofMinutes(4));
			assertThat(redis.opsForList().range(store.keys("jobs").ready(), 0, -1)).containsExactly("soon");
		});
	}

	@Test
	void promoteTellsWhenTheEarliestLeaseEndsSoThatExpiryIsCheckedOnlyThen() {
		ScriptTest.run((template, store, redis) -> {
			assertThat(store.promote("jobs", 10, Duration.ZERO)).isEqualTo(new PromoteResult(0, null, null));
			send(template, "a", Duration.ZERO);
			send(template, "c", Duration.ZERO);
			send(template, "b", Duration.ofHours(1));
			assertThat(store.promote("jobs", 10, Duration.ZERO).nextLeaseEndIn()).isNull();
			store.claim("jobs", 1, Duration.ofMinutes(2));
			PromoteResult promoted = store.promote("jobs", 10, Duration.ZERO);
			assertThat(promoted.moved()).isZero();
			assertThat(promoted.nextLeaseEndIn()).isBetween(Duration.ofMinutes(1), Duration.ofMinutes(2));
			store.claim("jobs", 1, Duration.ZERO);
			assertThat(store.promote("jobs", 10, Duration.ZERO).nextLeaseEndIn()).isZero();
		});
	}

	@Test
	void claimTakesMessagesNotYetDueOnlyUpToTheirLimitAndPutsTheRestBackInOrder() {
		ScriptTest.run((template, store, redis) -> {
			send(template, "e1", Duration.ofSeconds(30));
			send(template, "e2", Duration.ofSeconds(31));
			send(template, "e3", Duration.ofSeconds(32));
			store.promote("jobs", 10, Duration.ofMinutes(1));
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
			store.promote("jobs", 10, Duration.ofMinutes(1));
			assertThat(store.claim("jobs", 5, Duration.ofMinutes(1))).isEmpty();
			assertThat(redis.opsForList().range(store.keys("jobs").ready(), 0, -1)).containsExactly("early", "later");
			assertThat(store.stats("jobs").inFlight()).isZero();
		});
	}

	@Test
	void claimCountsDueAndEarlyMessagesAgainstTheirOwnLimits() {
		ScriptTest.run((template, store, redis) -> {
			send(template, "due", Duration.ZERO);
			send(template, "early", Duration.ofSeconds(30));
			store.promote("jobs", 10, Duration.ofMinutes(1));
			List<ClaimedMessage> claimed = claim(store, 1, 1);
			assertThat(claimed).extracting(ClaimedMessage::id).containsExactly("due", "early");
			assertThat(claimed.get(0).dueIn()).isLessThanOrEqualTo(Duration.ZERO);
			assertThat(claimed.get(1).dueIn()).isPositive();
		});
	}

	private static List<ClaimedMessage> claim(RedisMessageStore store, int limit, int earlyLimit) {
		return store.claim("jobs", "consumer", RedisMessageStore.newToken(), limit, earlyLimit, Duration.ofMinutes(1))
			.messages();
	}

	private static void send(DelayQueueTemplate template, String id, Duration delay) {
		template.send(DelayMessage.builder("jobs", "payload of " + id).id(id).delay(delay).build());
	}

}

package io.github.delayqueue.store.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import io.github.delayqueue.testsupport.CommandStats;
import io.github.delayqueue.producer.DelayMessage;
import io.github.delayqueue.producer.DelayQueueTemplate;
import io.github.delayqueue.producer.SendResult;
import io.github.delayqueue.store.ClaimResult;
import io.github.delayqueue.store.ClaimedMessage;
import io.github.delayqueue.store.MessageState;
import io.github.delayqueue.store.MessageSummary;
import io.github.delayqueue.store.TopicStats;
import io.github.delayqueue.testsupport.Transitions;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The holes a review found in the scripts, each shown closed: a script that fails (a key
 * of the wrong type) changes nothing; a lease is proven by a token that does not move; a
 * request sent twice (a client that lost the reply) does what it did once; stale or early
 * ids at the head of the ready list stall nothing; dead letters of the same id are all
 * kept; large sends and claims stay within what one script call can take. No listener
 * runs here.
 */
class ScriptSafetyTests {

	private static final String TOPIC = "jobs";

	private static final Duration LEASE = Duration.ofMinutes(1);

	@Test
	void claimThatFailsOnAKeyOfTheWrongTypeLeavesTheReadyListAsItWas() {
		ScriptTest.run((template, store, redis) -> {
			send(template, "m1", Duration.ZERO);
			Transitions.promote(store, TOPIC, 10);
			redis.opsForValue().set(store.keys(TOPIC).scheduled(), "not a sorted set");
			assertThatThrownBy(() -> Transitions.claim(store, TOPIC, 1, LEASE)).satisfies(this::isWrongType);
			assertThat(redis.opsForList().range(store.keys(TOPIC).ready(), 0, -1)).containsExactly("m1");
			assertThat(redis.opsForZSet().zCard(store.keys(TOPIC).inFlight())).isZero();
		});
	}

	@Test
	void ackOfADeduplicatedMessageThatFailsOnThePrioritiesOfTheWrongTypeRemembersNothing() {
		ScriptTest.run((template, store, redis) -> {
			template.send(
					DelayMessage.builder(TOPIC, "payload of m1").id("m1").deduplicateFor(Duration.ofHours(1)).build());
			Transitions.promote(store, TOPIC, 10);
			List<ClaimedMessage> claimed = Transitions.claim(store, TOPIC, 1, LEASE);
			assertThat(claimed).extracting(ClaimedMessage::id).containsExactly("m1");
			redis.opsForValue().set(store.keys(TOPIC).priorities(), "not a hash");
			assertThatThrownBy(() -> Transitions.ack(store, TOPIC, "m1", claimed.get(0).leaseToken()))
				.satisfies(this::isWrongType);
			assertStillInFlight(store, redis, "m1");
			// Found by the model test: the id was remembered before the call failed.
			assertThat(redis.hasKey(store.keys(TOPIC).remembered())).isFalse();
		});
	}

	@Test
	void deadLetterThatFailsOnAKeyOfTheWrongTypeLeavesTheMessageInFlight() {
		ScriptTest.run((template, store, redis) -> {
			ClaimedMessage claimed = sendAndClaim(template, store, "m1");
			redis.opsForValue().set(store.keys(TOPIC).deadMessages(), "not a hash");
			assertThatThrownBy(() -> Transitions.deadLetter(store, TOPIC, "m1", claimed.leaseToken(), "boom"))
				.satisfies(this::isWrongType);
			assertStillInFlight(store, redis, "m1");
		});
	}

	@Test
	void deadLetterAndReplayThatFailOnTheDeadPrioritiesOfTheWrongTypeChangeNothing() {
		ScriptTest.run((template, store, redis) -> {
			ClaimedMessage claimed = sendAndClaim(template, store, "m1");
			ClaimedMessage dying = sendAndClaim(template, store, "m2");
			assertThat(Transitions.deadLetter(store, TOPIC, "m2", dying.leaseToken(), "boom")).isTrue();
			redis.opsForValue().set(store.keys(TOPIC).deadPriorities(), "not a hash");
			assertThatThrownBy(() -> Transitions.deadLetter(store, TOPIC, "m1", claimed.leaseToken(), "boom"))
				.satisfies(this::isWrongType);
			assertStillInFlight(store, redis, "m1");
			assertThatThrownBy(() -> store.replayDead(TOPIC, List.of("m2"))).satisfies(this::isWrongType);
			redis.delete(store.keys(TOPIC).deadPriorities());
			assertThat(store.inspect(TOPIC, "m2", 10).state()).isEqualTo(MessageState.DEAD);
		});
	}

	@Test
	void replayOfADeadLetterWithAPriorityThatFailsOnThePrioritiesOfTheWrongTypeLeavesItDead() {
		ScriptTest.run((template, store, redis) -> {
			template.send(DelayMessage.builder(TOPIC, "payload of m1").id("m1").priority(7).build());
			Transitions.promote(store, TOPIC, 10);
			ClaimedMessage claimed = Transitions.claim(store, TOPIC, 1, LEASE).get(0);
			assertThat(Transitions.deadLetter(store, TOPIC, "m1", claimed.leaseToken(), "boom")).isTrue();
			redis.opsForValue().set(store.keys(TOPIC).priorities(), "not a hash");
			assertThatThrownBy(() -> store.replayDead(TOPIC, List.of("m1"))).satisfies(this::isWrongType);
			redis.delete(store.keys(TOPIC).priorities());
			assertThat(store.inspect(TOPIC, "m1", 10).state()).isEqualTo(MessageState.DEAD);
			assertThat(store.inspect(TOPIC, "m1", 10).priority()).isEqualTo(7);
		});
	}

	@Test
	void leaseExpiryThatFailsOnAKeyOfTheWrongTypeLeavesTheMessageInFlight() {
		ScriptTest.run((template, store, redis) -> {
			send(template, "m1", Duration.ZERO);
			Transitions.promote(store, TOPIC, 10);
			assertThat(Transitions.claim(store, TOPIC, 1, Duration.ZERO)).hasSize(1);
			redis.opsForValue().set(store.keys(TOPIC).deadErrors(), "not a hash");
			assertThatThrownBy(() -> Transitions.expireLeases(store, TOPIC, 10, 1)).satisfies(this::isWrongType);
			assertStillInFlight(store, redis, "m1");
		});
	}

	@Test
	void retryThatFailsOnAKeyOfTheWrongTypeLeavesTheMessageInFlight() {
		ScriptTest.run((template, store, redis) -> {
			ClaimedMessage claimed = sendAndClaim(template, store, "m1");
			redis.opsForValue().set(store.keys(TOPIC).scheduled(), "not a sorted set");
			assertThatThrownBy(
					() -> Transitions.retry(store, TOPIC, "m1", claimed.leaseToken(), Duration.ofSeconds(1), null))
				.satisfies(this::isWrongType);
			assertStillInFlight(store, redis, "m1");
		});
	}

	@Test
	void releaseThatFailsOnAKeyOfTheWrongTypeLeavesTheMessageInFlight() {
		ScriptTest.run((template, store, redis) -> {
			ClaimedMessage claimed = sendAndClaim(template, store, "m1");
			redis.delete(store.keys(TOPIC).ready());
			redis.opsForValue().set(store.keys(TOPIC).ready(), "not a list");
			assertThatThrownBy(() -> Transitions.release(store, TOPIC, "m1", claimed.leaseToken()))
				.satisfies(this::isWrongType);
			assertStillInFlight(store, redis, "m1");
		});
	}

	@Test
	void extendingALeaseTwiceWithTheSameTokenKeepsTheLease() {
		ScriptTest.run((template, store, redis) -> {
			ClaimedMessage claimed = sendAndClaim(template, store, "m1");
			long first = Transitions.extendLease(store, TOPIC, "m1", claimed.leaseToken(), LEASE);
			// The same request again, as a client sends it after losing the first reply.
			long second = Transitions.extendLease(store, TOPIC, "m1", claimed.leaseToken(), LEASE);
			assertThat(first).isPositive();
			assertThat(second).isGreaterThanOrEqualTo(first);
			assertThat(Transitions.ack(store, TOPIC, "m1", claimed.leaseToken())).isTrue();
		});
	}

	@Test
	void aLeaseIsProvenByItsTokenAndNotByItsDeadline() {
		ScriptTest.run((template, store, redis) -> {
			ClaimedMessage claimed = sendAndClaim(template, store, "m1");
			assertThat(Transitions.ack(store, TOPIC, "m1", "someone else's token")).isFalse();
			assertThat(Transitions.retry(store, TOPIC, "m1", "someone else's token", Duration.ZERO, null))
				.isEqualTo(-1);
			assertThat(Transitions.deadLetter(store, TOPIC, "m1", "someone else's token", "x")).isFalse();
			assertThat(Transitions.release(store, TOPIC, "m1", "someone else's token")).isFalse();
			assertStillInFlight(store, redis, "m1");
			assertThat(Transitions.ack(store, TOPIC, "m1", claimed.leaseToken())).isTrue();
		});
	}

	@Test
	void claimRequestSentTwiceReturnsWhatTheFirstLeasedAndClaimsNothingNew() {
		ScriptTest.run((template, store, redis) -> {
			for (String id : List.of("m1", "m2", "m3")) {
				send(template, id, Duration.ZERO);
			}
			Transitions.promote(store, TOPIC, 10);
			ClaimResult first = Transitions.claim(store, TOPIC, "consumer-a", "consumer-a.1", 2, 0, LEASE);
			ClaimResult again = Transitions.claim(store, TOPIC, "consumer-a", "consumer-a.1", 2, 0, LEASE);
			assertThat(first.messages()).extracting(ClaimedMessage::id).containsExactly("m1", "m2");
			assertThat(again.messages()).extracting(ClaimedMessage::id).containsExactly("m1", "m2");
			assertThat(again.messages().get(0).leaseDeadlineMillis())
				.isEqualTo(first.messages().get(0).leaseDeadlineMillis());
			assertThat(redis.opsForList().range(store.keys(TOPIC).ready(), 0, -1)).containsExactly("m3");
			assertThat(Transitions.ack(store, TOPIC, List.of("m1", "m2"), List.of("consumer-a.1", "consumer-a.1")))
				.containsExactly(true, true);
			ClaimResult next = Transitions.claim(store, TOPIC, "consumer-a", "consumer-a.2", 2, 0, LEASE);
			assertThat(next.messages()).extracting(ClaimedMessage::id).containsExactly("m3");
		});
	}

	@Test
	void claimOfMoreThanOneScriptCallCanTakeIsRefusedBeforeAnythingMoves() {
		ScriptTest.run((template, store, redis) -> {
			send(template, "m1", Duration.ZERO);
			Transitions.promote(store, TOPIC, 10);
			assertThatIllegalArgumentException().isThrownBy(
					() -> Transitions.claim(store, TOPIC, "c", "c.1", RedisMessageStore.MAX_IDS_PER_CALL + 1, 0, LEASE))
				.withMessageContaining("1 to 1000");
			assertThat(redis.opsForList().range(store.keys(TOPIC).ready(), 0, -1)).containsExactly("m1");
		});
	}

	@Test
	void claimFromALargeBacklogLeasesAtMostTheLimitAndLosesNothing() {
		ScriptTest.run((template, store, redis) -> {
			List<DelayMessage> messages = new ArrayList<>();
			for (int i = 0; i < 3000; i++) {
				messages.add(DelayMessage.builder(TOPIC, "x").id("m" + i).build());
			}
			template.sendAll(messages);
			Transitions.promote(store, TOPIC, 5000);
			ClaimResult claimed = Transitions.claim(store, TOPIC, "c", "c.1", 1000, 1000, LEASE);
			assertThat(claimed.messages()).hasSize(1000);
			TopicStats stats = store.stats(TOPIC);
			assertThat(stats.inFlight()).isEqualTo(1000);
			assertThat(stats.ready()).isEqualTo(2000);
			assertThat(redis.opsForList().size(store.keys(TOPIC).ready())).isEqualTo(2000);
		});
	}

	@Test
	void aThousandLeasesAreExtendedAndHandedBackInOneCallEach() {
		ScriptTest.run((template, store, redis) -> {
			List<DelayMessage> messages = new ArrayList<>();
			for (int i = 0; i < 1000; i++) {
				messages.add(DelayMessage.builder(TOPIC, "x").id("m" + i).build());
			}
			template.sendAll(messages);
			Transitions.promote(store, TOPIC, 1000);
			List<ClaimedMessage> claimed = Transitions.claim(store, TOPIC, "c", "c.1", 1000, 0, LEASE).messages();
			List<String> ids = claimed.stream().map(ClaimedMessage::id).toList();
			List<String> tokens = claimed.stream().map(ClaimedMessage::leaseToken).toList();
			assertThat(Transitions.extendLeases(store, TOPIC, ids, tokens, LEASE.multipliedBy(2)))
				.allSatisfy((deadline) -> assertThat(deadline).isGreaterThan(claimed.get(0).leaseDeadlineMillis()));
			assertThat(Transitions.release(store, TOPIC, ids, tokens)).hasSize(1000).containsOnly(true);
			assertThat(redis.opsForList().range(store.keys(TOPIC).ready(), 0, -1)).as("at the head, in order")
				.containsExactlyElementsOf(ids);
			assertThat(redis.opsForZSet().zCard(store.keys(TOPIC).inFlight())).isZero();
		});
	}

	@Test
	void extensionsAndHandBacksOfMoreThanOneCallCanTakeOrWithoutATokenPerIdAreRefused() {
		ScriptTest.run((template, store, redis) -> {
			List<String> ids = new ArrayList<>();
			for (int i = 0; i <= RedisMessageStore.MAX_IDS_PER_CALL; i++) {
				ids.add("m" + i);
			}
			assertThatIllegalArgumentException()
				.isThrownBy(() -> Transitions.extendLeases(store, TOPIC, ids, ids, LEASE))
				.withMessage("A call takes 1 to 1000 message ids, but was given 1001");
			assertThatIllegalArgumentException().isThrownBy(() -> Transitions.release(store, TOPIC, ids, ids))
				.withMessage("A call takes 1 to 1000 message ids, but was given 1001");
			assertThatIllegalArgumentException()
				.isThrownBy(() -> Transitions.release(store, TOPIC, List.of("m1", "m2"), List.of("token")))
				.withMessage("A call takes one lease token per message id, but was given 2 ids and 1 lease tokens");
		});
	}

	@Test
	void cancelledIdsAtTheHeadOfTheReadyListAreClearedByClaimsThatSayMoreMayBeWaiting() {
		ScriptTest.run((template, store, redis) -> {
			List<DelayMessage> messages = new ArrayList<>();
			for (int i = 0; i < 2500; i++) {
				messages.add(DelayMessage.builder(TOPIC, "x").id("cancelled-" + i).build());
			}
			template.sendAll(messages);
			send(template, "live", Duration.ZERO);
			Transitions.promote(store, TOPIC, 5000);
			for (int i = 0; i < 2500; i++) {
				template.cancel(TOPIC, "cancelled-" + i);
			}
			List<ClaimResult> results = new ArrayList<>();
			ClaimResult result;
			do {
				result = Transitions.claim(store, TOPIC, "c", "c." + results.size(), 1, 0, LEASE);
				results.add(result);
			}
			while (result.messages().isEmpty() && result.more());
			assertThat(result.messages()).extracting(ClaimedMessage::id).containsExactly("live");
			assertThat(results).hasSize(3);
		});
	}

	@Test
	void dueIdsBehindEarlyOnesAreClaimedWhenThereIsNoRoomToHoldEarlyOnes() {
		ScriptTest.run((template, store, redis) -> {
			send(template, "early-1", Duration.ofSeconds(30));
			send(template, "early-2", Duration.ofSeconds(31));
			Transitions.promote(store, TOPIC, 10, Duration.ofMinutes(1));
			// A message whose lease expired goes to the tail of the ready list, behind
			// early ones.
			send(template, "due", Duration.ZERO);
			Transitions.promote(store, TOPIC, 10, Duration.ZERO);
			assertThat(redis.opsForList().range(store.keys(TOPIC).ready(), 0, -1)).containsExactly("early-1", "early-2",
					"due");
			ClaimResult claimed = Transitions.claim(store, TOPIC, "c", "c.1", 1, 0, LEASE);
			assertThat(claimed.messages()).extracting(ClaimedMessage::id).containsExactly("due");
			assertThat(redis.opsForList().range(store.keys(TOPIC).ready(), 0, -1)).containsExactly("early-1",
					"early-2");
		});
	}

	@Test
	void anIdThatDiesAgainKeepsItsEarlierDeadLetter() {
		ScriptTest.run((template, store, redis) -> {
			ClaimedMessage first = sendAndClaim(template, store, "order-1");
			assertThat(Transitions.deadLetter(store, TOPIC, "order-1", first.leaseToken(), "first failure")).isTrue();
			template.send(DelayMessage.builder(TOPIC, "second payload").id("order-1").build());
			Transitions.promote(store, TOPIC, 10);
			ClaimedMessage second = Transitions.claim(store, TOPIC, 1, LEASE).get(0);
			assertThat(Transitions.deadLetter(store, TOPIC, "order-1", second.leaseToken(), "second failure")).isTrue();
			List<MessageSummary> dead = store.page(TOPIC, MessageState.DEAD, 0, 10).messages();
			assertThat(dead).hasSize(2);
			assertThat(dead).extracting(MessageSummary::lastError)
				.containsExactlyInAnyOrder("first failure", "second failure");
			MessageSummary earlier = dead.stream()
				.filter((summary) -> !summary.id().equals("order-1"))
				.findFirst()
				.orElseThrow();
			assertThat(earlier.id()).startsWith("order-1~");
			assertThat(earlier.lastError()).isEqualTo("first failure");
			assertThat(store.inspect(TOPIC, "order-1", 100).lastError()).isEqualTo("second failure");
		});
	}

	@Test
	void purgeAndReplayOfTheOldestDeadLettersActOnIdsSoThatRunningTwiceChangesNothingMore() {
		ScriptTest.run((template, store, redis) -> {
			for (String id : List.of("d1", "d2", "d3", "d4")) {
				ClaimedMessage claimed = sendAndClaim(template, store, id);
				Transitions.deadLetter(store, TOPIC, id, claimed.leaseToken(), "boom");
			}
			assertThat(store.purgeDead(TOPIC, List.of("d1"))).isEqualTo(1);
			assertThat(store.purgeDead(TOPIC, List.of("d1"))).isZero();
			assertThat(store.replayDead(TOPIC, List.of("d2")).replayed()).containsExactly("d2");
			assertThat(store.replayDead(TOPIC, List.of("d2")).replayed()).isEmpty();
			assertThat(store.page(TOPIC, MessageState.DEAD, 0, 10).messages()).extracting(MessageSummary::id)
				.containsExactly("d3", "d4");
		});
	}

	@Test
	void callsWithoutIdsOrWithALimitOfZeroAreRefusedRatherThanTakenAsEverything() {
		ScriptTest.run((template, store, redis) -> {
			assertThatIllegalArgumentException().isThrownBy(() -> store.purgeDead(TOPIC, List.of()));
			assertThatIllegalArgumentException().isThrownBy(() -> store.replayDead(TOPIC, List.of()));
			assertThatIllegalArgumentException().isThrownBy(() -> store.purgeDead(TOPIC, 0));
			assertThatIllegalArgumentException().isThrownBy(() -> store.replayDead(TOPIC, 0, 0));
			assertThatIllegalArgumentException().isThrownBy(() -> store.page(TOPIC, MessageState.DEAD, 0, 0));
			assertThatIllegalArgumentException().isThrownBy(() -> Transitions.ack(store, TOPIC, List.of(), List.of()));
		});
	}

	@Test
	void sendOfTheSameMessageAgainIsNotADuplicateButAnotherMessageUnderItsIdIs() {
		ScriptTest.run((template, store, redis) -> {
			DelayMessage message = DelayMessage.builder(TOPIC, "pay order 1").id("order-1").delay(LEASE).build();
			SendResult first = template.send(message);
			// The same send again, as a client sends it after losing the first reply.
			SendResult again = template.send(message);
			SendResult other = template.send(DelayMessage.builder(TOPIC, "something else").id("order-1").build());
			assertThat(first.duplicate()).isFalse();
			assertThat(again.duplicate()).isFalse();
			assertThat(again.dueAt()).isEqualTo(first.dueAt());
			assertThat(other.duplicate()).isTrue();
			assertThat(store.stats(TOPIC).scheduled()).isEqualTo(1);
		});
	}

	@Test
	void largeSendsGoOutInBoundedScriptCallsAndEveryMessageIsStored() {
		ScriptTest.run((template, store, redis) -> {
			List<DelayMessage> messages = new ArrayList<>();
			for (int i = 0; i < 2000; i++) {
				messages
					.add(DelayMessage.builder((i % 2 == 0) ? TOPIC : "other", "x").id("m" + i).delay(LEASE).build());
			}
			long before = CommandStats.of(redis).scriptCalls();
			List<SendResult> results = template.sendAll(messages);
			long calls = CommandStats.of(redis).scriptCalls() - before;
			assertThat(results).hasSize(2000).noneMatch(SendResult::duplicate);
			assertThat(results).extracting(SendResult::id)
				.containsExactlyElementsOf(messages.stream().map(DelayMessage::id).toList());
			assertThat(calls).isGreaterThanOrEqualTo(2000 / RedisSends.MAX_SEND_CHUNK);
			assertThat(store.stats(TOPIC).scheduled() + store.stats("other").scheduled()).isEqualTo(2000);
		});
	}

	@Test
	void sendsAfterRedisLostItsScriptsAreStoredOnceAndNotReportedAsDuplicates() {
		ScriptTest.run((template, store, redis) -> {
			redis.execute((RedisCallback<String>) (connection) -> {
				connection.scriptingCommands().scriptFlush();
				return null;
			});
			List<SendResult> results = template.sendAll(List.of(DelayMessage.builder(TOPIC, "a").build(),
					DelayMessage.builder("other", "b").build(), DelayMessage.builder("third", "c").build()));
			assertThat(results).hasSize(3).noneMatch(SendResult::duplicate);
			assertThat(store.stats(TOPIC).ready() + store.stats(TOPIC).scheduled()).isEqualTo(1);
		});
	}

	private void isWrongType(Throwable ex) {
		assertThat(WrongTypeKeys.isWrongType(ex)).as("a WRONGTYPE failure: %s", ex).isTrue();
	}

	private static void assertStillInFlight(RedisMessageStore store, StringRedisTemplate redis, String id) {
		assertThat(redis.opsForZSet().score(store.keys(TOPIC).inFlight(), id)).isNotNull();
		assertThat(redis.opsForHash().hasKey(store.keys(TOPIC).messages(), id)).isTrue();
	}

	private static ClaimedMessage sendAndClaim(DelayQueueTemplate template, RedisMessageStore store, String id) {
		send(template, id, Duration.ZERO);
		Transitions.promote(store, TOPIC, 10);
		List<ClaimedMessage> claimed = Transitions.claim(store, TOPIC, 1, LEASE);
		assertThat(claimed).extracting(ClaimedMessage::id).containsExactly(id);
		return claimed.get(0);
	}

	private static void send(DelayQueueTemplate template, String id, Duration delay) {
		template.send(DelayMessage.builder(TOPIC, "payload of " + id).id(id).delay(delay).build());
	}

}

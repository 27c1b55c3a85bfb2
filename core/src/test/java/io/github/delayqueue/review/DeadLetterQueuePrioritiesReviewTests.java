package io.github.delayqueue.review;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

import io.github.delayqueue.convert.JsonPayloadConverter;
import io.github.delayqueue.producer.DelayMessage;
import io.github.delayqueue.producer.DelayQueueTemplate;
import io.github.delayqueue.store.ClaimResult;
import io.github.delayqueue.store.ClaimedMessage;
import io.github.delayqueue.store.DeadLetterRetention;
import io.github.delayqueue.store.LeaseTokens;
import io.github.delayqueue.store.MessagePage;
import io.github.delayqueue.store.MessageState;
import io.github.delayqueue.store.MessageSummary;
import io.github.delayqueue.store.PartitionCountException;
import io.github.delayqueue.store.RateLimit;
import io.github.delayqueue.store.TopicPartitions;
import io.github.delayqueue.store.redis.RedisMessageStore;
import io.github.delayqueue.store.redis.TopicKeys;
import io.github.delayqueue.test.redis.FaultyRedisProxy;
import io.github.delayqueue.testsupport.PartitionApps;
import io.github.delayqueue.testsupport.TestStore;
import io.github.delayqueue.testsupport.Transitions;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.util.unit.DataSize;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchRuntimeException;
import static org.awaitility.Awaitility.await;

/**
 * Review of "a dead-letter queue keeps priorities" (a copy of a dead letter goes onto the
 * dead-letter queue's ready list of its priority, its priority in the queue's priorities
 * hash): where it meets the queue's own transitions, lost replies, rate limits, keys of
 * the wrong type, partition count changes, lost data and the stats by priority, on real
 * Redis.
 */
class DeadLetterQueuePrioritiesReviewTests {

	private static final String TOPIC = "orders";

	private static final String QUEUE = TopicPartitions.deadLettersOf(TOPIC);

	private static final Duration LEASE = Duration.ofMinutes(1);

	private static final Duration WAIT = Duration.ofSeconds(10);

	@Test
	void aCopyOfPriorityNineReleasedRetriedAndAcknowledgedInTheQueueKeepsItsPriorityUntilItGoes() {
		try (TestStore fixture = TestStore.create()) {
			RedisMessageStore store = fixture.store();
			store.watchDeadLetters(TOPIC);
			kill(fixture, "low", 0);
			kill(fixture, "urgent", 9);

			ClaimedMessage first = claimOne(store, QUEUE);
			assertThat(first.id()).isEqualTo("urgent");
			assertThat(Transitions.release(store, QUEUE, "urgent", first.leaseToken())).isTrue();
			ClaimedMessage again = claimOne(store, QUEUE);
			assertThat(again.id()).as("released: back at the head of its priority's list").isEqualTo("urgent");
			assertThat(Transitions.retry(store, QUEUE, "urgent", again.leaseToken(), Duration.ofMillis(1), "boom"))
				.isPositive();
			assertThat(store.inspect(QUEUE, "urgent", 100).priority()).as("scheduled for its retry").isEqualTo(9);
			await().atMost(WAIT).until(() -> Transitions.promote(store, QUEUE, 10).moved() == 1);
			List<ClaimedMessage> both = Transitions.claim(store, QUEUE, 10, LEASE);
			assertThat(both).extracting(ClaimedMessage::id).containsExactly("urgent", "low");
			assertThat(Transitions.ack(store, QUEUE, both.stream().map(ClaimedMessage::id).toList(),
					both.stream().map(ClaimedMessage::leaseToken).toList()))
				.containsExactly(true, true);

			TopicKeys queue = store.keys(QUEUE);
			assertThat(fixture.redis().opsForHash().entries(queue.priorities())).as("queue priorities").isEmpty();
			assertThat(fixture.redis().opsForHash().entries(queue.messages())).as("queue messages").isEmpty();
			assertThat(store.stats(QUEUE).readyByPriority()).isEmpty();
		}
	}

	@Test
	void aCopyThatDiesInTheQueueKeepsItsPriorityAmongTheQueuesDeadLettersAndComesBackWithItWhenReplayed() {
		try (TestStore fixture = TestStore.create()) {
			RedisMessageStore store = fixture.store();
			store.watchDeadLetters(TOPIC);
			kill(fixture, "low", 0);
			kill(fixture, "urgent", 9);
			for (ClaimedMessage copy : Transitions.claim(store, QUEUE, 10, LEASE)) {
				assertThat(Transitions.deadLetter(store, QUEUE, copy.id(), copy.leaseToken(), "again")).isTrue();
			}
			TopicKeys queue = store.keys(QUEUE);
			StringRedisTemplate redis = fixture.redis();
			assertThat(redis.opsForHash().entries(queue.priorities())).isEmpty();
			assertThat(redis.opsForHash().entries(queue.deadPriorities())).isEqualTo(Map.of("urgent", "9"));
			assertThat(store.inspect(QUEUE, "urgent", 100).state()).isEqualTo(MessageState.DEAD);
			assertThat(store.inspect(QUEUE, "urgent", 100).priority()).isEqualTo(9);
			assertThat(store.stats(QUEUE).dead()).isEqualTo(2);
			assertThat(redis.opsForHash().size(store.keys(QUEUE).deadLetters().messages()))
				.as("the queue's own dead letters are copied nowhere")
				.isZero();

			assertThat(store.replayDead(QUEUE, List.of("low", "urgent")).replayed()).hasSize(2);
			assertThat(Transitions.promote(store, QUEUE, 10).moved()).isEqualTo(2);
			assertThat(Transitions.claim(store, QUEUE, 10, LEASE)).extracting(ClaimedMessage::id)
				.containsExactly("urgent", "low");
			assertThat(redis.opsForHash().entries(queue.deadPriorities())).isEmpty();
		}
	}

	@Test
	void aDeadLetterThatDiesTwiceIsQueuedTwiceWithItsPriorityAndEachCopyIsCancelledOrRescheduledByName() {
		try (TestStore fixture = TestStore.create()) {
			RedisMessageStore store = fixture.store();
			store.watchDeadLetters(TOPIC);
			kill(fixture, "urgent", 9);
			assertThat(store.replayDead(TOPIC, List.of("urgent")).replayed()).containsExactly("urgent");
			await().atMost(WAIT).until(() -> Transitions.promote(store, TOPIC, 10).moved() == 1);
			ClaimedMessage replayed = claimOne(store, TOPIC);
			assertThat(Transitions.deadLetter(store, TOPIC, "urgent", replayed.leaseToken(), "failed")).isTrue();

			TopicKeys queue = store.keys(QUEUE);
			StringRedisTemplate redis = fixture.redis();
			List<String> names = redis.opsForList().range(queue.ready(9), 0, -1);
			assertThat(names).hasSize(2).first().isEqualTo("urgent");
			String second = names.get(1);
			assertThat(second).matches("urgent~[0-9]+~*");
			assertThat(redis.opsForHash().entries(queue.priorities())).isEqualTo(Map.of("urgent", "9", second, "9"));
			assertThat(store.inspect(QUEUE, second, 100).priority()).isEqualTo(9);

			assertThat(store.cancel(QUEUE, second)).isTrue();
			assertThat(redis.opsForHash().entries(queue.priorities())).isEqualTo(Map.of("urgent", "9"));
			assertThat(store.reschedule(QUEUE, "urgent", Duration.ofHours(1))).isPositive();
			assertThat(store.inspect(QUEUE, "urgent", 100).state()).isEqualTo(MessageState.SCHEDULED);
			assertThat(store.inspect(QUEUE, "urgent", 100).priority()).isEqualTo(9);
			assertThat(Transitions.claim(store, QUEUE, 10, LEASE)).as("nothing ready: both names dropped").isEmpty();
			assertThat(redis.opsForList().size(queue.ready(9))).isZero();
		}
	}

	@Test
	void aDeadLetterWhoseReplyWasLostAndThatLettuceSentAgainIsQueuedOnceWithItsPriority() {
		try (TestStore fixture = TestStore.builder().behindProxy().build()) {
			RedisMessageStore store = fixture.store();
			FaultyRedisProxy proxy = fixture.proxy();
			store.watchDeadLetters(TOPIC);
			kill(fixture, "warm-up", 0);
			send(fixture.template(), "urgent", 9);
			Transitions.promote(store, TOPIC, 10);
			ClaimedMessage claimed = claimOne(store, TOPIC);
			// The dead-letter call is sent in full (EVAL): see
			// RedisTopicStore.deadLetter.
			int before = proxy.forwardedCount(FaultyRedisProxy.named("EVAL"));
			FaultyRedisProxy.Fault fault = proxy.dropNextReplyTo(FaultyRedisProxy.named("EVAL"));
			Transitions.deadLetter(store, TOPIC, "urgent", claimed.leaseToken(), "failed");
			assertThat(fault.awaitFired(WAIT)).isTrue();
			assertThat(proxy.forwardedCount(FaultyRedisProxy.named("EVAL")) - before).as("sent twice").isEqualTo(2);

			assertQueuedOnce(fixture, "urgent");
			assertThat(Transitions.claim(store, QUEUE, 10, LEASE)).extracting(ClaimedMessage::id)
				.containsExactly("urgent", "warm-up");
		}
	}

	@Test
	void aDeadLetterWhoseReplyCameAfterTheTimeoutAndThatIsSentAgainIsQueuedOnceWithItsPriority() {
		try (TestStore fixture = TestStore.builder().behindProxy().sendTimeout(Duration.ofMillis(500)).build()) {
			RedisMessageStore store = fixture.store();
			FaultyRedisProxy proxy = fixture.proxy();
			store.watchDeadLetters(TOPIC);
			kill(fixture, "warm-up", 0);
			send(fixture.template(), "urgent", 9);
			Transitions.promote(store, TOPIC, 10);
			ClaimedMessage claimed = claimOne(store, TOPIC);
			FaultyRedisProxy.Fault fault = proxy.delayNextReplyTo(FaultyRedisProxy.named("EVAL"),
					Duration.ofMillis(1500));
			assertThatThrownBy(() -> Transitions.deadLetter(store, TOPIC, "urgent", claimed.leaseToken(), "failed"))
				.as("timed out, though it ran")
				.isInstanceOf(RuntimeException.class);
			assertThat(fault.awaitFired(WAIT)).isTrue();
			await().atMost(WAIT)
				.ignoreExceptions()
				.until(() -> !Transitions.deadLetter(store, TOPIC, "urgent", claimed.leaseToken(), "failed"));

			assertQueuedOnce(fixture, "urgent");
		}
	}

	@Test
	void aLeaseExpiryWhoseReplyWasLostAndThatLettuceSentAgainQueuesItsDeadLetterOnceWithItsPriority() {
		try (TestStore fixture = TestStore.builder().behindProxy().build()) {
			RedisMessageStore store = fixture.store();
			FaultyRedisProxy proxy = fixture.proxy();
			store.watchDeadLetters(TOPIC);
			Transitions.expireLeases(store, TOPIC, 10, 1); // loads the script
			send(fixture.template(), "urgent", 9);
			Transitions.promote(store, TOPIC, 10);
			assertThat(Transitions.claim(store, TOPIC, 10, Duration.ofMillis(1))).hasSize(1);
			await().atMost(WAIT)
				.until(() -> store.stats(TOPIC).nowMillis() > 0
						&& store.inspect(TOPIC, "urgent", 10).score() < store.stats(TOPIC).nowMillis());
			int before = proxy.forwardedCount(FaultyRedisProxy.named("EVALSHA"));
			FaultyRedisProxy.Fault fault = proxy.dropNextReplyTo(FaultyRedisProxy.named("EVALSHA"));
			Transitions.expireLeases(store, TOPIC, 10, 1);
			assertThat(fault.awaitFired(WAIT)).isTrue();
			assertThat(proxy.forwardedCount(FaultyRedisProxy.named("EVALSHA")) - before).as("sent twice").isEqualTo(2);

			assertQueuedOnce(fixture, "urgent");
		}
	}

	@Test
	void aLeaseExpiryOfSeveralLastAttemptsQueuesEachDeadLetterOnTheListOfItsPriorityInTheOrderTheyDied() {
		try (TestStore fixture = TestStore.create()) {
			RedisMessageStore store = fixture.store();
			store.watchDeadLetters(TOPIC);
			List<String> ids = List.of("a", "b", "c", "d", "e");
			List<Integer> priorities = List.of(0, 9, 3, 9, 0);
			for (int i = 0; i < ids.size(); i++) {
				send(fixture.template(), ids.get(i), priorities.get(i));
			}
			Transitions.promote(store, TOPIC, 10);
			assertThat(Transitions.claim(store, TOPIC, 10, Duration.ofMillis(1))).hasSize(5);
			List<String> buried = new ArrayList<>();
			await().atMost(WAIT).until(() -> {
				buried.addAll(Transitions.expireLeases(store, TOPIC, 10, 1).deadLettered());
				return buried.size() == 5;
			});
			TopicKeys queue = store.keys(QUEUE);
			StringRedisTemplate redis = fixture.redis();
			assertThat(redis.opsForHash().entries(queue.priorities())).isEqualTo(Map.of("b", "9", "c", "3", "d", "9"));
			assertThat(redis.opsForHash().entries(store.keys(TOPIC).priorities())).isEmpty();
			List<String> claimed = Transitions.claim(store, QUEUE, 10, LEASE).stream().map(ClaimedMessage::id).toList();
			assertThat(claimed).hasSize(5);
			assertThat(claimed.subList(0, 2)).containsExactlyInAnyOrder("b", "d");
			assertThat(claimed.subList(2, 5)).first().isEqualTo("c");
			assertThat(claimed.subList(3, 5)).containsExactlyInAnyOrder("a", "e");
		}
	}

	@Test
	void aBatchClaimOfTheQueueWithinARateLimitTakesItsDeadLettersByPriority() {
		try (TestStore fixture = TestStore.create()) {
			RedisMessageStore store = fixture.store();
			store.watchDeadLetters(TOPIC);
			kill(fixture, "a", 0);
			kill(fixture, "b", 3);
			kill(fixture, "c", 9);
			kill(fixture, "d", 0);
			kill(fixture, "e", 9);
			RateLimit limit = new RateLimit(3, Duration.ofMinutes(1));
			String consumer = LeaseTokens.newToken();
			ClaimResult batch = Transitions.claim(store, QUEUE, consumer, consumer + ".0", 10, 0, LEASE, limit);
			assertThat(batch.messages()).extracting(ClaimedMessage::id).containsExactly("c", "e", "b");
			ClaimResult held = Transitions.claim(store, QUEUE, consumer, consumer + ".1", 10, 0, LEASE, limit);
			assertThat(held.messages()).as("the rate limit holds the rest back").isEmpty();
			assertThat(store.stats(QUEUE).readyByPriority()).as("ready by priority").isEqualTo(Map.of(0, 2L));
		}
	}

	@Test
	void aReadyListOfPriorityNineOfTheWrongTypeRefusesTheDeadLetterBeforeAnyWriteAndTheRepairMovesItAside() {
		try (TestStore fixture = TestStore.create()) {
			RedisMessageStore store = fixture.store();
			StringRedisTemplate redis = fixture.redis();
			TopicKeys queue = store.keys(QUEUE);
			store.watchDeadLetters(TOPIC);
			redis.opsForValue().set(queue.ready(9), "not a list");
			send(fixture.template(), "urgent", 9);
			Transitions.promote(store, TOPIC, 10);
			ClaimedMessage claimed = claimOne(store, TOPIC);

			RuntimeException refused = catchRuntimeException(
					() -> Transitions.deadLetter(store, TOPIC, "urgent", claimed.leaseToken(), "failed"));
			assertThat(refused).hasStackTraceContaining("WRONGTYPE");
			assertThat(store.inspect(TOPIC, "urgent", 100).state()).as("still in flight")
				.isEqualTo(MessageState.IN_FLIGHT);
			assertThat(store.inspect(TOPIC, "urgent", 100).priority()).isEqualTo(9);
			assertThat(store.stats(TOPIC).dead()).isZero();
			assertThat(redis.opsForHash().size(queue.messages())).isZero();
			assertThat(redis.opsForHash().size(queue.priorities())).isZero();

			List<String> moved = store.topic(TOPIC).repairAfter(refused);
			assertThat(moved).singleElement().asString().startsWith(queue.ready(9) + " (string");
			assertThat(Transitions.deadLetter(store, TOPIC, "urgent", claimed.leaseToken(), "failed")).isTrue();
			assertThat(claimOne(store, QUEUE).id()).isEqualTo("urgent");
		}
	}

	/**
	 * A copy of no priority takes a name whose entry in the queue's priorities hash was
	 * left behind: here the queue's messages hash was overwritten by another writer (the
	 * copy of priority 9 went with it), a claim then dropped the name from the list of 9,
	 * and the repair moved the overwritten key aside. {@code send.lua} drops such an
	 * entry for a message of no priority; {@code queue_dead_letter} kept it, so the new
	 * copy, on the plain ready list under a priority of 9, was dropped by every claim and
	 * never delivered.
	 */
	@Test
	void aCopyOfNoPriorityUnderANameWhosePriorityWasLeftBehindIsStillClaimed() {
		try (TestStore fixture = TestStore.create()) {
			RedisMessageStore store = fixture.store();
			StringRedisTemplate redis = fixture.redis();
			TopicKeys queue = store.keys(QUEUE);
			store.watchDeadLetters(TOPIC);
			kill(fixture, "urgent", 9);
			redis.opsForValue().set(queue.messages(), "written by something else");
			RuntimeException claimRefused = catchRuntimeException(() -> Transitions.claim(store, QUEUE, 10, LEASE));
			assertThat(store.topic(QUEUE).repairAfter(claimRefused)).hasSize(1);
			assertThat(Transitions.claim(store, QUEUE, 10, LEASE)).as("the name dropped from the list of 9").isEmpty();
			assertThat(redis.opsForHash().entries(queue.priorities())).as("left behind")
				.isEqualTo(Map.of("urgent", "9"));

			kill(fixture, "urgent", 0);
			assertThat(Transitions.claim(store, QUEUE, 10, LEASE)).extracting(ClaimedMessage::id)
				.containsExactly("urgent");
			assertThat(store.inspect(QUEUE, "urgent", 100).priority()).isZero();
		}
	}

	/**
	 * Once the queue's priorities hash is moved aside, the copy on the list of 9 has no
	 * entry: a claim takes it there, as its body names priority 9 (hole, fixed: claim
	 * read only the plain list while the hash was empty, then, once a later copy had a
	 * priority, dropped it as of priority 0; it stayed stored, counted as ready, never
	 * delivered).
	 */
	@Test
	void aCopyOfPriorityNineIsStillClaimedAfterTheQueuesPrioritiesHashWasOverwrittenAndMovedAside() {
		try (TestStore fixture = TestStore.create()) {
			RedisMessageStore store = fixture.store();
			TopicKeys queue = store.keys(QUEUE);
			store.watchDeadLetters(TOPIC);
			kill(fixture, "urgent", 9);
			fixture.redis().opsForValue().set(queue.priorities(), "written by something else");
			RuntimeException claimRefused = catchRuntimeException(() -> Transitions.claim(store, QUEUE, 10, LEASE));
			assertThat(store.topic(QUEUE).repairAfter(claimRefused)).hasSize(1);
			kill(fixture, "later", 5);

			assertThat(Transitions.claim(store, QUEUE, 10, LEASE)).extracting(ClaimedMessage::id)
				.contains("urgent", "later");
		}
	}

	@Test
	void aPrioritiesHashOfTheWrongTypeInTheQueueRefusesTheLeaseExpiryBeforeAnyWriteAndTheRepairMovesItAside() {
		try (TestStore fixture = TestStore.create()) {
			RedisMessageStore store = fixture.store();
			StringRedisTemplate redis = fixture.redis();
			TopicKeys queue = store.keys(QUEUE);
			store.watchDeadLetters(TOPIC);
			redis.opsForList().rightPush(queue.priorities(), "not a hash");
			send(fixture.template(), "plain", 0);
			Transitions.promote(store, TOPIC, 10);
			assertThat(Transitions.claim(store, TOPIC, 10, Duration.ofMillis(1))).hasSize(1);
			await().atMost(WAIT)
				.until(() -> store.inspect(TOPIC, "plain", 10).score() < store.stats(TOPIC).nowMillis());

			RuntimeException refused = catchRuntimeException(() -> Transitions.expireLeases(store, TOPIC, 10, 1));
			assertThat(refused).hasStackTraceContaining("WRONGTYPE");
			assertThat(store.inspect(TOPIC, "plain", 100).state()).isEqualTo(MessageState.IN_FLIGHT);
			assertThat(store.stats(TOPIC).dead()).isZero();

			assertThat(store.topic(TOPIC).repairAfter(refused)).singleElement()
				.asString()
				.startsWith(queue.priorities() + " (list");
			assertThat(Transitions.expireLeases(store, TOPIC, 10, 1).deadLettered()).containsExactly("plain");
			assertThat(claimOne(store, QUEUE).id()).isEqualTo("plain");
		}
	}

	@Test
	void aCountChangeWaitsForTheCopiesWithAPriorityInEveryPartitionsQueueAndTheirStatsAddUp() {
		try (PartitionApps apps = new PartitionApps()) {
			RedisMessageStore three = apps.store(3, Duration.ofSeconds(5));
			three.watchDeadLetters(PartitionApps.TOPIC);
			DelayQueueTemplate template = template(three);
			String inTwo = PartitionApps.idIn(2, 3, "urgent-");
			String inZero = PartitionApps.idIn(0, 3, "low-");
			String partition = killIn(three, template, inTwo, 9);
			killIn(three, template, inZero, 0);
			String queueOfTwo = TopicPartitions.deadLettersOf(partition);
			String queues = TopicPartitions.deadLettersOf(PartitionApps.TOPIC);
			assertThat(three.stats(queues).ready()).isEqualTo(2);
			assertThat(three.stats(queues).readyByPriority()).isEqualTo(Map.of(0, 1L, 9, 1L));
			assertThat(three.inspect(queues, inTwo, 100).priority()).isEqualTo(9);

			RedisMessageStore one = apps.store(1, Duration.ofSeconds(5));
			assertThatThrownBy(() -> one.agreePartitions(PartitionApps.TOPIC))
				.isInstanceOf(PartitionCountException.class);
			assertThat(apps.redis().opsForValue().get(three.keys(PartitionApps.TOPIC).partitionCount())).isEqualTo("3");

			ClaimedMessage copy = claimOne(three, queueOfTwo);
			assertThat(copy.id()).isEqualTo(inTwo);
			assertThat(Transitions.ack(three, queueOfTwo, inTwo, copy.leaseToken())).isTrue();
			assertThat(three.purgeDead(PartitionApps.TOPIC, List.of(inTwo))).isOne();
			assertThat(apps.redis().opsForHash().size(three.keys(queueOfTwo).priorities())).isZero();
			one.agreePartitions(PartitionApps.TOPIC);
			assertThat(one.stats(queues).ready()).isOne();
			assertThat(one.stats(queues).readyByPriority()).isEmpty();

			// And back to 3: refused while partition 0's queue holds copies, one of them
			// with a priority, which its consumers still take first.
			String urgent = killIn(one, template(one), PartitionApps.idIn(2, 3, "again-"), 9);
			assertThat(urgent).isEqualTo(PartitionApps.TOPIC);
			RedisMessageStore threeAgain = apps.store(3, Duration.ofSeconds(5));
			assertThatThrownBy(() -> threeAgain.agreePartitions(PartitionApps.TOPIC))
				.isInstanceOf(PartitionCountException.class);
			assertThat(Transitions.claim(one, queues, 10, LEASE)).extracting(ClaimedMessage::id)
				.containsExactly(PartitionApps.idIn(2, 3, "again-"), inZero);
		}
	}

	@Test
	void aDeadLetterOfPriorityNineAfterTheQueuesDataWasLostIsQueuedOnItsListAgain() {
		try (TestStore fixture = TestStore.create()) {
			RedisMessageStore store = fixture.store();
			StringRedisTemplate redis = fixture.redis();
			store.watchDeadLetters(TOPIC);
			kill(fixture, "before", 9);
			Set<String> keys = redis.keys(fixture.prefix() + ":*");
			assertThat(keys).contains(store.keys(TOPIC).deadLettersWatch());
			redis.delete(keys);

			kill(fixture, "after", 9);
			assertThat(redis.hasKey(store.keys(TOPIC).deadLettersWatch())).as("watch set again").isTrue();
			assertThat(redis.opsForList().range(store.keys(QUEUE).ready(9), 0, -1)).containsExactly("after");
			assertThat(claimOne(store, QUEUE).id()).isEqualTo("after");
		}
	}

	@Test
	void thePageOfTheQueuesReadyMessagesListsTheCopiesMostUrgentFirstWithTheirPriorities() {
		try (TestStore fixture = TestStore.create()) {
			RedisMessageStore store = fixture.store();
			store.watchDeadLetters(TOPIC);
			kill(fixture, "a", 0);
			kill(fixture, "b", 3);
			kill(fixture, "c", 9);
			MessagePage page = store.page(QUEUE, MessageState.READY, 0, 10);
			assertThat(page.total()).isEqualTo(3);
			assertThat(page.messages()).extracting(MessageSummary::id).containsExactly("c", "b", "a");
			assertThat(page.messages()).extracting(MessageSummary::priority).containsExactly(9, 3, 0);
		}
	}

	@Test
	void theRetentionAndThePurgeOfTheQueuesOwnDeadLettersDeleteTheirPrioritiesWithThem() {
		try (TestStore fixture = TestStore.builder()
			.deadLetterRetention((topic) -> new DeadLetterRetention(1, Duration.ZERO))
			.build()) {
			RedisMessageStore store = fixture.store();
			store.watchDeadLetters(TOPIC);
			kill(fixture, "older", 9);
			kill(fixture, "newer", 3);
			Map<String, String> priorities = Map.of("older", "9", "newer", "3");
			StringRedisTemplate redis = fixture.redis();
			// The one kept: the later to die, or of two that died in the same
			// millisecond,
			// the later by name.
			String kept = redis.opsForZSet().range(store.keys(TOPIC).dead(), 0, -1).iterator().next();
			assertThat(redis.opsForHash().entries(store.keys(TOPIC).deadPriorities()))
				.isEqualTo(Map.of(kept, priorities.get(kept)));
			List<ClaimedMessage> copies = Transitions.claim(store, QUEUE, 10, LEASE);
			assertThat(copies).extracting(ClaimedMessage::id).containsExactly("older", "newer");
			for (ClaimedMessage copy : copies) {
				assertThat(Transitions.deadLetter(store, QUEUE, copy.id(), copy.leaseToken(), "again")).isTrue();
			}
			TopicKeys queue = store.keys(QUEUE);
			Set<String> left = redis.opsForZSet().range(queue.dead(), 0, -1);
			assertThat(left).hasSize(1);
			String survivor = left.iterator().next();
			assertThat(redis.opsForHash().entries(queue.deadPriorities()))
				.isEqualTo(Map.of(survivor, priorities.get(survivor)));
			assertThat(redis.opsForHash().entries(queue.priorities())).isEmpty();
			assertThat(store.purgeDead(QUEUE, List.of(survivor))).isOne();
			assertThat(redis.opsForHash().entries(queue.deadPriorities())).as("purged with it").isEmpty();
		}
	}

	/** The dead letter is in the dead set and its copy in the queue, once each. */
	private static void assertQueuedOnce(TestStore fixture, String id) {
		RedisMessageStore store = fixture.store();
		StringRedisTemplate redis = fixture.redis();
		TopicKeys queue = store.keys(QUEUE);
		assertThat(redis.opsForList().range(queue.ready(9), 0, -1)).as("queue's list of 9").containsExactly(id);
		assertThat(redis.opsForHash().entries(queue.priorities())).as("queue's priorities").isEqualTo(Map.of(id, "9"));
		assertThat(redis.opsForHash().keys(queue.messages())).as("queue's messages").contains(id).noneMatch((name) -> {
			String text = (String) name;
			return text.startsWith(id + "~");
		});
		assertThat(redis.opsForHash().entries(store.keys(TOPIC).priorities())).as("topic's priorities").isEmpty();
		assertThat(redis.opsForHash().entries(store.keys(TOPIC).deadPriorities())).as("topic's dead priorities")
			.containsEntry(id, "9");
		assertThat(redis.opsForZSet().range(store.keys(TOPIC).dead(), 0, -1)).contains(id);
	}

	private static ClaimedMessage claimOne(RedisMessageStore store, String partition) {
		List<ClaimedMessage> claimed = Transitions.claim(store, partition, 1, LEASE);
		assertThat(claimed).hasSize(1);
		return claimed.get(0);
	}

	private static void send(DelayQueueTemplate template, String id, int priority) {
		template.send(DelayMessage.builder(TOPIC, "body of " + id).id(id).priority(priority).build());
	}

	/** Sends a message of the priority and lets it fail for good on its first attempt. */
	private static void kill(TestStore fixture, String id, int priority) {
		RedisMessageStore store = fixture.store();
		send(fixture.template(), id, priority);
		Transitions.promote(store, TOPIC, 10);
		ClaimedMessage claimed = claimOne(store, TOPIC);
		assertThat(claimed.id()).isEqualTo(id);
		assertThat(Transitions.deadLetter(store, TOPIC, id, claimed.leaseToken(), "failed")).isTrue();
	}

	/** The same on a partitioned topic; returns the partition it died in. */
	private static String killIn(RedisMessageStore store, DelayQueueTemplate template, String id, int priority) {
		template.send(DelayMessage.builder(PartitionApps.TOPIC, "body of " + id).id(id).priority(priority).build());
		String partition = store.partitions().nameFor(PartitionApps.TOPIC, id);
		Transitions.promote(store, partition, 10);
		ClaimedMessage claimed = claimOne(store, partition);
		assertThat(Transitions.deadLetter(store, partition, id, claimed.leaseToken(), "failed")).isTrue();
		return partition;
	}

	private static DelayQueueTemplate template(RedisMessageStore store) {
		return new DelayQueueTemplate(store, new JsonPayloadConverter(new JsonMapper()), DataSize.ofMegabytes(1),
				false);
	}

}

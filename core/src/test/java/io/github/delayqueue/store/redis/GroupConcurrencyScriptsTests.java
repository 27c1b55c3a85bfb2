package io.github.delayqueue.store.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;

import io.github.delayqueue.store.ClaimedMessage;
import io.github.delayqueue.store.LeaseTokens;
import io.github.delayqueue.testsupport.Transitions;
import org.junit.jupiter.api.Test;

import static io.github.delayqueue.store.redis.GroupScriptsSupport.LEASE;
import static io.github.delayqueue.store.redis.GroupScriptsSupport.TOPIC;
import static io.github.delayqueue.store.redis.GroupScriptsSupport.claim;
import static io.github.delayqueue.store.redis.GroupScriptsSupport.ids;
import static io.github.delayqueue.store.redis.GroupScriptsSupport.message;
import static io.github.delayqueue.store.redis.GroupScriptsSupport.sendGroups;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The group concurrency limit through the scripts on a real Redis: a claim takes no more
 * of a group than its free slots, a group at its limit is parked in the rotation until
 * one of its messages leaves flight (ack, retry, dead letter, an expired lease, a
 * hand-back), and the slots are counted whether a claim has a limit or not.
 */
class GroupConcurrencyScriptsTests {

	@Test
	void aClaimTakesNoMoreOfAGroupThanItsLimitAndParksTheGroupsAtTheirLimit() {
		ScriptTest.run((template, store, redis) -> {
			sendGroups(store, 5, "g", "h");
			List<ClaimedMessage> first = claim(store, 10, 1);
			assertThat(ids(first)).containsExactlyInAnyOrder("g-0", "h-0");
			assertThat(claim(store, 10, 1)).as("both groups at their limit").isEmpty();
			assertThat(redis.opsForHash().entries(store.keys(TOPIC).groupSlots())).containsEntry("g", "1")
				.containsEntry("h", "1");
			assertThat(redis.opsForZSet().score(store.keys(TOPIC).groupRotation(), "g"))
				.isEqualTo(Double.POSITIVE_INFINITY);
			assertThat(redis.opsForHash().get(store.keys(TOPIC).groupCounts(), "g")).isEqualTo("4");
		});
	}

	@Test
	void aLimitOfTwoTakesTwoOfEachGroupInOneClaim() {
		ScriptTest.run((template, store, redis) -> {
			sendGroups(store, 5, "g", "h", "i");
			assertThat(ids(claim(store, 100, 2))).containsExactlyInAnyOrder("g-0", "g-1", "h-0", "h-1", "i-0", "i-1");
			assertThat(claim(store, 100, 2)).isEmpty();
		});
	}

	@Test
	void anAckFreesTheSlotAndTheGroupsNextMessageComesInDueOrder() {
		ScriptTest.run((template, store, redis) -> {
			sendGroups(store, 3, "g");
			List<String> handled = new ArrayList<>();
			for (int i = 0; i < 3; i++) {
				List<ClaimedMessage> claimed = claim(store, 10, 1);
				assertThat(claimed).hasSize(1);
				assertThat(claim(store, 10, 1)).isEmpty();
				handled.add(claimed.get(0).id());
				assertThat(Transitions.ack(store, TOPIC, claimed.get(0).id(), claimed.get(0).leaseToken())).isTrue();
			}
			assertThat(handled).containsExactly("g-0", "g-1", "g-2");
			assertThat(redis.hasKey(store.keys(TOPIC).groupSlots())).isFalse();
			assertThat(redis.opsForZSet().size(store.keys(TOPIC).groupRotation())).isZero();
		});
	}

	@Test
	void aRetryFreesTheSlotWhileTheMessageWaitsForItsNextAttempt() {
		ScriptTest.run((template, store, redis) -> {
			sendGroups(store, 2, "g");
			ClaimedMessage first = claim(store, 10, 1).get(0);
			assertThat(Transitions.retry(store, TOPIC, first.id(), first.leaseToken(), Duration.ofMinutes(5), "boom"))
				.isPositive();
			assertThat(ids(claim(store, 10, 1))).containsExactly("g-1");
			assertThat(redis.opsForHash().get(store.keys(TOPIC).groupSlots(), "g")).isEqualTo("1");
		});
	}

	@Test
	void aDeadLetterFreesTheSlot() {
		ScriptTest.run((template, store, redis) -> {
			sendGroups(store, 2, "g");
			ClaimedMessage first = claim(store, 10, 1).get(0);
			assertThat(Transitions.deadLetter(store, TOPIC, first.id(), first.leaseToken(), "failed")).isTrue();
			assertThat(ids(claim(store, 10, 1))).containsExactly("g-1");
		});
	}

	@Test
	void anExpiredLeaseFreesTheSlotAndTheMessageComesBackFirst() {
		ScriptTest.run((template, store, redis) -> {
			sendGroups(store, 2, "g");
			String consumer = LeaseTokens.newToken();
			assertThat(Transitions.claim(store, TOPIC, consumer, consumer + ".1", 10, 0, Duration.ZERO, null, 1)
				.messages()).hasSize(1);
			assertThat(Transitions.expireLeases(store, TOPIC, 100, 5).requeued()).containsExactly("g-0");
			assertThat(redis.opsForHash().entries(store.keys(TOPIC).groupSlots())).isEmpty();
			assertThat(ids(claim(store, 10, 1))).containsExactly("g-0");
		});
	}

	@Test
	void aHandBackFreesTheSlot() {
		ScriptTest.run((template, store, redis) -> {
			sendGroups(store, 2, "g");
			ClaimedMessage first = claim(store, 10, 1).get(0);
			assertThat(Transitions.release(store, TOPIC, first.id(), first.leaseToken())).isTrue();
			assertThat(redis.opsForHash().entries(store.keys(TOPIC).groupSlots())).isEmpty();
			assertThat(ids(claim(store, 10, 1))).containsExactly("g-0");
		});
	}

	@Test
	void aClaimHandedBackByItsTokenFreesItsSlots() {
		ScriptTest.run((template, store, redis) -> {
			sendGroups(store, 2, "g", "h");
			String consumer = LeaseTokens.newToken();
			assertThat(Transitions.claim(store, TOPIC, consumer, consumer + ".1", 10, 0, LEASE, null, 1).messages())
				.hasSize(2);
			assertThat(Transitions.releaseClaim(store, TOPIC, consumer, consumer + ".1", LEASE)).hasSize(2);
			assertThat(redis.opsForHash().entries(store.keys(TOPIC).groupSlots())).isEmpty();
			assertThat(ids(claim(store, 10, 1))).containsExactlyInAnyOrder("g-0", "h-0");
		});
	}

	@Test
	void messagesOfNoGroupAreClaimedWhileEveryGroupIsAtItsLimit() {
		ScriptTest.run((template, store, redis) -> {
			sendGroups(store, 3, "g");
			store.send(TOPIC, IntStream.range(0, 3).mapToObj((i) -> message("plain-" + i, i)).toList());
			Transitions.promote(store, TOPIC, 1000);
			assertThat(ids(claim(store, 10, 1))).containsExactlyInAnyOrder("g-0", "plain-0", "plain-1", "plain-2");
			assertThat(redis.opsForHash().entries(store.keys(TOPIC).groupSlots())).containsExactly(Map.entry("g", "1"));
		});
	}

	@Test
	void slotsAreCountedByClaimsWithoutALimitSoThatAListenerWithOneSeesThem() {
		ScriptTest.run((template, store, redis) -> {
			sendGroups(store, 4, "g");
			List<ClaimedMessage> three = Transitions.claim(store, TOPIC, 3, LEASE);
			assertThat(three).hasSize(3);
			assertThat(redis.opsForHash().get(store.keys(TOPIC).groupSlots(), "g")).isEqualTo("3");
			assertThat(claim(store, 10, 2)).as("3 in flight, above a limit of 2").isEmpty();
			assertThat(Transitions.ack(store, TOPIC, three.get(0).id(), three.get(0).leaseToken())).isTrue();
			assertThat(claim(store, 10, 2)).as("2 in flight, at a limit of 2").isEmpty();
			assertThat(Transitions.ack(store, TOPIC, three.get(1).id(), three.get(1).leaseToken())).isTrue();
			assertThat(ids(claim(store, 10, 2))).containsExactly("g-3");
		});
	}

	@Test
	void aLowerLimitThanTheSlotsTakenParksTheGroupUntilEnoughLeaveFlight() {
		ScriptTest.run((template, store, redis) -> {
			sendGroups(store, 4, "g");
			List<ClaimedMessage> two = claim(store, 10, 2);
			assertThat(two).hasSize(2);
			assertThat(claim(store, 10, 1)).isEmpty();
			assertThat(Transitions.ack(store, TOPIC, two.get(0).id(), two.get(0).leaseToken())).isTrue();
			assertThat(claim(store, 10, 1)).as("one still in flight").isEmpty();
			assertThat(Transitions.ack(store, TOPIC, two.get(1).id(), two.get(1).leaseToken())).isTrue();
			assertThat(ids(claim(store, 10, 1))).containsExactly("g-2");
		});
	}

	@Test
	void aReplayedAckFreesNothingTwice() {
		ScriptTest.run((template, store, redis) -> {
			sendGroups(store, 3, "g");
			List<ClaimedMessage> two = claim(store, 10, 2);
			assertThat(Transitions.ack(store, TOPIC, two.get(0).id(), two.get(0).leaseToken())).isTrue();
			assertThat(Transitions.ack(store, TOPIC, two.get(0).id(), two.get(0).leaseToken())).isFalse();
			assertThat(redis.opsForHash().get(store.keys(TOPIC).groupSlots(), "g")).isEqualTo("1");
		});
	}

	@Test
	void aLostSlotsHashLetsTheParkedGroupsBackAtTheNextSettleAndNeverCountsBelowZero() {
		ScriptTest.run((template, store, redis) -> {
			sendGroups(store, 3, "g");
			ClaimedMessage first = claim(store, 10, 1).get(0);
			redis.delete(store.keys(TOPIC).groupSlots());
			assertThat(Transitions.ack(store, TOPIC, first.id(), first.leaseToken())).isTrue();
			assertThat(redis.hasKey(store.keys(TOPIC).groupSlots())).isFalse();
			assertThat(ids(claim(store, 10, 1))).containsExactly("g-1");
		});
	}

	@Test
	void aRecountSetsACountThatWentAboveTheMessagesInFlightRightAndLetsTheParkedGroupBack() {
		ScriptTest.run((template, store, redis) -> {
			sendGroups(store, 3, "g");
			ClaimedMessage first = claim(store, 10, 1).get(0);
			// The groups hash lost the entry of the message in flight: its ack frees
			// nothing.
			redis.opsForHash().delete(store.keys(TOPIC).groups(), first.id());
			assertThat(Transitions.ack(store, TOPIC, first.id(), first.leaseToken())).isTrue();
			assertThat(claim(store, 10, 1)).as("the group's count still says 1").isEmpty();
			assertThat(store.topic(TOPIC).recountGroupSlots().join()).containsExactly("g: 1 -> 0");
			assertThat(redis.hasKey(store.keys(TOPIC).groupSlots())).isFalse();
			assertThat(ids(claim(store, 10, 1))).containsExactly("g-1");
			assertThat(store.topic(TOPIC).recountGroupSlots().join()).as("right by now").isEmpty();
		});
	}

	@Test
	void anAckNamingAnIdTwiceFreesItsSlotOnce() {
		ScriptTest.run((template, store, redis) -> {
			sendGroups(store, 2, "g");
			ClaimedMessage first = claim(store, 10, 2).get(0);
			Transitions.ack(store, TOPIC, List.of(first.id(), first.id()),
					List.of(first.leaseToken(), first.leaseToken()));
			assertThat(redis.opsForHash().entries(store.keys(TOPIC).groupSlots())).containsExactly(Map.entry("g", "1"));
		});
	}

	@Test
	void aRecountSetsALostCountBackFromTheMessagesInFlight() {
		ScriptTest.run((template, store, redis) -> {
			sendGroups(store, 3, "g", "h");
			assertThat(claim(store, 10, 2)).hasSize(4);
			redis.delete(store.keys(TOPIC).groupSlots());
			assertThat(store.topic(TOPIC).recountGroupSlots().join()).containsExactlyInAnyOrder("g: 0 -> 2",
					"h: 0 -> 2");
			assertThat(claim(store, 10, 2)).isEmpty();
		});
	}

	@Test
	void aRecountOfATopicWithoutGroupsReadsOneKeyAndChangesNothing() {
		ScriptTest.run((template, store, redis) -> {
			store.send(TOPIC, List.of(message("plain", 1)));
			Transitions.promote(store, TOPIC, 1000);
			assertThat(Transitions.claim(store, TOPIC, 10, LEASE)).hasSize(1);
			assertThat(store.topic(TOPIC).recountGroupSlots().join()).isEmpty();
			assertThat(redis.hasKey(store.keys(TOPIC).groupSlots())).isFalse();
		});
	}

	@Test
	void aGroupedIdLeftInAReadyListByACancelCountsInItsGroupsSlots() {
		ScriptTest.run((template, store, redis) -> {
			store.send(TOPIC, List.of(message("x", 1)));
			Transitions.promote(store, TOPIC, 1000);
			assertThat(store.cancel(TOPIC, "x")).isTrue();
			store.send(TOPIC, List.of(message("x", 1).inGroup("g"), message("g-0", 2).inGroup("g")));
			Transitions.promote(store, TOPIC, 1000);
			assertThat(claim(store, 10, 1)).as("one of group g at a time").hasSize(1);
			assertThat(redis.opsForHash().entries(store.keys(TOPIC).groupSlots())).containsExactly(Map.entry("g", "1"));
		});
	}

}

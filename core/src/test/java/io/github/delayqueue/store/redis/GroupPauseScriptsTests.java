package io.github.delayqueue.store.redis;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;

import io.github.delayqueue.group.DelayQueueGroups;
import io.github.delayqueue.store.ClaimResult;
import io.github.delayqueue.store.ClaimedMessage;
import io.github.delayqueue.store.GroupView;
import io.github.delayqueue.store.GroupWait;
import io.github.delayqueue.testsupport.Transitions;
import org.junit.jupiter.api.Test;

import static io.github.delayqueue.store.redis.GroupScriptsSupport.TOPIC;
import static io.github.delayqueue.store.redis.GroupScriptsSupport.claimResult;
import static io.github.delayqueue.store.redis.GroupScriptsSupport.ids;
import static io.github.delayqueue.store.redis.GroupScriptsSupport.sendGroups;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.awaitility.Awaitility.await;

/**
 * Pausing and resuming a group through the scripts on a real Redis: claims pass a paused
 * group's ready messages over and serve the others, whatever put the group back in the
 * rotation meanwhile (a freed slot, a promote, a rebuilt rotation); a pause with a length
 * ends by itself and a resume at once.
 */
class GroupPauseScriptsTests {

	@Test
	void aPausedGroupIsPassedOverAndTheOthersAreServed() {
		ScriptTest.run((template, store, redis) -> {
			sendGroups(store, 3, "g", "h");
			DelayQueueGroups groups = new DelayQueueGroups(store);
			groups.pause(TOPIC, "g");
			assertThat(ids(claimResult(store, 10, 0).messages())).containsExactly("h-0", "h-1", "h-2");
			assertThat(claimResult(store, 10, 0).messages()).isEmpty();
			GroupView paused = groups.group(TOPIC, "g");
			assertThat(paused.paused()).isTrue();
			assertThat(paused.pausedUntil()).isNull();
			assertThat(paused.waitingAtLimit()).isFalse();
			assertThat(paused.ready()).isEqualTo(3);
			assertThat(groups.resume(TOPIC, "g")).isTrue();
			assertThat(groups.resume(TOPIC, "g")).as("not paused any more").isFalse();
			assertThat(ids(claimResult(store, 10, 0).messages())).containsExactly("g-0", "g-1", "g-2");
			assertThat(groups.group(TOPIC, "g").paused()).isFalse();
		});
	}

	@Test
	void aPauseWithALengthEndsByItselfAndTheClaimThatFindsItEndedSaysMoreMayBeWaiting() {
		ScriptTest.run((template, store, redis) -> {
			sendGroups(store, 2, "g");
			DelayQueueGroups groups = new DelayQueueGroups(store);
			Instant until = groups.pause(TOPIC, "g", Duration.ofMillis(300));
			assertThat(groups.group(TOPIC, "g").pausedUntil()).isEqualTo(until);
			ClaimResult during = claimResult(store, 10, 0);
			assertThat(during.messages()).isEmpty();
			await().atMost(Duration.ofSeconds(5)).until(() -> !groups.group(TOPIC, "g").paused());
			ClaimResult first = claimResult(store, 10, 0);
			List<String> claimed = new ArrayList<>(ids(first.messages()));
			if (claimed.isEmpty()) {
				assertThat(first.more()).as("the claim that put the group back says more may be waiting").isTrue();
				claimed.addAll(ids(claimResult(store, 10, 0).messages()));
			}
			assertThat(claimed).containsExactly("g-0", "g-1");
			assertThat(redis.opsForZSet().size(store.keys(TOPIC).groupPauses())).isZero();
		});
	}

	@Test
	void aPausedGroupStaysPausedWhenItsSlotIsFreedAtItsLimit() {
		ScriptTest.run((template, store, redis) -> {
			sendGroups(store, 3, "g", "h");
			List<ClaimedMessage> first = claimResult(store, 10, 1).messages();
			assertThat(ids(first)).containsExactlyInAnyOrder("g-0", "h-0");
			new DelayQueueGroups(store).pause(TOPIC, "g");
			for (ClaimedMessage message : first) {
				assertThat(Transitions.ack(store, TOPIC, message.id(), message.leaseToken())).isTrue();
			}
			assertThat(ids(claimResult(store, 10, 1).messages())).containsExactly("h-1");
			assertThat(redis.opsForZSet().score(store.keys(TOPIC).groupRotation(), "g"))
				.isEqualTo(Double.POSITIVE_INFINITY);
			assertThat(redis.opsForHash().entries(store.keys(TOPIC).groupSlots())).containsExactly(Map.entry("h", "1"));
		});
	}

	@Test
	void aGroupPausedBeforeItHasMessagesHoldsTheMessagesThatComeLater() {
		ScriptTest.run((template, store, redis) -> {
			DelayQueueGroups groups = new DelayQueueGroups(store);
			groups.pause(TOPIC, "g");
			sendGroups(store, 2, "g", "h");
			assertThat(ids(claimResult(store, 10, 0).messages())).containsExactly("h-0", "h-1");
			groups.resume(TOPIC, "g");
			assertThat(ids(claimResult(store, 10, 0).messages())).containsExactly("g-0", "g-1");
		});
	}

	@Test
	void aPausedGroupIsNotServedByARebuiltRotation() {
		ScriptTest.run((template, store, redis) -> {
			sendGroups(store, 2, "g", "h");
			new DelayQueueGroups(store).pause(TOPIC, "g");
			redis.delete(store.keys(TOPIC).groupRotation());
			List<String> claimed = new ArrayList<>();
			for (int i = 0; i < 3; i++) {
				claimed.addAll(ids(claimResult(store, 10, 0).messages()));
			}
			assertThat(claimed).containsExactly("h-0", "h-1");
		});
	}

	@Test
	void pausedGroupsFillingTheRotationsHeadDoNotHoldTheOthersBack() {
		ScriptTest.run((template, store, redis) -> {
			List<String> names = IntStream.range(0, 40).mapToObj((i) -> "a" + (10 + i)).toList();
			sendGroups(store, 1, names.toArray(String[]::new));
			sendGroups(store, 1, "z");
			// Every group but z paused after the rotation holds them, as by a version
			// that did not park them.
			for (String name : names) {
				redis.opsForZSet().add(store.keys(TOPIC).groupPauses(), name, Double.POSITIVE_INFINITY);
			}
			List<String> claimed = new ArrayList<>();
			for (int i = 0; i < 3 && claimed.isEmpty(); i++) {
				claimed.addAll(ids(claimResult(store, 1, 0).messages()));
			}
			assertThat(claimed).containsExactly("z-0");
		});
	}

	@Test
	void aSlowDownOfAMessageOfAGroupPausesTheGroupUntilItsNextAttemptAndKeepsALongerPause() {
		ScriptTest.run((template, store, redis) -> {
			sendGroups(store, 2, "g", "h");
			DelayQueueGroups groups = new DelayQueueGroups(store);
			ClaimedMessage g0 = claimResult(store, 1, 0).messages().get(0);
			assertThat(g0.id()).isEqualTo("g-0");
			long due = store.topic(TOPIC).postpone("g-0", g0.leaseToken(), Duration.ofMinutes(5), GroupWait.GROUP);
			assertThat(groups.group(TOPIC, "g").pausedUntil()).isEqualTo(Instant.ofEpochMilli(due));
			assertThat(ids(claimResult(store, 10, 0).messages())).containsExactly("h-0", "h-1");
			// The pause ends (as if 5 minutes had passed).
			redis.opsForZSet().add(store.keys(TOPIC).groupPauses(), "g", 1);
			ClaimedMessage g1 = claimResult(store, 10, 0).messages().stream().findFirst().orElse(null);
			List<String> claimed = new ArrayList<>();
			if (g1 != null) {
				claimed.add(g1.id());
			}
			claimed.addAll(ids(claimResult(store, 10, 0).messages()));
			assertThat(claimed).as("g's pause ended: its ready message is claimed").containsExactly("g-1");
		});
	}

	@Test
	void aSlowDownKeepsAPauseUntilResumedAndAMessageOfNoGroupPausesNothing() {
		ScriptTest.run((template, store, redis) -> {
			sendGroups(store, 2, "g");
			DelayQueueGroups groups = new DelayQueueGroups(store);
			ClaimedMessage g0 = claimResult(store, 1, 0).messages().get(0);
			groups.pause(TOPIC, "g");
			assertThat(store.topic(TOPIC).postpone("g-0", g0.leaseToken(), Duration.ofMinutes(5), GroupWait.GROUP))
				.isPositive();
			GroupView view = groups.group(TOPIC, "g");
			assertThat(view.paused()).isTrue();
			assertThat(view.pausedUntil()).as("still until resumed").isNull();
			store.send(TOPIC, List.of(GroupScriptsSupport.message("plain", 1)));
			Transitions.promote(store, TOPIC, 1000);
			ClaimedMessage plain = claimResult(store, 10, 0).messages().get(0);
			assertThat(store.topic(TOPIC).postpone("plain", plain.leaseToken(), Duration.ofMinutes(5), GroupWait.GROUP))
				.isPositive();
			assertThat(redis.opsForZSet().range(store.keys(TOPIC).groupPauses(), 0, -1)).containsExactly("g");
		});
	}

	@Test
	void theOldestReadyMessageInTheStatsLeavesThePausedGroupsOut() {
		ScriptTest.run((template, store, redis) -> {
			store.send(TOPIC, List.of(GroupScriptsSupport.message("g-0", 1).inGroup("g"),
					GroupScriptsSupport.message("h-0", 10).inGroup("h")));
			Transitions.promote(store, TOPIC, 1000);
			assertThat(store.stats(TOPIC).oldestReadyDueMillis()).isEqualTo(1);
			new DelayQueueGroups(store).pause(TOPIC, "g");
			assertThat(store.stats(TOPIC).oldestReadyDueMillis()).isEqualTo(10);
			assertThat(store.stats(TOPIC).ready()).as("held back, still ready").isEqualTo(2);
			Instant until = new DelayQueueGroups(store).pause(TOPIC, "h", Duration.ofMinutes(5));
			new DelayQueueGroups(store).pause(TOPIC, "x", Duration.ofMinutes(1));
			redis.opsForZSet().add(store.keys(TOPIC).groupPauses(), "ended", 1);
			assertThat(store.stats(TOPIC).pausedGroups()).as("pauses not ended").isEqualTo(3);
			Map<String, Long> firstToEnd = store.stats(TOPIC).firstPausesToEnd();
			assertThat(firstToEnd.keySet()).as("those ending first first, those until resumed last")
				.containsExactly("x", "h", "g");
			assertThat(firstToEnd).containsEntry("h", until.toEpochMilli()).containsEntry("g", 0L);
		});
	}

	@Test
	void aPauseOfAnInvalidLengthOrGroupIsRefusedNamingIt() {
		ScriptTest.run((template, store, redis) -> {
			DelayQueueGroups groups = new DelayQueueGroups(store);
			assertThatIllegalArgumentException().isThrownBy(() -> groups.pause(TOPIC, "g", Duration.ZERO))
				.withMessageContaining("group 'g'")
				.withMessageContaining("1 ms");
			assertThatIllegalArgumentException().isThrownBy(() -> groups.pause(TOPIC, "a\nb"));
			assertThatIllegalArgumentException().isThrownBy(() -> groups.pause("", "g"));
			assertThat(redis.hasKey(store.keys(TOPIC).groupPauses())).isFalse();
		});
	}

}

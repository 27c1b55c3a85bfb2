package io.github.delayqueue.store.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;

import io.github.delayqueue.store.ClaimResult;
import io.github.delayqueue.store.ClaimedMessage;
import io.github.delayqueue.store.MessageFormat;
import io.github.delayqueue.store.MessagePage;
import io.github.delayqueue.store.MessageState;
import io.github.delayqueue.store.MessageSummary;
import io.github.delayqueue.store.NewMessage;
import io.github.delayqueue.store.TopicStats;
import io.github.delayqueue.testsupport.Transitions;
import org.junit.jupiter.api.Test;

import static io.github.delayqueue.store.redis.GroupScriptsSupport.TOPIC;
import static io.github.delayqueue.store.redis.GroupScriptsSupport.body;
import static io.github.delayqueue.store.redis.GroupScriptsSupport.ids;
import static io.github.delayqueue.store.redis.GroupScriptsSupport.message;
import static io.github.delayqueue.store.redis.GroupScriptsSupport.sendGroupsOfOneToTwelveMessages;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Messages of groups through the scripts on a real Redis: {@code send.lua} keeps each
 * one's group, {@code promote.lua} makes the due ones ready in the group ready set, and
 * {@code claim.lua} takes from the groups in turn, so that one group's burst does not
 * delay the others; each group's messages come most urgent first, then in due order.
 */
class GroupScriptsTests {

	@Test
	void aClaimTakesFromEveryGroupInTurnSoThatABurstDoesNotDelayTheOthers() {
		ScriptTest.run((template, store, redis) -> {
			List<NewMessage> messages = new ArrayList<>();
			IntStream.range(0, 100).forEach((i) -> messages.add(message("big-" + i, i).inGroup("big")));
			messages.add(message("small-a", 50).inGroup("small-a"));
			messages.add(message("small-b", 99).inGroup("small-b"));
			store.send(TOPIC, messages);
			assertThat(Transitions.promote(store, TOPIC, 1000).moved()).as("ready at their send, being due").isZero();
			List<String> first = ids(Transitions.claim(store, TOPIC, 20, Duration.ofMinutes(1)));
			assertThat(first).hasSize(20).contains("small-a", "small-b");
			List<String> rest = ids(Transitions.claim(store, TOPIC, 1000, Duration.ofMinutes(1)));
			assertThat(rest).hasSize(82).doesNotContain("small-a", "small-b");
			List<String> big = new ArrayList<>(first);
			big.addAll(rest);
			big.removeAll(List.of("small-a", "small-b"));
			assertThat(big).containsExactlyElementsOf(IntStream.range(0, 100).mapToObj((i) -> "big-" + i).toList());
			assertThat(redis.keys(store.keys(TOPIC).groupReady() + "*")).isEmpty();
			assertThat(redis.opsForHash().entries(store.keys(TOPIC).groupCounts())).isEmpty();
			assertThat(redis.opsForZSet().size(store.keys(TOPIC).groupRotation())).isZero();
		});
	}

	@Test
	void messagesOfNoGroupTakeTheirTurnAsOneMoreGroup() {
		ScriptTest.run((template, store, redis) -> {
			List<NewMessage> messages = new ArrayList<>();
			IntStream.range(0, 50).forEach((i) -> messages.add(message("big-" + i, 0).inGroup("big")));
			IntStream.range(0, 50).forEach((i) -> messages.add(message("plain-" + i, 1)));
			store.send(TOPIC, messages);
			Transitions.promote(store, TOPIC, 1000);
			List<String> first = ids(Transitions.claim(store, TOPIC, 32, Duration.ofMinutes(1)));
			assertThat(first.stream().filter((id) -> id.startsWith("plain-"))).hasSize(16);
			assertThat(first.stream().filter((id) -> id.startsWith("big-"))).hasSize(16);
			assertThat(ids(Transitions.claim(store, TOPIC, 1000, Duration.ofMinutes(1)))).hasSize(68);
		});
	}

	@Test
	void aGroupsMessagesComeMostUrgentFirstThenInDueOrder() {
		ScriptTest.run((template, store, redis) -> {
			store.send(TOPIC, List.of(message("late", 3).inGroup("g"), message("early", 1).inGroup("g"),
					message("urgent", 5).withPriority(7).inGroup("g")));
			Transitions.promote(store, TOPIC, 1000);
			assertThat(ids(Transitions.claim(store, TOPIC, 10, Duration.ofMinutes(1)))).containsExactly("urgent",
					"early", "late");
		});
	}

	@Test
	void aGroupedMessageIsNotMadeReadyBeforeItIsDueWhateverTheLookahead() {
		ScriptTest.run((template, store, redis) -> {
			store.send(TOPIC, List.of(NewMessage.afterDelay("soon", Duration.ofSeconds(30), body()).inGroup("g"),
					NewMessage.afterDelay("plain", Duration.ofSeconds(30), body())));
			var promoted = Transitions.promote(store, TOPIC, 1000, Duration.ofMinutes(1));
			assertThat(promoted.moved()).isEqualTo(1);
			assertThat(promoted.nextDueIn()).isGreaterThan(Duration.ofSeconds(50));
			assertThat(redis.opsForZSet().score(store.keys(TOPIC).scheduled(), "soon")).isNotNull();
		});
	}

	@Test
	void aCancelledReadyMessageOfAGroupIsDroppedByTheNextClaimAndItsGroupLeavesTheRotation() {
		ScriptTest.run((template, store, redis) -> {
			store.send(TOPIC, List.of(message("a", 0).inGroup("g"), message("b", 0).inGroup("h")));
			Transitions.promote(store, TOPIC, 1000);
			assertThat(store.cancel(TOPIC, "a")).isTrue();
			assertThat(ids(Transitions.claim(store, TOPIC, 10, Duration.ofMinutes(1)))).containsExactly("b");
			assertThat(redis.opsForHash().entries(store.keys(TOPIC).groupCounts())).isEmpty();
			assertThat(redis.opsForZSet().size(store.keys(TOPIC).groupRotation())).isZero();
			assertThat(redis.opsForHash().keys(store.keys(TOPIC).groups())).containsExactly("b");
		});
	}

	@Test
	void aLostRotationIsRebuiltFromTheCountsByTheNextClaim() {
		ScriptTest.run((template, store, redis) -> {
			store.send(TOPIC, List.of(message("a", 0).inGroup("g"), message("b", 0).inGroup("h")));
			Transitions.promote(store, TOPIC, 1000);
			redis.delete(store.keys(TOPIC).groupRotation());
			assertThat(ids(Transitions.claim(store, TOPIC, 10, Duration.ofMinutes(1)))).containsExactlyInAnyOrder("a",
					"b");
		});
	}

	@Test
	void aClaimedMessageCarriesItsGroupInItsHeaders() {
		ScriptTest.run((template, store, redis) -> {
			store.send(TOPIC, List.of(new NewMessage("a", true, 0,
					MessageFormat.encodeBody(Map.of(MessageFormat.GROUP_HEADER, "g"), body()), false, 0, false, "g")));
			Transitions.promote(store, TOPIC, 1000);
			ClaimedMessage claimed = Transitions.claim(store, TOPIC, 10, Duration.ofMinutes(1)).get(0);
			assertThat(MessageFormat.decode("a", claimed.stored()).headers()).containsEntry(MessageFormat.GROUP_HEADER,
					"g");
		});
	}

	@Test
	void aReleasedMessageOfAGroupGoesBackAheadOfItsGroupsLaterMessages() {
		ScriptTest.run((template, store, redis) -> {
			store.send(TOPIC, List.of(message("first", 1).inGroup("g"), message("second", 2).inGroup("g")));
			Transitions.promote(store, TOPIC, 1000);
			ClaimedMessage first = Transitions.claim(store, TOPIC, 1, Duration.ofMinutes(1)).get(0);
			assertThat(first.id()).isEqualTo("first");
			assertThat(Transitions.release(store, TOPIC, "first", first.leaseToken())).isTrue();
			assertThat(ids(Transitions.claim(store, TOPIC, 10, Duration.ofMinutes(1)))).containsExactly("first",
					"second");
		});
	}

	@Test
	void aMessageOfAGroupWhoseLeaseExpiredIsReadyInItsGroupAgain() {
		ScriptTest.run((template, store, redis) -> {
			store.send(TOPIC, List.of(message("a", 1).inGroup("g")));
			Transitions.promote(store, TOPIC, 1000);
			Transitions.claim(store, TOPIC, 1, Duration.ZERO);
			assertThat(Transitions.expireLeases(store, TOPIC, 100, 5).requeued()).containsExactly("a");
			assertThat(redis.opsForHash().get(store.keys(TOPIC).groupCounts(), "g")).isEqualTo("1");
			assertThat(redis.opsForList().size(store.keys(TOPIC).ready())).isZero();
			assertThat(ids(Transitions.claim(store, TOPIC, 10, Duration.ofMinutes(1)))).containsExactly("a");
		});
	}

	@Test
	void aDeadLetterOfAGroupIsReplayedIntoItsGroup() {
		ScriptTest.run((template, store, redis) -> {
			store.send(TOPIC, List.of(new NewMessage("a", false, 1,
					MessageFormat.encodeBody(Map.of(MessageFormat.GROUP_HEADER, "g"), body()), false, 0, false, "g")));
			Transitions.promote(store, TOPIC, 1000);
			ClaimedMessage claimed = Transitions.claim(store, TOPIC, 1, Duration.ofMinutes(1)).get(0);
			assertThat(Transitions.deadLetter(store, TOPIC, "a", claimed.leaseToken(), "failed")).isTrue();
			assertThat(redis.hasKey(store.keys(TOPIC).groups())).isFalse();
			assertThat(store.replayDead(TOPIC, List.of("a")).replayed()).containsExactly("a");
			assertThat(redis.opsForHash().get(store.keys(TOPIC).groups(), "a")).isEqualTo("g");
			Transitions.promote(store, TOPIC, 1000);
			assertThat(redis.opsForHash().get(store.keys(TOPIC).groupCounts(), "g")).isEqualTo("1");
		});
	}

	@Test
	void anAcknowledgedMessageOfAGroupLeavesNoEntryBehind() {
		ScriptTest.run((template, store, redis) -> {
			store.send(TOPIC, List.of(message("a", 1).inGroup("g")));
			Transitions.promote(store, TOPIC, 1000);
			ClaimedMessage claimed = Transitions.claim(store, TOPIC, 1, Duration.ofMinutes(1)).get(0);
			assertThat(Transitions.ack(store, TOPIC, "a", claimed.leaseToken())).isTrue();
			assertThat(redis.keys(store.keys(TOPIC).groups().replace(":g", ":g*")))
				.containsExactly(store.keys(TOPIC).groupTags());
			assertThat(redis.opsForHash().keys(store.keys(TOPIC).groupTags())).containsExactly("\u0001V");
		});
	}

	@Test
	void aMessageSentAgainWithoutItsGroupLosesIt() {
		ScriptTest.run((template, store, redis) -> {
			store.send(TOPIC, List.of(NewMessage.afterDelay("a", Duration.ofHours(1), body()).inGroup("g")));
			store.send(TOPIC, List.of(NewMessage.afterDelay("a", Duration.ofHours(1), body()).replacingPending()));
			assertThat(redis.hasKey(store.keys(TOPIC).groups())).isFalse();
		});
	}

	@Test
	void aPageOfReadyMessagesListsThoseOfGroupsAfterTheOthers() {
		ScriptTest.run((template, store, redis) -> {
			store.send(TOPIC,
					List.of(message("plain", 1), message("b-1", 2).inGroup("b"), message("a-1", 3).inGroup("a")));
			Transitions.promote(store, TOPIC, 1000);
			MessagePage page = store.inspector(TOPIC).page(MessageState.READY, 0, 10);
			assertThat(page.messages().stream().map(MessageSummary::id)).containsExactly("plain", "a-1", "b-1");
			assertThat(page.total()).isEqualTo(3);
		});
	}

	@Test
	void aMessageOfAGroupDueWhenSentIsReadyAtOnceAndOneDueLaterIsScheduled() {
		ScriptTest.run((template, store, redis) -> {
			store.send(TOPIC, List.of(NewMessage.afterDelay("now", Duration.ZERO, body()).inGroup("g"),
					NewMessage.afterDelay("later", Duration.ofHours(1), body()).inGroup("g")));
			assertThat(redis.opsForZSet().range(store.keys(TOPIC).scheduled(), 0, -1)).containsExactly("later");
			assertThat(redis.opsForHash().get(store.keys(TOPIC).groupCounts(), "g")).isEqualTo("1");
			assertThat(redis.opsForZSet().score(store.keys(TOPIC).groupRotation(), "g")).isNotNull();
			assertThat(ids(Transitions.claim(store, TOPIC, 10, Duration.ofMinutes(1)))).containsExactly("now");
		});
	}

	@Test
	void aReplacingSendOfAGroupIsScheduledEvenWhenDue() {
		ScriptTest.run((template, store, redis) -> {
			store.send(TOPIC, List.of(NewMessage.afterDelay("a", Duration.ofHours(1), body()).inGroup("g")));
			store.send(TOPIC,
					List.of(NewMessage.afterDelay("a", Duration.ZERO, body()).inGroup("g").replacingPending()));
			assertThat(redis.opsForZSet().score(store.keys(TOPIC).scheduled(), "a")).isNotNull();
			assertThat(Transitions.promote(store, TOPIC, 1000).moved()).isOne();
			assertThat(ids(Transitions.claim(store, TOPIC, 10, Duration.ofMinutes(1)))).containsExactly("a");
		});
	}

	@Test
	void lostCountsAndALostRotationAreRebuiltFromTheGroupReadySetAndAForeignMemberIsDropped() {
		ScriptTest.run((template, store, redis) -> {
			store.send(TOPIC,
					List.of(message("a", 0).inGroup("g"), message("b", 0).inGroup("h"), message("c", 0).inGroup("h")));
			redis.delete(List.of(store.keys(TOPIC).groupRotation(), store.keys(TOPIC).groupCounts()));
			redis.opsForZSet().add(store.keys(TOPIC).groupReady(), "no group here", 0);
			assertThat(ids(Transitions.claim(store, TOPIC, 1, Duration.ofMinutes(1)))).containsExactly("a");
			assertThat(redis.opsForZSet().range(store.keys(TOPIC).groupReady(), 0, -1)).doesNotContain("no group here")
				.hasSize(2);
			assertThat(redis.opsForZSet().range(store.keys(TOPIC).groupRotation(), 0, -1)).containsExactly("h");
			assertThat(redis.opsForHash().get(store.keys(TOPIC).groupCounts(), "h")).isEqualTo("2");
			assertThat(ids(Transitions.claim(store, TOPIC, 10, Duration.ofMinutes(1)))).containsExactly("b", "c");
			assertThat(redis.hasKey(store.keys(TOPIC).groupReady())).isFalse();
			assertThat(redis.hasKey(store.keys(TOPIC).groupCounts())).isFalse();
		});
	}

	@Test
	void aMessageOfAGroupMadeReadyInTheReadyListByAVersionWithoutGroupsJoinsItsGroupAndIsClaimedFromIt() {
		ScriptTest.run((template, store, redis) -> {
			store.send(TOPIC, List.of(message("a", 1)));
			Transitions.promote(store, TOPIC, 1000);
			redis.opsForHash().put(store.keys(TOPIC).groups(), "a", "g");
			assertThat(redis.opsForList().range(store.keys(TOPIC).ready(), 0, -1)).containsExactly("a");
			ClaimResult joined = Transitions.claim(store, TOPIC, "c", "c.1", 10, 0, Duration.ofMinutes(1));
			assertThat(joined.messages()).isEmpty();
			assertThat(joined.more()).isTrue();
			assertThat(redis.hasKey(store.keys(TOPIC).ready())).isFalse();
			assertThat(redis.opsForHash().get(store.keys(TOPIC).groupCounts(), "g")).isEqualTo("1");
			assertThat(ids(Transitions.claim(store, TOPIC, 10, Duration.ofMinutes(1)))).containsExactly("a");
			assertThat(redis.hasKey(store.keys(TOPIC).groupReady())).isFalse();
		});
	}

	@Test
	void aMemberLeftByCancellingTheLastStoredMessageOfAGroupIsDroppedByTheNextClaim() {
		ScriptTest.run((template, store, redis) -> {
			store.send(TOPIC, List.of(message("a", 0).inGroup("g")));
			Transitions.promote(store, TOPIC, 1000);
			assertThat(store.cancel(TOPIC, "a")).isTrue();
			assertThat(Transitions.claim(store, TOPIC, 10, Duration.ofMinutes(1))).isEmpty();
			assertThat(redis.opsForZSet().size(store.keys(TOPIC).groupReady())).isZero();
			assertThat(redis.opsForHash().entries(store.keys(TOPIC).groupCounts())).isEmpty();
			assertThat(Transitions.promote(store, TOPIC, 1000).readyWaiting()).isFalse();
		});
	}

	@Test
	void statsPassOverTheMemberOfAMessageCancelledWhileReady() {
		ScriptTest.run((template, store, redis) -> {
			store.send(TOPIC, List.of(message("a", 5).inGroup("g"), message("b", 7).inGroup("g")));
			Transitions.promote(store, TOPIC, 1000);
			assertThat(store.cancel(TOPIC, "a")).isTrue();
			assertThat(store.stats(TOPIC).oldestReadyDueMillis()).isEqualTo(7);
		});
	}

	@Test
	void statsSeeTheOldestReadyMessageOfAGroupWhoseMostUrgentOneIsYounger() {
		ScriptTest.run((template, store, redis) -> {
			store.send(TOPIC,
					List.of(message("old", 5).inGroup("g"), message("urgent", 7).withPriority(3).inGroup("g")));
			Transitions.promote(store, TOPIC, 1000);
			assertThat(store.stats(TOPIC).oldestReadyDueMillis()).isEqualTo(5);
		});
	}

	@Test
	void statsNameTheGroupsWithTheMostReadyMessages() {
		ScriptTest.run((template, store, redis) -> {
			sendGroupsOfOneToTwelveMessages(store);
			TopicStats stats = store.stats(TOPIC);
			assertThat(stats.groupsWithReady()).isEqualTo(12);
			assertThat(stats.busiestGroups()).hasSize(10)
				.containsEntry("group-11", 12L)
				.containsEntry("group-2", 3L)
				.doesNotContainKeys("group-1", "group-0");
			assertThat(stats.busiestGroups().keySet().iterator().next()).isEqualTo("group-11");
		});
	}

}

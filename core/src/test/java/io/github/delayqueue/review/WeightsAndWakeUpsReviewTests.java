package io.github.delayqueue.review;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.delayqueue.testsupport.CommandStats;
import io.github.delayqueue.convert.JsonPayloadConverter;
import io.github.delayqueue.group.DelayQueueGroups;
import io.github.delayqueue.listener.DelayListenerEndpoint;
import io.github.delayqueue.listener.DelayListenerEndpointRegistry;
import io.github.delayqueue.listener.Delivery;
import io.github.delayqueue.listener.LatePolicy;
import io.github.delayqueue.listener.ListenerSettings;
import io.github.delayqueue.producer.DelayMessage;
import io.github.delayqueue.runtime.DelayQueueRuntime;
import io.github.delayqueue.runtime.broker.BrokerSettings;
import io.github.delayqueue.store.ClaimResult;
import io.github.delayqueue.store.GroupWeights;
import io.github.delayqueue.store.NewMessage;
import io.github.delayqueue.store.RateLimit;
import io.github.delayqueue.store.WriteGate;
import io.github.delayqueue.store.redis.RedisMessageStore;
import io.github.delayqueue.testsupport.OnOneServerVersion;
import io.github.delayqueue.testsupport.TestStore;
import io.github.delayqueue.testsupport.Transitions;
import io.github.delayqueue.time.RetryBackoff;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.util.ReflectionUtils;

import static io.github.delayqueue.review.GroupsReviewTests.due;
import static io.github.delayqueue.review.GroupsReviewTests.ids;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.awaitility.Awaitility.await;

/**
 * Adversarial review of group weights (2b63819) and of the wake-up at a group pause's end
 * (2d29b16) on a real Redis: the shares of weighted groups over many claims (three groups
 * and more, a group concurrency, priorities, the messages of no group, a heavy group
 * against a light one, a group that leaves and rejoins, replayed claims, the 1,000-ids
 * budget), the claim reply's pause end (never read as "more", beside a replay, a rate
 * limit's trailing element, a pause until resumed, a pause head that ended without
 * messages of its group) and the listeners it wakes (how many claims many pause ends
 * cost, a stop while a pause-end claim is scheduled).
 */
@OnOneServerVersion
class WeightsAndWakeUpsReviewTests {

	private static final String TOPIC = "wts";

	private static final Duration MINUTE = Duration.ofMinutes(1);

	private static final Duration IDLE_CHECK = Duration.ofSeconds(20);

	private final Map<String, Long> delivered = new ConcurrentHashMap<>();

	// ---- Weights: the shares

	/**
	 * Three weighted groups, one of weight 1 not named, and the messages of no group
	 * (weight 1): over 200 claims of 7 (a limit that no turn divides) each takes its
	 * weight's share of what was claimed, within one turn's worth.
	 */
	@Test
	void overManyClaimsEveryGroupTakesItsWeightsShareAndTheMessagesOfNoGroupWeighOne() {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			Map<String, Integer> weightOf = Map.of("a", 1, "b", 2, "c", 5, "d", 1, "", 1);
			GroupWeights weights = GroupWeights.of(Map.of("b", 2, "c", 5));
			List<NewMessage> messages = new ArrayList<>();
			for (int i = 0; i < 1200; i++) {
				for (String group : List.of("a", "b", "c", "d")) {
					messages.add(due(group + "-" + i, 10 + i).withPriority(i % 3).inGroup(group));
				}
				messages.add(due("n-" + i, 10 + i).withPriority(i % 2));
			}
			send(store, messages);
			Map<String, Integer> taken = new HashMap<>();
			for (int c = 0; c < 200; c++) {
				for (String id : ids(claim(store, token(), 7, 0, weights).messages())) {
					taken.merge(groupOf(id), 1, Integer::sum);
				}
			}
			int total = taken.values().stream().mapToInt(Integer::intValue).sum();
			assertThat(total).isEqualTo(1400);
			weightOf.forEach((group, weight) -> assertThat((double) taken.getOrDefault(group, 0))
				.as("%s of weight %d took %s", group, weight, taken)
				.isCloseTo(total * weight / 10.0, org.assertj.core.data.Offset.offset(16.0 * weight)));
		}
	}

	/**
	 * Weight 100 against 1, claims of one message: the light group is never starved; it
	 * takes one message in every 101 or so, and the heavy one the rest (tags of 0.01
	 * steps written with %.17g over thousands of claims).
	 */
	@Test
	void aGroupOfWeightOneTakesItsTurnBesideAGroupOfWeightHundredOverThousandsOfClaims() {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			List<NewMessage> messages = new ArrayList<>();
			for (int i = 0; i < 3100; i++) {
				messages.add(due("heavy-" + i, 10 + i).inGroup("heavy"));
			}
			for (int i = 0; i < 100; i++) {
				messages.add(due("light-" + i, 10 + i).inGroup("light"));
			}
			send(store, messages);
			GroupWeights weights = GroupWeights.of(Map.of("heavy", 100));
			List<Integer> lightAt = new ArrayList<>();
			for (int c = 0; c < 3030; c++) {
				List<String> ids = ids(claim(store, token(), 1, 0, weights).messages());
				assertThat(ids).hasSize(1);
				if (ids.get(0).startsWith("light-")) {
					lightAt.add(c);
				}
			}
			assertThat(lightAt).as("claims that took the light group's message").hasSizeBetween(29, 31);
			for (int k = 1; k < lightAt.size(); k++) {
				assertThat(lightAt.get(k) - lightAt.get(k - 1)).as("claims between two turns of the light group")
					.isBetween(100, 102);
			}
		}
	}

	/**
	 * A heavy group (weight 10) that had nothing ready while two light ones were served
	 * for long rejoins at the virtual time: no credit for its time away, so the light
	 * groups keep their turns (one in twelve each), and it takes its share from then on.
	 */
	@Test
	void aHeavyGroupThatLeavesAndRejoinsGetsNoCreditForItsTimeAway() {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			GroupWeights weights = GroupWeights.of(Map.of("heavy", 10));
			List<NewMessage> messages = new ArrayList<>();
			for (int i = 0; i < 40; i++) {
				messages.add(due("heavy-" + i, 10 + i).inGroup("heavy"));
			}
			for (int i = 0; i < 2000; i++) {
				messages.add(due("b-" + i, 10 + i).inGroup("b"));
				messages.add(due("c-" + i, 10 + i).inGroup("c"));
			}
			send(store, messages);
			// The heavy group's 40 go first, then it leaves; the light ones are served
			// long.
			for (int c = 0; c < 60; c++) {
				claim(store, token(), 16, 0, weights);
			}
			send(store, List.of(due("heavy-late-0", 20).inGroup("heavy")));
			List<NewMessage> late = new ArrayList<>();
			for (int i = 1; i < 1000; i++) {
				late.add(due("heavy-late-" + i, 20 + i).inGroup("heavy"));
			}
			send(store, late);
			Map<String, Integer> taken = new HashMap<>();
			for (int c = 0; c < 12; c++) {
				for (String id : ids(claim(store, token(), 16, 0, weights).messages())) {
					taken.merge(groupOf(id), 1, Integer::sum);
				}
			}
			System.out.println("After the heavy group rejoined: " + taken);
			assertThat(taken.get("heavy")).as("after rejoining: %s", taken).isBetween(140, 176);
			assertThat(taken.getOrDefault("b", 0) + taken.getOrDefault("c", 0)).as("after rejoining: %s", taken)
				.isBetween(16, 52);
		}
	}

	/**
	 * Weight 100 with a claim of 1,000: the turn (1,600) is cut at the claim's limit and
	 * the groups' budget of 1,000 members a call; nothing is claimed twice, the other
	 * group still comes, and the next claims go on where it stopped.
	 */
	@Test
	void aTurnOfWeightHundredLargerThanTheCallsBudgetClaimsEachMessageOnce() {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			List<NewMessage> messages = new ArrayList<>();
			for (int i = 0; i < 2500; i++) {
				messages.add(due("heavy-" + i, 10 + i).inGroup("heavy"));
			}
			for (int i = 0; i < 100; i++) {
				messages.add(due("light-" + i, 10 + i).inGroup("light"));
			}
			send(store, messages);
			GroupWeights weights = GroupWeights.of(Map.of("heavy", 100));
			List<String> all = new ArrayList<>();
			ClaimResult first = claim(store, token(), 1000, 0, weights);
			assertThat(first.messages()).hasSize(1000);
			all.addAll(ids(first.messages()));
			for (int c = 0; c < 5; c++) {
				all.addAll(ids(claim(store, token(), 1000, 0, weights).messages()));
			}
			assertThat(all).doesNotHaveDuplicates().hasSize(2600);
			assertThat(all.subList(0, 2000)).filteredOn((id) -> id.startsWith("light-")).hasSize(16);
		}
	}

	/**
	 * A group concurrency holds whatever the weight: weight 50 with a limit of 3 takes 3
	 * and is parked; paused weighted groups take nothing.
	 */
	@Test
	void aWeightNeitherPassesTheGroupConcurrencyNorAPause() {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			List<NewMessage> messages = new ArrayList<>();
			for (int i = 0; i < 100; i++) {
				messages.add(due("heavy-" + i, 10 + i).inGroup("heavy"));
				messages.add(due("held-" + i, 10 + i).inGroup("held"));
				messages.add(due("light-" + i, 10 + i).inGroup("light"));
			}
			send(store, messages);
			new DelayQueueGroups(store).pause(TOPIC, "held");
			GroupWeights weights = GroupWeights.of(Map.of("heavy", 50, "held", 100));
			Map<String, Integer> taken = new HashMap<>();
			for (int c = 0; c < 5; c++) {
				String token = token();
				ClaimResult result = store.topic(TOPIC)
					.claim(token, token, 100, 0, MINUTE, null, 3, weights, null, WriteGate.OPEN)
					.join();
				ids(result.messages()).forEach((id) -> taken.merge(groupOf(id), 1, Integer::sum));
			}
			assertThat(taken).containsOnly(Map.entry("heavy", 3), Map.entry("light", 3));
		}
	}

	/**
	 * A claim whose reply was lost and that is sent again with its token answers what it
	 * leased then, with or without weights, and leases nothing new.
	 */
	@Test
	void aReplayedWeightedClaimAnswersWhatItLeasedThen() {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			List<NewMessage> messages = new ArrayList<>();
			for (int i = 0; i < 100; i++) {
				messages.add(due("a-" + i, 10 + i).inGroup("a"));
				messages.add(due("b-" + i, 10 + i).inGroup("b"));
			}
			send(store, messages);
			GroupWeights weights = GroupWeights.of(Map.of("a", 3));
			String token = token();
			ClaimResult first = claim(store, token, 64, 0, weights);
			assertThat(ids(first.messages())).filteredOn((id) -> id.startsWith("a-")).hasSize(48);
			ClaimResult replayed = claim(store, token, 64, 0, GroupWeights.of(Map.of("b", 7)));
			assertThat(ids(replayed.messages())).isEqualTo(ids(first.messages()));
			assertThat(replayed.more()).isFalse();
			assertThat(replayed.groupPauseEndsIn()).isZero();
		}
	}

	/**
	 * Two applications on one topic with different weights (one gives a weight of 10 to
	 * a, the other to b), claiming in turn: each claim serves by its own weights; neither
	 * group is starved, and what each gets is printed.
	 */
	@Test
	void twoApplicationsWithDifferentWeightsStarveNoGroup() {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			List<NewMessage> messages = new ArrayList<>();
			for (int i = 0; i < 1000; i++) {
				messages.add(due("a-" + i, 10 + i).inGroup("a"));
				messages.add(due("b-" + i, 10 + i).inGroup("b"));
				messages.add(due("c-" + i, 10 + i).inGroup("c"));
			}
			send(store, messages);
			GroupWeights first = GroupWeights.of(Map.of("a", 10));
			GroupWeights second = GroupWeights.of(Map.of("b", 10));
			Map<String, Integer> taken = new HashMap<>();
			for (int c = 0; c < 60; c++) {
				for (String id : ids(claim(store, token(), 16, 0, (c % 2 == 0) ? first : second).messages())) {
					taken.merge(groupOf(id), 1, Integer::sum);
				}
			}
			System.out.println("Two applications, a weighs 10 on one and b on the other, 60 claims of 16: " + taken);
			assertThat(taken.getOrDefault("c", 0)).as("%s", taken).isGreaterThan(0);
			assertThat(taken.getOrDefault("a", 0)).as("%s", taken).isGreaterThan(taken.getOrDefault("c", 0));
			assertThat(taken.getOrDefault("b", 0)).as("%s", taken).isGreaterThan(taken.getOrDefault("c", 0));
		}
	}

	/** Weights the properties could carry: out of range, too many groups, a bad name. */
	@Test
	void badWeightsFailNamingTheProblem() {
		Map<String, Integer> many = new HashMap<>();
		for (int i = 0; i < 101; i++) {
			many.put("g" + i, 2);
		}
		assertThatIllegalArgumentException().isThrownBy(() -> GroupWeights.of(many))
			.withMessage("At most 100 groups may have a weight, but 101 have one");
		assertThatIllegalArgumentException().isThrownBy(() -> GroupWeights.of(Map.of("gold", -3)))
			.withMessageContaining("'gold'");
		assertThatIllegalArgumentException().isThrownBy(() -> GroupWeights.of(Map.of("x".repeat(201), 2)))
			.withMessageStartingWith("A group with a weight has an invalid name");
		Map<String, Integer> withNull = new HashMap<>();
		withNull.put("gold", null);
		assertThatIllegalArgumentException().isThrownBy(() -> GroupWeights.of(withNull))
			.withMessageContaining("'gold'");
	}

	// ---- The reply's pause end

	/**
	 * The reply's pause end beside messages taken, a replay of that claim, a rate limit's
	 * trailing element and a claim that read nothing: never "more", never misread as the
	 * rate limit's wait.
	 */
	@Test
	void thePauseEndInTheReplyIsNeverReadAsMoreNorAsTheRateLimitsWait() {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			DelayQueueGroups groups = new DelayQueueGroups(store);
			send(store, List.of(due("g-0", 10).inGroup("g"), due("h-0", 11).inGroup("h"), due("h-1", 12).inGroup("h"),
					due("h-2", 13).inGroup("h")));
			groups.pause(TOPIC, "g", Duration.ofSeconds(5));
			String token = token();
			ClaimResult some = claim(store, token, 10, 0, GroupWeights.NONE);
			assertThat(ids(some.messages())).containsExactly("h-0", "h-1", "h-2");
			assertThat(some.more()).isFalse();
			assertThat(some.rateLimitedFor()).isZero();
			assertThat(some.groupPauseEndsIn()).isBetween(Duration.ofSeconds(4), Duration.ofSeconds(5));
			ClaimResult replayed = claim(store, token, 10, 0, GroupWeights.NONE);
			assertThat(ids(replayed.messages())).containsExactly("h-0", "h-1", "h-2");
			assertThat(replayed.more()).isFalse();
			ClaimResult nothing = claim(store, token(), 10, 0, GroupWeights.NONE);
			assertThat(nothing.messages()).isEmpty();
			assertThat(nothing.more()).isFalse();
			assertThat(nothing.groupPauseEndsIn()).isBetween(Duration.ofSeconds(4), Duration.ofSeconds(5));
			// A rate limit: two taken of four, the window's wait follows the pause end.
			send(store, List.of(due("k-0", 20).inGroup("k"), due("k-1", 21).inGroup("k"), due("k-2", 22).inGroup("k"),
					due("k-3", 23).inGroup("k")));
			RateLimit limit = new RateLimit(2, Duration.ofSeconds(30));
			String limitedToken = token();
			ClaimResult limited = Transitions.claim(store, TOPIC, limitedToken, limitedToken, 10, 0, MINUTE, limit);
			assertThat(limited.messages()).hasSize(2);
			assertThat(limited.rateLimitedFor()).isBetween(Duration.ofSeconds(29), Duration.ofSeconds(30));
			assertThat(limited.more()).isFalse();
			String fullToken = token();
			ClaimResult noRoom = Transitions.claim(store, TOPIC, fullToken, fullToken, 10, 0, MINUTE, limit);
			assertThat(noRoom.messages()).isEmpty();
			assertThat(noRoom.rateLimitedFor()).isBetween(Duration.ofSeconds(29), Duration.ofSeconds(30));
			assertThat(noRoom.more()).isFalse();
		}
	}

	/** A pause until resumed has no end to wake at; a later pause with an end does. */
	@Test
	void aPauseUntilResumedWakesNobodyButAPauseWithAnEndDoes() {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			DelayQueueGroups groups = new DelayQueueGroups(store);
			send(store, List.of(due("g-0", 10).inGroup("g"), due("h-0", 11).inGroup("h")));
			groups.pause(TOPIC, "g");
			groups.pause(TOPIC, "h");
			ClaimResult forever = claim(store, token(), 10, 0, GroupWeights.NONE);
			assertThat(forever.messages()).isEmpty();
			assertThat(forever.more()).isFalse();
			assertThat(forever.groupPauseEndsIn()).isZero();
			groups.pause(TOPIC, "h", Duration.ofSeconds(3));
			ClaimResult withEnd = claim(store, token(), 10, 0, GroupWeights.NONE);
			assertThat(withEnd.messages()).isEmpty();
			assertThat(withEnd.groupPauseEndsIn()).isBetween(Duration.ofSeconds(2), Duration.ofSeconds(3));
		}
	}

	/**
	 * The pauses' head is the pause of a group with nothing ready (pausing a group
	 * without messages is allowed). The claim at its end removes it: it must still say
	 * when the next pause ends, the one of a group with a message waiting, or idle
	 * listeners wait for their idle check (20 s here).
	 */
	@Test
	void aClaimThatRemovesAnEndedPauseStillSaysWhenTheNextPauseEnds() {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			DelayQueueGroups groups = new DelayQueueGroups(store);
			send(store, List.of(due("g-0", 10).inGroup("g")));
			groups.pause(TOPIC, "empty", Duration.ofMillis(200));
			groups.pause(TOPIC, "g", Duration.ofSeconds(3));
			ClaimResult before = claim(store, token(), 10, 0, GroupWeights.NONE);
			assertThat(before.groupPauseEndsIn()).isBetween(Duration.ofMillis(1), Duration.ofMillis(200));
			await().pollDelay(before.groupPauseEndsIn().plusMillis(5)).until(() -> true);
			ClaimResult atTheEnd = claim(store, token(), 10, 0, GroupWeights.NONE);
			assertThat(atTheEnd.messages()).isEmpty();
			assertThat(atTheEnd.more()).isFalse();
			assertThat(atTheEnd.groupPauseEndsIn()).as("the next pause's end")
				.isBetween(Duration.ofSeconds(2), Duration.ofSeconds(3));
		}
	}

	/**
	 * More than 100 pauses ended at once, none of a group with messages, before the pause
	 * of a group with a message that has ended too: the claim removes 100 and must not
	 * answer "nothing more, no pause to wait for".
	 */
	@Test
	void aClaimThatRemovesAHundredEndedPausesSaysToClaimAgainForTheRest() {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			DelayQueueGroups groups = new DelayQueueGroups(store);
			send(store, List.of(due("g-0", 10).inGroup("g")));
			groups.pause(TOPIC, "g", Duration.ofMillis(400));
			// g is parked by a claim while paused.
			assertThat(claim(store, token(), 10, 0, GroupWeights.NONE).messages()).isEmpty();
			for (int i = 0; i < 150; i++) {
				groups.pause(TOPIC, "e" + i, Duration.ofMillis(100));
			}
			await().pollDelay(Duration.ofMillis(450)).until(() -> true);
			ClaimResult first = claim(store, token(), 10, 0, GroupWeights.NONE);
			assertThat(first.messages()).isEmpty();
			assertThat(first.more() || !first.groupPauseEndsIn().isZero())
				.as("more %s, pause ends in %s", first.more(), first.groupPauseEndsIn())
				.isTrue();
			List<String> next = new ArrayList<>();
			for (int c = 0; c < 3 && next.isEmpty(); c++) {
				next.addAll(ids(claim(store, token(), 10, 0, GroupWeights.NONE).messages()));
			}
			assertThat(next).containsExactly("g-0");
		}
	}

	// ---- Listeners woken by pause ends

	/**
	 * End to end: an idle listener (idle check 20 s) claims a paused group's message soon
	 * after its pause ends, even when the pauses' head was the pause of a group without
	 * messages that ended before.
	 */
	@Test
	void anIdleListenerClaimsAtTheSecondPausesEndAfterAPauseOfAGroupWithoutMessages() {
		try (TestStore test = TestStore.create()) {
			DelayQueueRuntime runtime = start(test, settings(4, 0, GroupWeights.NONE));
			try {
				DelayQueueGroups groups = new DelayQueueGroups(test.store());
				test.template().send(DelayMessage.builder(TOPIC, "x").id("first").group("other").build());
				await().atMost(Duration.ofSeconds(10)).until(() -> this.delivered.containsKey("first"));
				groups.pause(TOPIC, "empty", Duration.ofMillis(300));
				long pauseEnd = groups.pause(TOPIC, "shop", Duration.ofMillis(1500)).toEpochMilli();
				test.template().send(DelayMessage.builder(TOPIC, "x").id("paused").group("shop").build());
				await().atMost(IDLE_CHECK.dividedBy(2)).until(() -> this.delivered.containsKey("paused"));
				long late = this.delivered.get("paused") - pauseEnd;
				System.out.println("Delivered " + late + " ms after the second pause's end");
				assertThat(late).isBetween(-50L, 1000L);
			}
			finally {
				runtime.stop();
			}
		}
	}

	/**
	 * A partitioned topic (4 partitions): each partition's consumer wakes at the end of
	 * its own partition's pauses; 12 groups paused 1-3.2 s with a message each are all
	 * delivered soon after their own end, not at the 20 s idle check.
	 */
	@Test
	void eachPartitionsConsumerWakesAtItsOwnPausesEnds() {
		try (TestStore test = TestStore.builder().partitions(Map.of(TOPIC, 4)).build()) {
			DelayQueueRuntime runtime = start(test, settings(4, 0, GroupWeights.NONE));
			try {
				DelayQueueGroups groups = new DelayQueueGroups(test.store());
				test.template().send(DelayMessage.builder(TOPIC, "x").id("first").group("other").build());
				await().atMost(Duration.ofSeconds(10)).until(() -> this.delivered.containsKey("first"));
				Map<String, Long> ends = new HashMap<>();
				for (int i = 0; i < 12; i++) {
					String group = "p" + i;
					ends.put(group, groups.pause(TOPIC, group, Duration.ofMillis(1000 + 200 * i)).toEpochMilli());
					test.template().send(DelayMessage.builder(TOPIC, "x").id(group).group(group).build());
				}
				await().atMost(IDLE_CHECK.dividedBy(2))
					.until(() -> ends.keySet().stream().allMatch(this.delivered::containsKey));
				long worst = ends.entrySet()
					.stream()
					.mapToLong((end) -> this.delivered.get(end.getKey()) - end.getValue())
					.max()
					.orElseThrow();
				System.out.println("Partitioned topic: the latest of 12 paused groups delivered " + worst
						+ " ms after its pause's end");
				assertThat(worst).isLessThan(1000);
				ends.forEach((group, end) -> assertThat(this.delivered.get(group)).as(group)
					.isGreaterThanOrEqualTo(end - 50));
			}
			finally {
				runtime.stop();
			}
		}
	}

	/**
	 * An operator shortens a pause (pausing a paused group sets its end anew) after an
	 * idle listener learnt the first end: the shorter pause signals the consumers, which
	 * claim and learn the new end (it waited for the old end, 10 s here, before).
	 */
	@Test
	void anIdleListenerClaimsAtTheEndOfAShortenedPause() {
		try (TestStore test = TestStore.create()) {
			DelayQueueRuntime runtime = start(test, settings(4, 0, GroupWeights.NONE));
			try {
				DelayQueueGroups groups = new DelayQueueGroups(test.store());
				groups.pause(TOPIC, "shop", Duration.ofSeconds(10));
				test.template().send(DelayMessage.builder(TOPIC, "x").id("paused").group("shop").build());
				// The send's signal makes the listener claim: it learns the 10 s end.
				await().pollDelay(Duration.ofMillis(500)).until(() -> true);
				long newEnd = groups.pause(TOPIC, "shop", Duration.ofMillis(300)).toEpochMilli();
				await().atMost(Duration.ofSeconds(5)).until(() -> this.delivered.containsKey("paused"));
				assertThat(this.delivered.get("paused") - newEnd).isLessThan(1000);
			}
			finally {
				runtime.stop();
			}
		}
	}

	/**
	 * A rate-limited listener (2 a 3 s window) whose claim used up the window while a
	 * group's pause ends sooner (500 ms): the pause's end does not make it claim before
	 * the window has room, and the window's re-check is not delayed by it either.
	 */
	@Test
	void aPauseEndNeitherPassesNorDelaysTheRateLimitsWindow() {
		try (TestStore test = TestStore.create()) {
			ListenerSettings limited = new ListenerSettings(4, 0, 3, Duration.ofSeconds(30),
					new RetryBackoff(Duration.ofSeconds(1), 2.0, Duration.ofMinutes(1)), IDLE_CHECK,
					Duration.ofSeconds(2), Duration.ofMinutes(5), LatePolicy.DELIVER, Duration.ofHours(1),
					ListenerSettings.DEFAULT_MAX_BATCH_SIZE, ListenerSettings.DEFAULT_BATCH_TIMEOUT,
					new RateLimit(2, Duration.ofSeconds(3)), List.of(), 0, false, GroupWeights.NONE, null);
			DelayQueueGroups groups = new DelayQueueGroups(test.store());
			long pauseEnd = groups.pause(TOPIC, "g", Duration.ofMillis(500)).toEpochMilli();
			test.template().send(DelayMessage.builder(TOPIC, "x").id("g-0").group("g").build());
			for (int i = 0; i < 4; i++) {
				test.template().send(DelayMessage.builder(TOPIC, "x").id("h-" + i).group("h").build());
			}
			long start = System.currentTimeMillis();
			DelayQueueRuntime runtime = start(test, limited);
			try {
				await().atMost(Duration.ofSeconds(15)).until(() -> this.delivered.size() == 5);
				List<Long> times = this.delivered.values().stream().sorted().toList();
				System.out.println("Rate limited 2 a 3 s, a pause ending at +" + (pauseEnd - start)
						+ " ms: delivered at +" + times.stream().map((t) -> t - start).toList() + " ms");
				for (int k = 2; k < times.size(); k++) {
					assertThat(times.get(k) - times.get(k - 2)).as("two deliveries before: %s", times)
						.isGreaterThanOrEqualTo(2900);
				}
				assertThat(times.get(2) - times.get(0)).as("the window's re-check").isLessThan(3600);
			}
			finally {
				runtime.stop();
			}
		}
	}

	/**
	 * A listener stopped while a claim at a pause's end is scheduled stops at once and
	 * claims nothing after its stop.
	 */
	@Test
	void aListenerStoppedWhileAPauseEndClaimIsScheduledClaimsNothingAfterItsStop() {
		try (TestStore test = TestStore.create()) {
			DelayQueueRuntime runtime = start(test, settings(4, 0, GroupWeights.NONE));
			DelayQueueGroups groups = new DelayQueueGroups(test.store());
			test.template().send(DelayMessage.builder(TOPIC, "x").id("first").group("other").build());
			await().atMost(Duration.ofSeconds(10)).until(() -> this.delivered.containsKey("first"));
			groups.pause(TOPIC, "shop", Duration.ofMillis(800));
			test.template().send(DelayMessage.builder(TOPIC, "x").id("paused").group("shop").build());
			await().pollDelay(Duration.ofMillis(200)).until(() -> true);
			long start = System.nanoTime();
			runtime.stop();
			long stopMillis = (System.nanoTime() - start) / 1_000_000;
			System.out.println("Stopped in " + stopMillis + " ms with a pause-end claim scheduled");
			assertThat(stopMillis).isLessThan(2000);
			await().pollDelay(Duration.ofMillis(1200)).until(() -> true);
			assertThat(this.delivered).doesNotContainKey("paused");
			assertThat(test.redis().opsForZSet().size(test.store().keys(TOPIC).inFlight())).isZero();
		}
	}

	/**
	 * What pause ends cost an idle application (one listener, one broker): claims a
	 * second, counted from the Redis server's script calls, with 300 groups paused for
	 * 0.5-3.5 s each (about 100 pause ends a second), with one message each and with none
	 * (the groups with nothing ready wake listeners too: one group with a message paused
	 * for an hour keeps the group ready set filled), against a baseline.
	 */
	private static final int PAUSED_GROUPS = 300;

	private static final int PAUSE_SPREAD_MILLIS = 3000;

	@Test
	void hundredsOfPauseEndsCostAboutOneClaimEach() {
		Random random = new Random(38);
		try (TestStore test = TestStore.create()) {
			DelayQueueRuntime runtime = start(test, settings(50, 0, GroupWeights.NONE));
			try {
				DelayQueueGroups groups = new DelayQueueGroups(test.store());
				test.template().send(DelayMessage.builder(TOPIC, "x").id("first").group("other").build());
				await().atMost(Duration.ofSeconds(10)).until(() -> this.delivered.containsKey("first"));
				groups.pause(TOPIC, "hour", Duration.ofHours(1));
				test.template().send(DelayMessage.builder(TOPIC, "x").id("hour-0").group("hour").build());
				await().pollDelay(Duration.ofMillis(500)).until(() -> true);
				double baseline = CommandStats.scriptCallsPerSecond(test.redis(), Duration.ofSeconds(2));
				for (int i = 0; i < PAUSED_GROUPS; i++) {
					groups.pause(TOPIC, "empty-" + i, Duration.ofMillis(500 + random.nextInt(PAUSE_SPREAD_MILLIS)));
				}
				double empty = CommandStats.scriptCallsPerSecond(test.redis(), Duration.ofSeconds(4));
				Map<String, Long> ends = new HashMap<>();
				for (int i = 0; i < PAUSED_GROUPS; i++) {
					ends.put("full-" + i,
							groups
								.pause(TOPIC, "full-" + i, Duration.ofMillis(500 + random.nextInt(PAUSE_SPREAD_MILLIS)))
								.toEpochMilli());
					test.template().send(DelayMessage.builder(TOPIC, "x").id("full-" + i).group("full-" + i).build());
				}
				double full = CommandStats.scriptCallsPerSecond(test.redis(), Duration.ofSeconds(4));
				System.out.printf(
						"Script calls a second: idle baseline %.1f; %d groups without messages paused 0.5-3.5 s %.1f;"
								+ " %d groups with one message each paused 0.5-3.5 s %.1f%n",
						baseline, PAUSED_GROUPS, empty, PAUSED_GROUPS, full);
				await().atMost(Duration.ofSeconds(10))
					.until(() -> this.delivered.keySet()
						.stream()
						.filter((id) -> id.startsWith("full-"))
						.count() == PAUSED_GROUPS);
				long[] late = ends.entrySet()
					.stream()
					.mapToLong((end) -> this.delivered.get(end.getKey()) - end.getValue())
					.sorted()
					.toArray();
				int last = PAUSED_GROUPS - 1;
				System.out.printf(
						"%d paused groups delivered after their pause's end: min %d, median %d, p99 %d,"
								+ " max %d ms%n",
						PAUSED_GROUPS, late[0], late[PAUSED_GROUPS / 2], late[PAUSED_GROUPS * 99 / 100], late[last]);
				assertThat(late[0]).isGreaterThanOrEqualTo(-50);
				assertThat(late[last]).isLessThan(2000);
				assertThat(empty).isLessThan(250);
				assertThat(full).isLessThan(400);
			}
			finally {
				runtime.stop();
			}
		}
	}

	void handle(Delivery<String> delivery) {
		this.delivered.put(delivery.id(), System.currentTimeMillis());
	}

	// ---- Support

	private ListenerSettings settings(int concurrency, int prefetch, GroupWeights weights) {
		return new ListenerSettings(concurrency, prefetch, 3, Duration.ofSeconds(30),
				new RetryBackoff(Duration.ofSeconds(1), 2.0, Duration.ofMinutes(1)), IDLE_CHECK, Duration.ofSeconds(2),
				Duration.ofMinutes(5), LatePolicy.DELIVER, Duration.ofHours(1), ListenerSettings.DEFAULT_MAX_BATCH_SIZE,
				ListenerSettings.DEFAULT_BATCH_TIMEOUT, null, List.of(), 0, false, weights, null);
	}

	private DelayQueueRuntime start(TestStore test, ListenerSettings settings) {
		JsonPayloadConverter converter = new JsonPayloadConverter(new JsonMapper());
		DelayListenerEndpointRegistry registry = new DelayListenerEndpointRegistry(converter);
		Method method = Objects.requireNonNull(ReflectionUtils.findMethod(getClass(), "handle", Delivery.class));
		registry.register(new DelayListenerEndpoint(TOPIC, this, method, settings));
		DelayQueueRuntime runtime = new DelayQueueRuntime(test.store(), converter,
				new BrokerSettings(100, Duration.ofSeconds(1), Duration.ZERO), registry);
		runtime.start();
		return runtime;
	}

	private static void send(RedisMessageStore store, List<NewMessage> messages) {
		for (int from = 0; from < messages.size(); from += 500) {
			store.send(TOPIC, messages.subList(from, Math.min(messages.size(), from + 500)));
		}
		while (Transitions.promote(store, TOPIC, 1000).moved() > 0) {
			// all made ready
		}
	}

	private static ClaimResult claim(RedisMessageStore store, String token, int limit, int groupConcurrency,
			GroupWeights weights) {
		String consumer = token.substring(0, token.indexOf('.'));
		return store.topic(TOPIC)
			.claim(consumer, token, limit, 0, MINUTE, null, groupConcurrency, weights, null, WriteGate.OPEN)
			.join();
	}

	private static final AtomicInteger TOKENS = new AtomicInteger();

	private static String token() {
		return "c" + TOKENS.incrementAndGet() + ".1";
	}

	private static String groupOf(String id) {
		return id.startsWith("n-") ? "" : id.substring(0, id.indexOf('-'));
	}

}

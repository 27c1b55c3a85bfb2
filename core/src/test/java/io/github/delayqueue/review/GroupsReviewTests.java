package io.github.delayqueue.review;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;

import io.github.delayqueue.convert.JsonPayloadConverter;
import io.github.delayqueue.listener.DelayListenerEndpoint;
import io.github.delayqueue.listener.DelayListenerEndpointRegistry;
import io.github.delayqueue.listener.Delivery;
import io.github.delayqueue.listener.LatePolicy;
import io.github.delayqueue.listener.ListenerSettings;
import io.github.delayqueue.runtime.DelayQueueRuntime;
import io.github.delayqueue.runtime.broker.BrokerSettings;
import io.github.delayqueue.store.ClaimResult;
import io.github.delayqueue.store.ClaimedMessage;
import io.github.delayqueue.store.MessageFormat;
import io.github.delayqueue.store.MessagePage;
import io.github.delayqueue.store.MessageState;
import io.github.delayqueue.store.MessageSummary;
import io.github.delayqueue.store.NewMessage;
import io.github.delayqueue.store.RateLimit;
import io.github.delayqueue.store.TopicStats;
import io.github.delayqueue.store.redis.RedisMessageStore;
import io.github.delayqueue.store.redis.TopicKeys;
import io.github.delayqueue.test.redis.FaultyRedisProxy;
import io.github.delayqueue.test.redis.TestRedis;
import io.github.delayqueue.testsupport.OnOneServerVersion;
import io.github.delayqueue.testsupport.PartitionApps;
import io.github.delayqueue.testsupport.Interruptibly;
import io.github.delayqueue.testsupport.TestStore;
import io.github.delayqueue.testsupport.Transitions;
import io.github.delayqueue.time.RetryBackoff;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Disabled;
import org.junit.jupiter.api.Test;

import tools.jackson.databind.json.JsonMapper;

import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Adversarial review of groups, step 1 (the scripts), on a real Redis: the bookkeeping of
 * the group keys ({@code g}, {@code gq}, {@code gn}, {@code gv}, {@code ga}) across every
 * transition, the fairness of the rotation, keys lost or of the wrong type.
 */
@OnOneServerVersion
class GroupsReviewTests {

	private static final String TOPIC = "jobs";

	private static final Duration MINUTE = Duration.ofMinutes(1);

	// ---- Holes found
	// --------------------------------------------------------------------

	/**
	 * The rotation is rebuilt by a claim only when it is empty: a promote (or a
	 * hand-back, or a lease expiry) that runs first recreates it with its own group
	 * alone, and the groups that had ready messages stay out of it, though {@code gn}
	 * counts them, until the rotation happens to be empty again: behind a busy group
	 * (here 300 ready messages, claims of 10) they wait for all of it.
	 */
	@Test
	void groupsLeftOutOfALostRotationAreServedEvenWhenAPromoteRecreatedItFirst() {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			TopicKeys keys = store.keys(TOPIC);
			store.send(TOPIC, List.of(due("a", 1).inGroup("g"), due("b", 2).inGroup("h")));
			Transitions.promote(store, TOPIC, 1000);
			test.redis().delete(keys.groupRotation());
			List<NewMessage> busy = new ArrayList<>();
			for (int i = 0; i < 300; i++) {
				busy.add(due("k-" + i, 3 + i).inGroup("k"));
			}
			store.send(TOPIC, busy);
			Transitions.promote(store, TOPIC, 1000);
			List<String> claimed = drain(store, 10);
			assertThat(claimed).hasSize(302);
			assertThat(claimed.subList(0, 64))
				.as("the first 64 claimed, with gn %s and ga %s left",
						test.redis().opsForHash().entries(keys.groupCounts()),
						test.redis().opsForZSet().range(keys.groupRotation(), 0, -1))
				.contains("a", "b");
		}
	}

	/**
	 * A claim reads the first 100 groups of the rotation; when every one of them runs out
	 * before the claim has what it wants, it answers that nothing more waits, though the
	 * groups behind them have ready messages. A consumer that trusts the answer waits for
	 * the next signal or broker call.
	 */
	@Test
	void aClaimThatServedTheFirstHundredGroupsSaysMoreAreWaitingWhenMoreGroupsHaveReadyMessages() {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			List<NewMessage> messages = new ArrayList<>();
			for (int g = 0; g < 150; g++) {
				messages.add(due("m-" + g, 1 + g).inGroup("group-" + g));
			}
			store.send(TOPIC, messages);
			Transitions.promote(store, TOPIC, 1000);
			String consumer = "c1";
			ClaimResult first = Transitions.claim(store, TOPIC, consumer, consumer + ".1", 1000, 0, MINUTE);
			assertThat(first.messages().size() == 150 || first.more())
				.as("claimed %d of 150 ready messages, more waiting: %s", first.messages().size(), first.more())
				.isTrue();
		}
	}

	/**
	 * The messages of no group take their turn as the group "" of the rotation, and win
	 * ties by name. While the broker's lookahead has made 1,500 of them ready before
	 * their due time, a claim that takes none early (a rate-limited topic, or a consumer
	 * without room to hold one) keeps them at the head and spends its budget of 1,000 ids
	 * looked at on them: the turn of "" takes nothing, so its tag does not grow and it is
	 * served first again by the next claim. A due message of a group waits until the
	 * early ones fall due.
	 */
	@Test
	void aDueMessageOfAGroupIsClaimedWhileMessagesOfNoGroupWaitEarlyInTheReadyList() {
		assertThat(claimedBehindEarlyMessages(0)).as("claimed by five claims of 10, none early").contains("due");
	}

	/**
	 * The same with claims that take up to 10 early ones (a consumer that prefetches).
	 */
	@Test
	void aDueMessageOfAGroupIsClaimedWhileMessagesOfNoGroupWaitEarlyAndConsumersPrefetch() {
		assertThat(claimedBehindEarlyMessages(10)).as("claimed by five claims of 10 and 10 early").contains("due");
	}

	private static List<String> claimedBehindEarlyMessages(int earlyLimit) {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			List<NewMessage> early = new ArrayList<>();
			for (int i = 0; i < 1500; i++) {
				early.add(NewMessage.afterDelay("early-" + i, Duration.ofSeconds(30), body()));
			}
			store.send(TOPIC, early);
			assertThat(Transitions.promote(store, TOPIC, 5000, MINUTE).moved()).isEqualTo(1500);
			store.send(TOPIC, List.of(grouped("due", 1, "g")));
			Transitions.promote(store, TOPIC, 5000);
			List<String> claimed = new ArrayList<>();
			for (int i = 0; i < 5; i++) {
				claimed.addAll(ids(Transitions.claim(store, TOPIC, "c", "c." + i, 10, earlyLimit, MINUTE).messages()));
			}
			return claimed;
		}
	}

	/**
	 * A cancel of the last message of any group while it is ready empties {@code g}: from
	 * then on claims skip the rotation (uses_groups is false) and never drop the member
	 * it left, so {@code gq}, {@code gn} and {@code ga} keep it for good, and every
	 * promote answers that something is ready (ready_waiting counts {@code gq}), so
	 * consumers claim in vain after each broker call.
	 */
	@Test
	void aReadyMessageOfAGroupCancelledWhenItWasTheLastOfAnyGroupLeavesNothingReadyBehind() {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			TopicKeys keys = store.keys(TOPIC);
			store.send(TOPIC, List.of(due("a", 1).inGroup("g")));
			Transitions.promote(store, TOPIC, 1000);
			assertThat(store.cancel(TOPIC, "a")).isTrue();
			assertThat(Transitions.claim(store, TOPIC, 10, MINUTE)).isEmpty();
			assertThat(Transitions.claim(store, TOPIC, 10, MINUTE)).isEmpty();
			assertThat(Transitions.promote(store, TOPIC, 1000).readyWaiting()).as("promote's ready waiting").isFalse();
			assertThat(test.redis().keys(keys.groupReady() + "*")).as("gq").isEmpty();
			assertThat(test.redis().opsForHash().entries(keys.groupCounts())).as("gn").isEmpty();
			assertThat(test.redis().opsForZSet().range(keys.groupRotation(), 0, -1)).as("ga").isEmpty();
		}
	}

	/**
	 * The stats pass over ids that a cancel or reschedule left in a ready list, but not
	 * over the member such a call leaves in {@code gq}: the oldest ready message is the
	 * cancelled one, and with the case above (no group left) it stays so for good, a
	 * lateness gauge that grows without end on an empty topic.
	 */
	@Test
	void theStatsPassOverTheMemberACancelLeftInItsGroup() {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			long now = System.currentTimeMillis();
			store.send(TOPIC, List.of(due("old", now - 3_600_000).inGroup("g"), due("new", now - 1000).inGroup("g")));
			Transitions.promote(store, TOPIC, 1000);
			assertThat(store.cancel(TOPIC, "old")).isTrue();
			TopicStats stats = store.stats(TOPIC);
			assertThat(stats.oldestLateness()).as("oldest lateness with %s ready", stats.ready())
				.isLessThan(Duration.ofMinutes(10));
		}
	}

	/** The same, on a topic with no message left. */
	@Test
	void theStatsOfATopicWhoseLastReadyMessageOfAGroupWasCancelledShowNothingLate() {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			long now = System.currentTimeMillis();
			store.send(TOPIC, List.of(due("old", now - 3_600_000).inGroup("g")));
			Transitions.promote(store, TOPIC, 1000);
			assertThat(store.cancel(TOPIC, "old")).isTrue();
			Transitions.claim(store, TOPIC, 10, MINUTE);
			TopicStats stats = store.stats(TOPIC);
			assertThat(stats.oldestLateness()).as("oldest lateness with %s stored", stats.ready()).isZero();
		}
	}

	/**
	 * The ready page leaves out ids that claim would drop from a ready list, but lists
	 * every member of {@code gq}, stale ones included, and a stale id in a ready list
	 * whose message has a group since: a message cancelled and sent again shows twice.
	 */
	@Test
	void aPageOfReadyMessagesListsAMessageSentAgainInAGroupOnce() {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			store.send(TOPIC, List.of(due("a", 1).inGroup("g"), due("b", 1)));
			Transitions.promote(store, TOPIC, 1000);
			assertThat(store.cancel(TOPIC, "a")).isTrue();
			assertThat(store.cancel(TOPIC, "b")).isTrue();
			store.send(TOPIC, List.of(due("a", 2).inGroup("g"), due("b", 2).inGroup("g")));
			Transitions.promote(store, TOPIC, 1000);
			MessagePage page = store.inspector(TOPIC).page(MessageState.READY, 0, 10);
			assertThat(page.messages().stream().map(MessageSummary::id)).containsExactlyInAnyOrder("a", "b");
		}
	}

	/**
	 * The store's API takes the group beside the body ({@code NewMessage.inGroup}) and
	 * replay reads it from the body's header: a message sent with a group but no header
	 * (as the store API lets any caller send one) loses its group when replayed. The
	 * template on wip/api may add the header; the store does not.
	 */
	// ---- Lost keys: what happens (the design defers a recount to step 5)
	// -----------------

	/**
	 * A lost {@code gn} (deleted, or moved aside as of the wrong type): claims skip the
	 * rotation while it is empty, so every ready message of a group waits; once a promote
	 * counts one new message, the groups of the rotation are served once and leave it
	 * (their count is read as 0), their other ready messages stranded.
	 */
	@Test
	void readyMessagesOfGroupsAreClaimedAfterTheirCountsWereLost() {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			TopicKeys keys = store.keys(TOPIC);
			List<NewMessage> messages = new ArrayList<>();
			for (int i = 0; i < 40; i++) {
				messages.add(due("g-" + i, 1 + i).inGroup("g"));
			}
			store.send(TOPIC, messages);
			Transitions.promote(store, TOPIC, 1000);
			test.redis().delete(keys.groupCounts());
			store.send(TOPIC, List.of(due("k-0", 100).inGroup("k")));
			Transitions.promote(store, TOPIC, 1000);
			assertThat(drain(store, 10)).hasSize(41);
		}
	}

	/**
	 * A lost {@code gq}: its members are the only index of the groups' ready messages;
	 * the next claim finds no member, and the groups leave the rotation; the messages
	 * stay stored, ready, never claimed (not in the schedule, no lease to expire).
	 */
	@Test
	@Disabled("Known: a deleted gq (only an eviction can delete it, and the queue requires noeviction) strands the "
			+ "groups' ready messages; one moved aside as of the wrong type is rebuilt by regroup.lua (see "
			+ "theRepairOfAGroupKeyOfTheWrongTypeLetsTheTopicGoOn)")
	void readyMessagesOfGroupsAreClaimedAfterTheGroupReadySetWasLost() {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			store.send(TOPIC, List.of(due("a", 1).inGroup("g")));
			Transitions.promote(store, TOPIC, 1000);
			test.redis().delete(store.keys(TOPIC).groupReady());
			assertThat(drain(store)).containsExactly("a");
		}
	}

	// ---- Fairness: one group's burst and 50 groups of one message

	/**
	 * One group with 10,000 ready messages and 50 groups with one each, all ready at
	 * once, claims of 10: each small group's message comes within G x 16 claimed
	 * messages.
	 */
	@Test
	void eachSmallGroupIsServedWithinGroupsTimesSixteenClaimedMessagesBehindABurst() {
		assertThat(fairness(false, false, 50, null, 0)).isLessThanOrEqualTo(51 * 16);
	}

	/** The same with priorities 0 to 9 in the big group. */
	@Test
	void eachSmallGroupIsServedInTimeBehindABurstWithPriorities() {
		assertThat(fairness(true, false, 50, null, 0)).isLessThanOrEqualTo(51 * 16);
	}

	/** The same with 10,000 ready messages of no group as well. */
	@Test
	void eachSmallGroupIsServedInTimeBehindABurstAndMessagesOfNoGroup() {
		assertThat(fairness(false, true, 50, null, 0)).isLessThanOrEqualTo(52 * 16);
	}

	/** The same under a rate limit (1,000 a second, so the first 1,000 count). */
	@Test
	void eachSmallGroupIsServedInTimeBehindABurstUnderARateLimit() {
		assertThat(fairness(true, true, 50, new RateLimit(1000, Duration.ofSeconds(1)), 0))
			.isLessThanOrEqualTo(52 * 16);
	}

	/** The small groups come after the burst has drained 2,000 messages. */
	@Test
	void smallGroupsThatComeWhileABurstDrainsAreServedInTime() {
		assertThat(fairness(true, true, 50, null, 2000)).isLessThanOrEqualTo(52 * 16);
	}

	/** 150 small groups: more than the 100 groups a claim reads from the rotation. */
	@Test
	void eachOfMoreThanAHundredSmallGroupsIsServedInTime() {
		assertThat(fairness(false, false, 150, null, 0)).isLessThanOrEqualTo(151 * 16);
	}

	/**
	 * Sends the burst (and 10,000 of no group if asked), drains {@code before} messages,
	 * then sends one message to each of {@code small} groups, and claims 10 at a time.
	 * @return the most messages claimed after the small groups became ready before one of
	 * them was
	 */
	private static int fairness(boolean priorities, boolean ungrouped, int small, @Nullable RateLimit rateLimit,
			int before) {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			Random random = new Random(42);
			List<NewMessage> burst = new ArrayList<>();
			for (int i = 0; i < 10_000; i++) {
				NewMessage message = due("big-" + i, 1000 + i).inGroup("big");
				burst.add(priorities ? message.withPriority(random.nextInt(10)) : message);
				if (ungrouped) {
					burst.add(due("plain-" + i, 1000 + i));
				}
				if (burst.size() >= 1000) {
					store.send(TOPIC, burst);
					burst.clear();
				}
			}
			promoteAll(store);
			int token = 0;
			for (int claimed = 0; claimed < before;) {
				List<ClaimedMessage> messages = Transitions
					.claim(store, TOPIC, "c", "c." + (++token), 10, 0, MINUTE, null)
					.messages();
				assertThat(messages).isNotEmpty();
				claimed += messages.size();
			}
			List<NewMessage> smalls = new ArrayList<>();
			for (int g = 0; g < small; g++) {
				smalls.add(due("small-" + g, 5000 + g).inGroup("small-" + g));
			}
			store.send(TOPIC, smalls);
			promoteAll(store);
			Set<String> waiting = new HashSet<>();
			smalls.forEach((m) -> waiting.add(m.id()));
			int claimed = 0;
			int latest = 0;
			while (!waiting.isEmpty()) {
				ClaimResult result = Transitions.claim(store, TOPIC, "c", "c." + (++token), 10, 0, MINUTE, rateLimit);
				assertThat(result.messages())
					.as("claimed with %s small groups waiting, %d claimed", waiting.size(), claimed)
					.isNotEmpty();
				for (ClaimedMessage message : result.messages()) {
					claimed++;
					if (waiting.remove(message.id())) {
						latest = claimed;
					}
				}
			}
			System.out.printf(
					"fairness: priorities %s, ungrouped %s, %d small groups, rate limit %s, %d before:"
							+ " the last small group's message was claimed %dth%n",
					priorities, ungrouped, small, rateLimit, before, latest);
			return latest;
		}
	}

	private static void promoteAll(RedisMessageStore store) {
		while (Transitions.promote(store, TOPIC, 5000).moved() > 0) {
			// until nothing more is due
		}
	}

	// ---- Keys of the wrong type

	/**
	 * Each group key ({@code g}, {@code gq}, {@code gn}, {@code gv}, {@code ga}) replaced
	 * by a string, in a topic with ready, scheduled, in-flight and dead messages of
	 * groups: every call either succeeds without needing the key or fails with WRONGTYPE
	 * having changed nothing (every key of the prefix dumped before and after).
	 */
	@Test
	void aCallThatMeetsAGroupKeyOfTheWrongTypeFailsBeforeWritingAnything() {
		List<String> outcomes = new ArrayList<>();
		for (String role : List.of("g", "gq", "gn", "gv", "ga")) {
			for (String call : CALLS) {
				try (TestStore test = TestStore.create()) {
					Fixture fixture = new Fixture(test);
					String key = fixture.key(role);
					test.redis().delete(key);
					test.redis().opsForValue().set(key, "not a " + role);
					Map<String, String> before = dump(test);
					RuntimeException failure = null;
					try {
						fixture.call(call);
					}
					catch (RuntimeException ex) {
						failure = ex;
					}
					Map<String, String> after = dump(test);
					outcomes.add(role + "/" + call + ": " + ((failure != null) ? "failed" : "ran"));
					if (failure != null) {
						assertThat(String.valueOf(failure) + String.valueOf(failure.getCause()))
							.as("%s with %s of the wrong type", call, role)
							.contains("WRONGTYPE");
						assertThat(after).as("keys after %s failed with %s of the wrong type", call, role)
							.isEqualTo(before);
					}
				}
			}
		}
		System.out.println("wrong type: " + outcomes);
	}

	/**
	 * After a call failed on a group key of the wrong type, the repair moves the key
	 * aside and every message still stored is claimed in the end (a lost g: its messages
	 * are claimed as messages of no group; a lost gq or gn: see the disabled tests
	 * above).
	 */
	@Test
	void theRepairOfAGroupKeyOfTheWrongTypeLetsTheTopicGoOn() {
		List<String> outcomes = new ArrayList<>();
		List<String> stranded = new ArrayList<>();
		for (String role : List.of("g", "gq", "gn", "gv", "ga")) {
			try (TestStore test = TestStore.create()) {
				Fixture fixture = new Fixture(test);
				String key = fixture.key(role);
				test.redis().rename(key, key + ":saved");
				test.redis().opsForValue().set(key, "not a " + role);
				RuntimeException failure = null;
				for (String call : List.of("promote", "claim", "send grouped")) {
					try {
						fixture.call(call);
					}
					catch (RuntimeException ex) {
						failure = ex;
						break;
					}
				}
				assertThat(failure).as("a call failed with %s of the wrong type", role).isNotNull();
				List<String> moved = test.store().topic(TOPIC).repairAfter(failure);
				assertThat(moved).as("moved aside").hasSize(1);
				fixture.releaseAll();
				List<String> claimed = drain(test.store());
				Set<String> left = new HashSet<>(
						test.redis().opsForHash().keys(fixture.keys.messages()).stream().map(String::valueOf).toList());
				outcomes.add(role + ": claimed " + claimed + ", left stored " + left);
				if (!left.isEmpty()) {
					stranded.add(role + " lost: " + left + " stored and never claimed");
				}
			}
		}
		System.out.println("repair: " + outcomes);
		assertThat(stranded).isEmpty();
	}

	private static final List<String> CALLS = List.of("send grouped", "send plain", "promote", "claim", "ack",
			"release", "release claim", "retry", "dead letter", "expire", "cancel ready", "cancel scheduled",
			"reschedule", "replay", "stats", "page");

	private static Map<String, String> dump(TestStore test) {
		Map<String, String> all = new TreeMap<>();
		for (String key : test.redis().keys(test.prefix() + "*")) {
			byte[] dumped = test.redis()
				.execute((RedisCallback<byte[]>) (c) -> c.keyCommands().dump(key.getBytes(StandardCharsets.UTF_8)));
			if (dumped != null && !key.endsWith(":c:c1")) {
				// The claim record of the fixture's zero lease expires on its own.
				all.put(key, java.util.HexFormat.of().formatHex(dumped));
			}
		}
		return all;
	}

	/**
	 * A topic with a ready message of group g (a) and one of no group (d), one of group h
	 * in flight under a lease that has ended (b), one of group g scheduled and due (c),
	 * one of group g later (f) and a dead letter of group g (e).
	 */
	static final class Fixture {

		final TestStore test;

		final RedisMessageStore store;

		final TopicKeys keys;

		final ClaimResult inFlight;

		Fixture(TestStore test) {
			this.test = test;
			this.store = test.store();
			this.keys = this.store.keys(TOPIC);
			this.store.send(TOPIC, List.of(grouped("e", 1, "g"), grouped("b", 2, "h")));
			Transitions.promote(this.store, TOPIC, 1000);
			ClaimedMessage e = Transitions.claim(this.store, TOPIC, 1, MINUTE).get(0);
			assertThat(e.id()).isEqualTo("e");
			assertThat(Transitions.deadLetter(this.store, TOPIC, "e", e.leaseToken(), "failed")).isTrue();
			this.inFlight = Transitions.claim(this.store, TOPIC, "c1", "c1.1", 1, 0, Duration.ZERO);
			assertThat(ids(this.inFlight.messages())).containsExactly("b");
			this.store.send(TOPIC, List.of(grouped("a", 3, "g"), due("d", 4)));
			Transitions.promote(this.store, TOPIC, 1000);
			this.store.send(TOPIC, List.of(grouped("c", 5, "g"),
					NewMessage.afterDelay("f", Duration.ofHours(1), encoded("g")).inGroup("g")));
		}

		String key(String role) {
			return switch (role) {
				case "g" -> this.keys.groups();
				case "gq" -> this.keys.groupReady();
				case "gn" -> this.keys.groupCounts();
				case "gv" -> this.keys.groupTags();
				default -> this.keys.groupRotation();
			};
		}

		void call(String call) {
			String token = this.inFlight.messages().get(0).leaseToken();
			switch (call) {
				case "send grouped" -> this.store.send(TOPIC, List.of(grouped("n", 6, "k")));
				case "send plain" -> this.store.send(TOPIC, List.of(due("o", 6)));
				case "promote" -> Transitions.promote(this.store, TOPIC, 1000);
				case "claim" -> Transitions.claim(this.store, TOPIC, 10, MINUTE);
				case "ack" -> Transitions.ack(this.store, TOPIC, "b", token);
				case "release" -> Transitions.release(this.store, TOPIC, "b", token);
				case "release claim" -> Transitions.releaseClaim(this.store, TOPIC, "c1", "c1.1", MINUTE);
				case "retry" -> Transitions.retry(this.store, TOPIC, "b", token, Duration.ZERO, "e");
				case "dead letter" -> Transitions.deadLetter(this.store, TOPIC, "b", token, "e");
				case "expire" -> Transitions.expireLeases(this.store, TOPIC, 100, 5);
				case "cancel ready" -> this.store.cancel(TOPIC, "a");
				case "cancel scheduled" -> this.store.cancel(TOPIC, "f");
				case "reschedule" -> this.store.reschedule(TOPIC, "a", Duration.ZERO);
				case "replay" -> this.store.replayDead(TOPIC, List.of("e"));
				case "stats" -> this.store.stats(TOPIC);
				case "page" -> this.store.inspector(TOPIC).page(MessageState.READY, 0, 10);
				default -> throw new IllegalArgumentException(call);
			}
		}

		/** Hands back b (if still leased) and makes f due. */
		void releaseAll() {
			try {
				Transitions.release(this.store, TOPIC, "b", this.inFlight.messages().get(0).leaseToken());
			}
			catch (RuntimeException ex) {
				this.store.topic(TOPIC).repairAfter(ex);
				Transitions.release(this.store, TOPIC, "b", this.inFlight.messages().get(0).leaseToken());
			}
			this.store.reschedule(TOPIC, "f", Duration.ZERO);
			this.store.replayDead(TOPIC, List.of("e"));
		}

	}

	static NewMessage grouped(String id, long dueMillis, String group) {
		return new NewMessage(id, false, dueMillis, encoded(group)).inGroup(group);
	}

	static byte[] encoded(String group) {
		return MessageFormat.encodeBody(Map.of(MessageFormat.GROUP_HEADER, group),
				"x".getBytes(StandardCharsets.UTF_8));
	}

	// ---- Through a proxy that delays and drops replies, several consumers

	/**
	 * 600 messages of 20 groups (priorities 0 to 9) sent, promoted and claimed by three
	 * consumers through a proxy 3 ms away that drops the reply to a script call now and
	 * then (Lettuce reconnects and sends it again, so it runs twice) or delays it past
	 * the timeout (the caller sends it again with the same lease token); one in five
	 * claimed messages is handed back. No message is claimed while another consumer holds
	 * it, every message is acknowledged, and the group keys end empty.
	 */
	@Test
	void throughDroppedAndDelayedRepliesNothingIsLostAndNothingIsClaimedTwiceWhileLeased() throws Exception {
		TestRedis shared = TestRedis.shared();
		try (PartitionApps apps = new PartitionApps();
				FaultyRedisProxy proxy = FaultyRedisProxy.start(shared.host(), shared.port())) {
			proxy.latency(Duration.ofMillis(3));
			String topic = PartitionApps.TOPIC;
			Duration timeout = Duration.ofMillis(500);
			RedisMessageStore sender = apps.storeVia(proxy, 1, timeout);
			RedisMessageStore broker = apps.storeVia(proxy, 1, timeout);
			List<RedisMessageStore> consumers = List.of(apps.storeVia(proxy, 1, timeout),
					apps.storeVia(proxy, 1, timeout), apps.storeVia(proxy, 1, timeout));
			int total = 600;
			Map<String, String> holders = new java.util.concurrent.ConcurrentHashMap<>();
			Set<String> acked = java.util.concurrent.ConcurrentHashMap.newKeySet();
			List<String> problems = java.util.Collections.synchronizedList(new ArrayList<>());
			java.util.concurrent.atomic.AtomicInteger deliveries = new java.util.concurrent.atomic.AtomicInteger();
			java.util.concurrent.atomic.AtomicInteger retries = new java.util.concurrent.atomic.AtomicInteger();
			java.util.concurrent.atomic.AtomicBoolean done = new java.util.concurrent.atomic.AtomicBoolean();
			long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
			List<Thread> threads = new ArrayList<>();
			threads.add(started(() -> {
				Random random = new Random(1);
				for (int first = 0; first < total; first += 20) {
					List<NewMessage> batch = new ArrayList<>();
					for (int i = first; i < first + 20; i++) {
						String group = "g" + (i % 20);
						batch.add(new NewMessage("m" + i, true, 0, encoded(group)).withPriority(random.nextInt(10))
							.inGroup(group));
					}
					again(retries, deadline, () -> sender.send(topic, batch));
				}
			}));
			threads.add(started(() -> {
				while (!done.get() && System.nanoTime() < deadline) {
					again(retries, deadline, () -> Transitions.promote(broker, topic, 100));
					again(retries, deadline, () -> Transitions.expireLeases(broker, topic, 100, 100));
					Interruptibly.sleep(5);
				}
			}));
			for (int c = 0; c < consumers.size(); c++) {
				RedisMessageStore store = consumers.get(c);
				String consumer = "consumer-" + c;
				Random random = new Random(10 + c);
				threads.add(started(() -> {
					int claims = 0;
					while (!done.get() && System.nanoTime() < deadline) {
						String token = consumer + "." + (++claims);
						ClaimResult result = again(retries, deadline, () -> Transitions.claim(store, topic, consumer,
								token, 1 + random.nextInt(10), 0, Duration.ofSeconds(60)));
						if (result == null || result.messages().isEmpty()) {
							Interruptibly.sleep(5);
							continue;
						}
						for (ClaimedMessage message : result.messages()) {
							deliveries.incrementAndGet();
							String other = holders.putIfAbsent(message.id(), consumer);
							if (other != null) {
								problems.add(message.id() + " claimed by " + consumer + " while " + other + " held it");
							}
						}
						for (ClaimedMessage message : result.messages()) {
							holders.remove(message.id(), consumer);
							if (random.nextInt(5) == 0) {
								again(retries, deadline,
										() -> Transitions.release(store, topic, message.id(), message.leaseToken()));
							}
							else {
								again(retries, deadline,
										() -> Transitions.ack(store, topic, message.id(), message.leaseToken()));
								acked.add(message.id());
							}
						}
						if (acked.size() >= total) {
							done.set(true);
						}
					}
				}));
			}
			threads.add(started(() -> {
				Random random = new Random(7);
				for (int fault = 0; fault < 30 && !done.get() && System.nanoTime() < deadline; fault++) {
					FaultyRedisProxy.Fault armed = (random.nextBoolean())
							? proxy.dropNextReplyTo(FaultyRedisProxy.named("EVALSHA"))
							: proxy.delayNextReplyTo(FaultyRedisProxy.named("EVALSHA"), Duration.ofMillis(800));
					armed.awaitFired(Duration.ofSeconds(5));
					Interruptibly.sleep(100 + random.nextInt(200));
				}
			}));
			for (Thread thread : threads) {
				thread.join(150_000);
			}
			done.set(true);
			TopicKeys keys = sender.keys(topic);
			StringRedisTemplate redis = apps.redis();
			System.out.printf("proxy: %d acked, %d deliveries, %d calls sent again, %d stored left%n", acked.size(),
					deliveries.get(), retries.get(), redis.opsForHash().size(keys.messages()));
			assertThat(problems).isEmpty();
			assertThat(acked).hasSize(total);
			assertThat(redis.opsForHash().size(keys.messages())).isZero();
			assertThat(redis.hasKey(keys.groups())).isFalse();
			assertThat(redis.hasKey(keys.groupReady())).isFalse();
			assertThat(redis.hasKey(keys.groupCounts())).isFalse();
			assertThat(redis.hasKey(keys.groupRotation())).isFalse();
		}
	}

	/**
	 * Runs a call until it answers (the same arguments each time), or gives up at the
	 * deadline.
	 */
	private static <T> @Nullable T again(java.util.concurrent.atomic.AtomicInteger retries, long deadline,
			java.util.function.Supplier<T> call) {
		while (System.nanoTime() < deadline) {
			try {
				return call.get();
			}
			catch (RuntimeException ex) {
				retries.incrementAndGet();
				Interruptibly.sleep(20);
			}
		}
		return null;
	}

	private static void again(java.util.concurrent.atomic.AtomicInteger retries, long deadline, Runnable call) {
		again(retries, deadline, () -> {
			call.run();
			return Boolean.TRUE;
		});
	}

	private static Thread started(Runnable body) {
		Thread thread = new Thread(body);
		thread.setDaemon(true);
		thread.start();
		return thread;
	}

	// ---- A full runtime: graceful stop and crash

	/**
	 * A runtime (2 handlers, prefetch 4) holding messages of two groups is stopped while
	 * its handlers block: every message it held goes back into its group (gq, gn, ga
	 * right) and a claim afterwards takes all ten.
	 */
	@Test
	void aGracefulStopHandsGroupedMessagesBackIntoTheirGroups() {
		try (GroupApp app = new GroupApp(Duration.ofSeconds(30), false)) {
			app.sendTen();
			await().atMost(Duration.ofSeconds(20)).until(() -> app.started.getCount() == 0);
			app.runtime.stop();
			RedisMessageStore store = app.store.store();
			TopicKeys keys = store.keys(TOPIC);
			StringRedisTemplate redis = app.store.redis();
			assertThat(redis.opsForZSet().zCard(keys.inFlight())).as("in flight after the stop").isZero();
			assertThat(redis.opsForHash().entries(keys.groupCounts())).as("gn").isEqualTo(Map.of("a", "5", "b", "5"));
			assertThat(redis.opsForZSet().range(keys.groupRotation(), 0, -1)).as("ga")
				.containsExactlyInAnyOrder("a", "b");
			assertThat(Transitions.claim(store, TOPIC, 100, MINUTE)).hasSize(10);
		}
	}

	/**
	 * A runtime (lease 2 s) holding messages of two groups loses Redis (its proxy paused,
	 * so it neither extends nor hands back): once the leases end, expire_leases puts
	 * every one back into its group, and another consumer claims all ten.
	 */
	@Test
	void aCrashedRuntimesGroupedMessagesGoBackIntoTheirGroupsWhenTheirLeasesEnd() {
		try (GroupApp app = new GroupApp(Duration.ofSeconds(2), true)) {
			app.sendTen();
			await().atMost(Duration.ofSeconds(20)).until(() -> app.started.getCount() == 0);
			app.store.proxy().pause();
			TestStore other = app.other;
			RedisMessageStore store = other.store();
			TopicKeys keys = store.keys(TOPIC);
			List<String> requeued = new ArrayList<>();
			await().atMost(Duration.ofSeconds(20)).until(() -> {
				requeued.addAll(Transitions.expireLeases(store, TOPIC, 100, 5).requeued());
				return other.redis().opsForZSet().zCard(keys.inFlight()) == 0;
			});
			assertThat(requeued).as("requeued").isNotEmpty();
			Transitions.promote(store, TOPIC, 100);
			assertThat(other.redis().opsForHash().entries(keys.groupCounts())).as("gn")
				.isEqualTo(Map.of("a", "5", "b", "5"));
			assertThat(ids(Transitions.claim(store, TOPIC, 100, MINUTE))).hasSize(10);
		}
	}

	/** A listener of the topic whose two handlers wait until interrupted. */
	static final class GroupApp implements AutoCloseable {

		final TestStore store;

		final TestStore other;

		final DelayQueueRuntime runtime;

		final boolean behindProxy;

		final java.util.concurrent.CountDownLatch started = new java.util.concurrent.CountDownLatch(2);

		GroupApp(Duration lease, boolean behindProxy) {
			this.behindProxy = behindProxy;
			String prefix = TestStore.uniquePrefix();
			TestStore.Builder builder = TestStore.builder().prefix(prefix).sendTimeout(Duration.ofMillis(500));
			this.store = (behindProxy ? builder.behindProxy() : builder).build();
			this.other = TestStore.builder().prefix(prefix).build();
			JsonPayloadConverter converter = new JsonPayloadConverter(new JsonMapper());
			DelayListenerEndpointRegistry registry = new DelayListenerEndpointRegistry(converter);
			java.lang.reflect.Method method = org.springframework.util.ReflectionUtils.findMethod(GroupApp.class, "on",
					Delivery.class);
			registry.register(new DelayListenerEndpoint(TOPIC, this, method,
					new ListenerSettings(2, 4, 3, lease,
							new RetryBackoff(Duration.ofSeconds(1), 2.0, Duration.ofMinutes(1)), Duration.ofSeconds(1),
							Duration.ofSeconds(1), Duration.ofMinutes(5), LatePolicy.DELIVER, Duration.ofHours(1))));
			this.runtime = new DelayQueueRuntime(this.store.store(), converter,
					new BrokerSettings(100, Duration.ofSeconds(1), Duration.ZERO), registry);
			this.runtime.start();
		}

		void sendTen() {
			List<NewMessage> messages = new ArrayList<>();
			for (int i = 0; i < 10; i++) {
				String group = (i % 2 == 0) ? "a" : "b";
				messages.add(new NewMessage("m" + i, false, 1 + i, MessageFormat
					.encodeBody(Map.of(MessageFormat.GROUP_HEADER, group), "\"body\"".getBytes(StandardCharsets.UTF_8)))
					.inGroup(group));
			}
			this.other.store().send(TOPIC, messages);
		}

		void on(Delivery<String> delivery) throws InterruptedException {
			this.started.countDown();
			new java.util.concurrent.CountDownLatch(1).await();
		}

		@Override
		public void close() {
			if (this.behindProxy) {
				this.store.proxy().resume();
			}
			this.runtime.stop();
			this.other.close();
			this.store.close();
		}

	}

	// ---- Bookkeeping: random mixes of every transition

	/**
	 * Random mixes of send (with and without a group, priorities, replacing), promote,
	 * claim (and the same claim sent again), ack, retry, dead letter, replay, release,
	 * release_claim, lease expiry, cancel and reschedule over 40 ids and 5 groups; after
	 * every step the group keys must agree with the messages (every ready message of a
	 * group has its member in gq, gn counts the members of each group, ga holds the
	 * groups of gn, g only names stored messages), no message is claimed while it is
	 * leased, and at the end everything drains and the group keys are empty. Seeds are
	 * printed.
	 */
	@Test
	void randomMixesOfEveryTransitionKeepTheGroupKeysRightAndLoseNothing() {
		long base = Long.getLong("groups.review.seed", System.nanoTime());
		int runs = Integer.getInteger("groups.review.runs", 12);
		for (int run = 0; run < runs; run++) {
			long seed = base + run;
			try (TestStore test = TestStore.create()) {
				new Model(test, seed).run(300);
			}
			catch (AssertionError ex) {
				throw new AssertionError("seed " + seed + ": " + ex.getMessage(), ex);
			}
		}
	}

	/** One random run against a fresh prefix. */
	static final class Model {

		/** Groups used (5 unless set; over 100 to pass the rotation's read of 100). */
		static final int GROUPS = Integer.getInteger("groups.review.groups", 5);

		/** Ids used. */
		static final int IDS = Integer.getInteger("groups.review.ids", 40);

		/** Most messages a claim or a send takes. */
		static final int BATCH = Integer.getInteger("groups.review.batch", 20);

		private final RedisMessageStore store;

		private final StringRedisTemplate redis;

		private final TopicKeys keys;

		private final Random random;

		private final long seed;

		/** Ids leased, to their token. */
		private final Map<String, String> leased = new HashMap<>();

		/** Ids leased with a lease that has ended already (claimed with a zero lease). */
		private final Set<String> expirable = new HashSet<>();

		private String lastConsumer = "";

		private String lastToken = "";

		private List<String> lastIds = List.of();

		private final List<String> steps = new ArrayList<>();

		private int claims;

		Model(TestStore test, long seed) {
			this.store = test.store();
			this.redis = test.redis();
			this.keys = this.store.keys(TOPIC);
			this.random = new Random(seed);
			this.seed = seed;
		}

		void run(int steps) {
			for (int step = 0; step < steps; step++) {
				step();
				check();
			}
			finish();
		}

		private String anyId() {
			return "m" + this.random.nextInt(IDS);
		}

		private @Nullable String anyGroup() {
			int g = this.random.nextInt(GROUPS + 2);
			return (g >= GROUPS) ? null : "g" + g;
		}

		private @Nullable String anyLeased() {
			List<String> ids = new ArrayList<>(this.leased.keySet());
			ids.sort(null);
			return ids.isEmpty() ? null : ids.get(this.random.nextInt(ids.size()));
		}

		private void step() {
			int op = this.random.nextInt(100);
			long now = System.currentTimeMillis();
			if (op < 25) {
				List<NewMessage> batch = new ArrayList<>();
				int n = 1 + this.random.nextInt(Math.max(4, BATCH / 5));
				for (int i = 0; i < n; i++) {
					String group = anyGroup();
					String id = anyId();
					Map<String, String> headers = (group != null) ? Map.of(MessageFormat.GROUP_HEADER, group)
							: Map.of();
					long dueMillis = (this.random.nextInt(8) == 0) ? now + 3_600_000
							: now - this.random.nextInt(10_000);
					NewMessage message = new NewMessage(id, false, dueMillis, MessageFormat.encodeBody(headers,
							("x" + this.random.nextInt(3)).getBytes(StandardCharsets.UTF_8)));
					int priority = new int[] { 0, 0, 3, 7 }[this.random.nextInt(4)];
					if (priority > 0) {
						message = message.withPriority(priority);
					}
					if (group != null) {
						message = message.inGroup(group);
					}
					if (this.random.nextInt(4) == 0) {
						message = message.replacingPending();
					}
					batch.add(message);
				}
				log("send " + batch.stream().map((m) -> m.id() + "/" + m.group() + "/p" + m.priority()).toList());
				this.store.send(TOPIC, batch);
			}
			else if (op < 40) {
				Duration lookahead = (this.random.nextInt(3) == 0) ? Duration.ofHours(2) : Duration.ZERO;
				log("promote " + lookahead + " "
						+ Transitions.promote(this.store, TOPIC, 1 + this.random.nextInt(BATCH), lookahead).moved());
			}
			else if (op < 58) {
				claim();
			}
			else if (op < 62 && !this.lastIds.isEmpty()) {
				// The last claim sent again: the same messages still leased to it,
				// nothing
				// new, and the group keys untouched.
				Map<String, Object> before = groupKeys();
				ClaimResult again = Transitions.claim(this.store, TOPIC, this.lastConsumer, this.lastToken, 20, 0,
						MINUTE);
				List<String> expected = this.lastIds.stream()
					.filter((id) -> this.lastToken.equals(this.leased.get(id)))
					.toList();
				log("claim again " + ids(again.messages()));
				assertThat(ids(again.messages())).as("claim sent again").containsExactlyInAnyOrderElementsOf(expected);
				assertThat(groupKeys()).as("group keys after a claim sent again").isEqualTo(before);
			}
			else if (op < 70) {
				String id = anyLeased();
				if (id != null) {
					log("ack " + id);
					assertThat(Transitions.ack(this.store, TOPIC, id, this.leased.get(id))).isTrue();
					forget(id);
				}
			}
			else if (op < 74) {
				String id = anyLeased();
				if (id != null) {
					log("retry " + id);
					assertThat(Transitions.retry(this.store, TOPIC, id, this.leased.get(id), Duration.ZERO, "e"))
						.isPositive();
					forget(id);
				}
			}
			else if (op < 77) {
				String id = anyLeased();
				if (id != null) {
					log("dead letter " + id);
					assertThat(Transitions.deadLetter(this.store, TOPIC, id, this.leased.get(id), "e")).isTrue();
					forget(id);
				}
			}
			else if (op < 80) {
				log("replay " + this.store.replayDead(TOPIC, 5, 0).replayed());
			}
			else if (op < 85) {
				String id = anyLeased();
				if (id != null) {
					log("release " + id);
					assertThat(Transitions.release(this.store, TOPIC, id, this.leased.get(id))).isTrue();
					forget(id);
				}
			}
			else if (op < 88 && !this.lastIds.isEmpty()) {
				List<String> back = Transitions.releaseClaim(this.store, TOPIC, this.lastConsumer, this.lastToken,
						MINUTE);
				log("release claim " + back);
				back.forEach(this::forget);
				this.lastIds = List.of();
			}
			else if (op < 91) {
				var expired = Transitions.expireLeases(this.store, TOPIC, 100, 3);
				log("expire " + expired.requeued() + " dead " + expired.deadLettered());
				assertThat(new HashSet<>(expired.requeued())).as("requeued").isSubsetOf(this.expirable);
				expired.requeued().forEach(this::forget);
				expired.deadLettered().forEach(this::forget);
			}
			else if (op < 96) {
				String id = anyId();
				log("cancel " + id + " " + this.store.cancel(TOPIC, id));
			}
			else {
				String id = anyId();
				Duration delay = (this.random.nextInt(3) == 0) ? Duration.ofHours(1) : Duration.ZERO;
				log("reschedule " + id + " " + this.store.reschedule(TOPIC, id, delay));
			}
		}

		private void claim() {
			String consumer = "c" + this.random.nextInt(3);
			String token = consumer + "." + (++this.claims);
			boolean crash = this.random.nextInt(5) == 0;
			ClaimResult result = Transitions.claim(this.store, TOPIC, consumer, token, 1 + this.random.nextInt(BATCH),
					this.random.nextInt(2) * 5, crash ? Duration.ZERO : MINUTE);
			log("claim " + token + (crash ? " (lease 0) " : " ") + ids(result.messages()));
			long now = System.currentTimeMillis();
			for (ClaimedMessage message : result.messages()) {
				assertThat(this.leased).as("claimed while leased: %s; %s", message.id(), this.steps)
					.doesNotContainKey(message.id());
				this.leased.put(message.id(), token);
				long dueMillis = Long.parseLong(new String(message.stored(), StandardCharsets.UTF_8).split(":", 3)[1]);
				boolean grouped = MessageFormat.decode(message.id(), message.stored())
					.headers()
					.containsKey(MessageFormat.GROUP_HEADER);
				assertThat(grouped && dueMillis > now + 1000)
					.as("%s of a group claimed before due; %s", message.id(), this.steps)
					.isFalse();
				if (crash) {
					this.expirable.add(message.id());
				}
			}
			this.lastConsumer = consumer;
			this.lastToken = token;
			// A claim with a zero lease keeps its record 1 ms: not one to send again.
			this.lastIds = crash ? List.of() : ids(result.messages());
		}

		private void forget(String id) {
			this.leased.remove(id);
			this.expirable.remove(id);
		}

		private void log(String step) {
			this.steps.add(step);
		}

		private Map<String, Object> groupKeys() {
			Map<String, Object> all = new LinkedHashMap<>();
			all.put("gq", this.redis.opsForZSet().range(this.keys.groupReady(), 0, -1));
			all.put("gn", new TreeMap<>(this.redis.opsForHash().entries(this.keys.groupCounts())));
			all.put("ga", String.valueOf(this.redis.opsForZSet().rangeWithScores(this.keys.groupRotation(), 0, -1)));
			all.put("gv", new TreeMap<>(this.redis.opsForHash().entries(this.keys.groupTags())));
			return all;
		}

		/** The invariants of the group keys, read from Redis. */
		private void check() {
			Map<Object, Object> messages = this.redis.opsForHash().entries(this.keys.messages());
			Set<String> scheduled = this.redis.opsForZSet().range(this.keys.scheduled(), 0, -1);
			Set<String> inFlight = this.redis.opsForZSet().range(this.keys.inFlight(), 0, -1);
			Map<Object, Object> groups = this.redis.opsForHash().entries(this.keys.groups());
			Map<Object, Object> priorities = this.redis.opsForHash().entries(this.keys.priorities());
			Set<String> members = this.redis.opsForZSet().range(this.keys.groupReady(), 0, -1);
			Map<Object, Object> counts = this.redis.opsForHash().entries(this.keys.groupCounts());
			Set<String> rotation = this.redis.opsForZSet().range(this.keys.groupRotation(), 0, -1);
			Set<Object> tags = this.redis.opsForHash().keys(this.keys.groupTags());
			Set<String> inLists = new HashSet<>(this.redis.opsForList().range(this.keys.ready(), 0, -1));
			for (int p = 1; p <= 9; p++) {
				inLists.addAll(this.redis.opsForList().range(this.keys.ready(p), 0, -1));
			}
			String where = "seed " + this.seed + ", steps "
					+ this.steps.subList(Math.max(0, this.steps.size() - 12), this.steps.size()) + ", gq "
					+ members.stream().map((m) -> m.replace('\0', '|')).toList() + ", gn " + counts + ", ga "
					+ rotation;
			Map<String, Integer> perGroup = new TreeMap<>();
			for (String member : members) {
				perGroup.merge(member.substring(0, member.indexOf('\0')), 1, Integer::sum);
			}
			for (Map.Entry<Object, Object> entry : messages.entrySet()) {
				String id = (String) entry.getKey();
				if (scheduled.contains(id) || inFlight.contains(id)) {
					continue;
				}
				String group = (String) groups.get(id);
				if (group != null) {
					String stored = (String) entry.getValue();
					long dueMillis = Long.parseLong(stored.split(":", 3)[1]);
					Object priority = priorities.get(id);
					int rank = 9 - ((priority != null) ? Integer.parseInt((String) priority) : 0);
					String member = group + "\0" + rank + String.format("%013d", Math.max(0, dueMillis)) + "\0" + id;
					assertThat(members).as("ready %s of %s has its member; %s", id, group, where).contains(member);
					assertThat(rotation).as("group %s of ready %s in the rotation; %s", group, id, where)
						.contains(group);
				}
				else {
					assertThat(inLists).as("ready %s without a group in a ready list; %s", id, where).contains(id);
				}
			}
			Map<String, Integer> counted = new TreeMap<>();
			counts.forEach((group, count) -> counted.put((String) group, Integer.parseInt((String) count)));
			assertThat(counted).as("gn counts the members of each group; %s", where).isEqualTo(perGroup);
			assertThat(rotation).as("ga holds the groups of gn; %s", where)
				.containsExactlyInAnyOrderElementsOf(counted.keySet());
			assertThat(messages.keySet()).as("g only names stored messages; %s", where).containsAll(groups.keySet());
			Set<Object> extraTags = new HashSet<>(tags);
			extraTags.removeAll(rotation);
			extraTags.remove("\u0001V");
			extraTags.remove("");
			assertThat(extraTags).as("gv holds tags of groups out of the rotation; %s", where).isEmpty();
		}

		/** Hands back every lease, drains, and checks that nothing is left. */
		private void finish() {
			Transitions.expireLeases(this.store, TOPIC, 1000, 1000);
			new HashMap<>(this.leased).forEach((id, token) -> Transitions.release(this.store, TOPIC, id, token));
			this.leased.clear();
			this.store.replayDead(TOPIC, 1000, 0);
			for (int i = 0; i < IDS; i++) {
				this.store.reschedule(TOPIC, "m" + i, Duration.ZERO);
			}
			// One grouped message more, so that claims serve the rotation (see the hole
			// of a
			// cancelled last message of a group).
			this.store.send(TOPIC, List.of(due("last", 1).inGroup("g0")));
			for (int round = 0; round < 50; round++) {
				Transitions.promote(this.store, TOPIC, 5000);
				List<ClaimedMessage> claimed = Transitions.claim(this.store, TOPIC, 100, MINUTE);
				if (claimed.isEmpty() && this.redis.opsForZSet().zCard(this.keys.scheduled()) == 0) {
					break;
				}
				for (ClaimedMessage message : claimed) {
					Transitions.ack(this.store, TOPIC, message.id(), message.leaseToken());
				}
			}
			String where = "seed " + this.seed + ", last steps "
					+ this.steps.subList(Math.max(0, this.steps.size() - 12), this.steps.size());
			assertThat(this.redis.opsForHash().keys(this.keys.messages())).as("stored after the drain; %s", where)
				.isEmpty();
			assertThat(this.redis.hasKey(this.keys.groups())).as("g; %s", where).isFalse();
			assertThat(this.redis.hasKey(this.keys.groupReady())).as("gq; %s", where).isFalse();
			assertThat(this.redis.hasKey(this.keys.groupCounts())).as("gn; %s", where).isFalse();
			assertThat(this.redis.hasKey(this.keys.groupRotation())).as("ga; %s", where).isFalse();
		}

	}

	// ---- Helpers
	// ------------------------------------------------------------------------

	/**
	 * Promotes and claims until nothing more comes, acknowledging what it claims.
	 * @return the ids claimed, in order
	 */
	static List<String> drain(RedisMessageStore store) {
		return drain(store, 100);
	}

	/**
	 * Promotes and claims, {@code each} at a time, until nothing more comes,
	 * acknowledging what it claims.
	 * @return the ids claimed, in order
	 */
	static List<String> drain(RedisMessageStore store, int each) {
		List<String> all = new ArrayList<>();
		for (int round = 0; round < 2000; round++) {
			Transitions.promote(store, TOPIC, 5000);
			List<ClaimedMessage> claimed = Transitions.claim(store, TOPIC, each, MINUTE);
			if (claimed.isEmpty()) {
				break;
			}
			for (ClaimedMessage message : claimed) {
				all.add(message.id());
				Transitions.ack(store, TOPIC, message.id(), message.leaseToken());
			}
		}
		return all;
	}

	static NewMessage due(String id, long dueMillis) {
		return new NewMessage(id, false, dueMillis, body());
	}

	static byte[] body() {
		return MessageFormat.encodeBody(Map.of(), "x".getBytes(StandardCharsets.UTF_8));
	}

	static List<String> ids(List<ClaimedMessage> claimed) {
		return claimed.stream().map(ClaimedMessage::id).toList();
	}

}

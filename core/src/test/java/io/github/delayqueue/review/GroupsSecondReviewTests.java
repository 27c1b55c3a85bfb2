package io.github.delayqueue.review;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

import io.github.delayqueue.testsupport.CommandStats;
import io.github.delayqueue.producer.DelayMessage;
import io.github.delayqueue.producer.DelayQueueTemplate;
import io.github.delayqueue.store.ClaimResult;
import io.github.delayqueue.store.ClaimedMessage;
import io.github.delayqueue.store.MessageFormat;
import io.github.delayqueue.store.MessageState;
import io.github.delayqueue.store.NewMessage;
import io.github.delayqueue.store.RateLimit;
import io.github.delayqueue.store.Sent;
import io.github.delayqueue.store.redis.RedisMessageStore;
import io.github.delayqueue.store.redis.ScriptClock;
import io.github.delayqueue.store.redis.TopicKeys;
import io.github.delayqueue.test.redis.FaultyRedisProxy;
import io.github.delayqueue.testsupport.NoResourceTransactionManager;
import io.github.delayqueue.testsupport.OnOneServerVersion;
import io.github.delayqueue.testsupport.TestStore;
import io.github.delayqueue.testsupport.Transitions;
import org.junit.jupiter.api.Disabled;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.transaction.support.TransactionTemplate;

import static io.github.delayqueue.review.GroupsReviewTests.drain;
import static io.github.delayqueue.review.GroupsReviewTests.due;
import static io.github.delayqueue.review.GroupsReviewTests.grouped;
import static io.github.delayqueue.review.GroupsReviewTests.ids;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Second adversarial review of groups, step 1, on a real Redis: what changed after the
 * first review (a grouped send due when sent made ready at once, the ready lists' turn of
 * 100 ids, members checked by due time and group, the partial rebuild of the rotation,
 * {@code regroup.lua}, the groups parts of stats and page). Reuses the fixtures of
 * {@link GroupsReviewTests}.
 */
@OnOneServerVersion
class GroupsSecondReviewTests {

	private static final String TOPIC = "jobs";

	private static final Duration MINUTE = Duration.ofMinutes(1);

	// ---- Holes found
	// --------------------------------------------------------------------

	/**
	 * A due message of no group that a promote appended behind more than 100 ids the
	 * lookahead made ready early: without groups a claim looks at 1,000 ids and takes it
	 * at once; while any group has a ready message, the ready lists' turn looks at 100
	 * ids, takes nothing due, ends the lists' turns for the call and the claim answers
	 * that nothing more waits. The due message waits until the early ones fall due (up to
	 * the lookahead), however many claims come.
	 */
	@Test
	void aDueMessageOfNoGroupBehindMoreThanAHundredEarlyOnesIsClaimedWhileAGroupHasReadyMessagesAsWithout() {
		List<String> withoutGroups = claimedBehindEarlyMessagesOfNoGroup(false);
		List<String> withAGroup = claimedBehindEarlyMessagesOfNoGroup(true);
		assertThat(withoutGroups).as("without groups").contains("due");
		assertThat(withAGroup).as("claimed by ten claims of 10 while group g has ready messages").contains("due");
	}

	private static List<String> claimedBehindEarlyMessagesOfNoGroup(boolean aGroupHasReadyMessages) {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			List<NewMessage> early = new ArrayList<>();
			for (int i = 0; i < 150; i++) {
				early.add(NewMessage.afterDelay("early-" + i, Duration.ofSeconds(30), GroupsReviewTests.body()));
			}
			store.send(TOPIC, early);
			assertThat(Transitions.promote(store, TOPIC, 5000, MINUTE).moved()).isEqualTo(150);
			store.send(TOPIC, List.of(due("due", 1)));
			if (aGroupHasReadyMessages) {
				List<NewMessage> group = new ArrayList<>();
				for (int i = 0; i < 100; i++) {
					group.add(grouped("g-" + i, 2 + i, "g"));
				}
				store.send(TOPIC, group);
			}
			Transitions.promote(store, TOPIC, 5000);
			List<String> claimed = new ArrayList<>();
			for (int i = 0; i < 10; i++) {
				claimed.addAll(ids(Transitions.claim(store, TOPIC, "c", "c." + i, 10, 0, MINUTE).messages()));
			}
			return claimed;
		}
	}

	/**
	 * The same turn of 100 ids, spent on ids a cancel left at the head of the ready list
	 * (500 messages of no group cancelled while ready): without groups the claim looks
	 * past them and takes the due message behind; with a group that has ready messages it
	 * takes the group's, drops 100 of the cancelled ids and answers that nothing more
	 * waits, so a consumer waits for the next signal or broker call, five times over.
	 */
	@Test
	void aClaimWhoseTurnOfTheReadyListsEndedAtItsHundredIdsTakesTheDueMessageBehindOrSaysMoreMayBeWaiting() {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			List<NewMessage> cancelled = new ArrayList<>();
			for (int i = 0; i < 500; i++) {
				cancelled.add(due("cancelled-" + i, 1));
			}
			store.send(TOPIC, cancelled);
			Transitions.promote(store, TOPIC, 1000);
			for (int i = 0; i < 500; i++) {
				store.cancel(TOPIC, "cancelled-" + i);
			}
			store.send(TOPIC, List.of(due("due", 2), grouped("g-1", 3, "g")));
			Transitions.promote(store, TOPIC, 1000);
			ClaimResult claim = Transitions.claim(store, TOPIC, "c", "c.1", 10, 0, MINUTE);
			assertThat(ids(claim.messages()).contains("due") || claim.more())
				.as("claimed %s, more waiting: %s", ids(claim.messages()), claim.more())
				.isTrue();
		}
	}

	/**
	 * A member left in the group ready set by a cancel keeps its rank (priority) and is
	 * still valid once the id is sent again in the same group with the same due time:
	 * claim checks the due time and the group of a member, not its priority. The message
	 * sent again with priority 0 is then claimed ahead of a message of priority 5 of its
	 * group, against "priorities order messages within a group".
	 */
	@Test
	void aMemberLeftByACancelDoesNotLetItsIdSentAgainWithALowerPriorityPassAMoreUrgentMessageOfItsGroup() {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			store.send(TOPIC, List.of(grouped("x", 1, "g").withPriority(9)));
			assertThat(store.cancel(TOPIC, "x")).isTrue();
			store.send(TOPIC, List.of(grouped("x", 1, "g"), grouped("y", 1, "g").withPriority(5)));
			List<String> order = new ArrayList<>();
			for (int i = 0; i < 2; i++) {
				for (ClaimedMessage message : Transitions.claim(store, TOPIC, 1, MINUTE)) {
					order.add(message.id());
					Transitions.ack(store, TOPIC, message.id(), message.leaseToken());
				}
			}
			assertThat(order).as("claimed one at a time").containsExactly("y", "x");
		}
	}

	/**
	 * The stats (the oldest ready message, behind the lateness gauge and the endpoint)
	 * look at the first 1,000 groups of the rotation (they looked at 100: with 1,000
	 * groups, the oldest ready message, an hour late in a group whose name sorts last
	 * among equal tags, was not seen, and the topic was reported a few seconds late).
	 */
	@Test
	void theStatsOfATopicWithManyGroupsSeeItsOldestReadyMessage() {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			long now = System.currentTimeMillis();
			List<NewMessage> messages = new ArrayList<>();
			for (int g = 0; g < 999; g++) {
				messages.add(grouped("m-" + g, now - 5000 + g, "group-" + g));
			}
			messages.add(grouped("old", now - 3_600_000, "zz"));
			store.send(TOPIC, messages);
			assertThat(store.stats(TOPIC).oldestReadyDueMillis()).as("due time of the oldest ready message")
				.isEqualTo(now - 3_600_000);
		}
	}

	/**
	 * A new message of a group due when sent is made ready at once, while an earlier due
	 * message of the same group still waits in the schedule for the broker (here the
	 * broker has not run yet; in the bench, behind a burst's promote, which is when it
	 * matters): the later message is claimed first. Without groups both wait for the
	 * promote, which moves them in due order; with {@code group-concurrency: 1} (step 5)
	 * this breaks "a group's messages handled one at a time in due-time order". On the
	 * test clock, as the test kit runs it.
	 */
	@Test
	@Disabled("Known, documented in docs/groups.md (Order): a message of a group due when sent is ready at once, "
			+ "so that a small group is not held behind another group's burst; it may pass an earlier message of its "
			+ "group that the brokers have not made ready yet. group-order strict (issue 38, step 5) will schedule it")
	void aMessageOfAGroupDueWhenSentIsNotClaimedBeforeAnEarlierDueMessageOfItsGroupStillScheduled() {
		withOffsetClock((store, redis, clockKey) -> {
			long firstDue = store.send(TOPIC, List.of(grouped("first", 0, "g").withDelay(MINUTE))).get(0).dueAtMillis();
			redis.opsForValue().set(clockKey, String.valueOf(Duration.ofMinutes(2).toNanos() / 1000));
			List<Sent> sent = store.send(TOPIC, List.of(grouped("second", 0, "g").withDelay(Duration.ZERO)));
			assertThat(sent.get(0).dueAtMillis()).isGreaterThan(firstDue);
			List<String> order = new ArrayList<>(ids(Transitions.claim(store, TOPIC, 10, MINUTE)));
			order.addAll(drain(store));
			assertThat(order).as("claimed, the broker's promote after the first claim")
				.containsExactly("first", "second");
		});
	}

	// ---- Held
	// ---------------------------------------------------------------------------

	/**
	 * A grouped send due when sent whose reply is dropped runs twice (Lettuce sends it
	 * again after reconnecting): reported stored, one member, counted once, claimed once.
	 */
	@Test
	void aGroupedSendDueWhenSentWhoseReplyWasDroppedIsStoredOnceAndCountedOnce() {
		try (TestStore test = TestStore.builder().behindProxy().build()) {
			RedisMessageStore store = test.store();
			TopicKeys keys = store.keys(TOPIC);
			store.send(TOPIC, List.of(due("warm", 1)));
			FaultyRedisProxy.Fault fault = test.proxy().dropNextReplyTo(FaultyRedisProxy.named("EVALSHA"));
			List<Sent> sent = store.send(TOPIC, List.of(grouped("a", 1, "g")));
			assertThat(fault.hasFired()).isTrue();
			assertThat(sent).singleElement().satisfies((s) -> assertThat(s.duplicate()).isFalse());
			assertThat(test.redis().opsForZSet().size(keys.groupReady())).isOne();
			assertThat(test.redis().opsForHash().entries(keys.groupCounts())).isEqualTo(Map.of("g", "1"));
			assertThat(drain(store)).containsExactlyInAnyOrder("warm", "a");
			assertGroupKeysEmpty(test, keys);
		}
	}

	/**
	 * One id twice in one call, in one group and due when sent: one member, counted once;
	 * the same id in another group (another body, as the group is a header) is a
	 * duplicate.
	 */
	@Test
	void aSendOfOneIdTwiceInAGroupDueWhenSentStoresOneMemberCountedOnce() {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			TopicKeys keys = store.keys(TOPIC);
			List<Sent> sent = store.send(TOPIC,
					List.of(grouped("a", 1, "g"), grouped("a", 1, "g"), grouped("a", 1, "h")));
			assertThat(sent).extracting(Sent::duplicate).containsExactly(false, false, true);
			assertThat(test.redis().opsForZSet().size(keys.groupReady())).isOne();
			assertThat(test.redis().opsForHash().entries(keys.groupCounts())).isEqualTo(Map.of("g", "1"));
			assertThat(drain(store)).containsExactly("a");
			assertGroupKeysEmpty(test, keys);
		}
	}

	/**
	 * A cancel sent right after an asynchronous grouped send due when sent: whichever
	 * order they reach Redis in, nothing is claimed afterwards unless the cancel came
	 * first, and the group keys end empty.
	 */
	@Test
	void aCancelRightAfterAnAsynchronousGroupedSendLeavesNothingBehind() {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			TopicKeys keys = store.keys(TOPIC);
			int cancelled = 0;
			List<String> claimedAll = new ArrayList<>();
			for (int i = 0; i < 50; i++) {
				String id = "a-" + i;
				String group = "g-" + (i % 3);
				CompletableFuture<List<Sent>> send = CompletableFuture
					.supplyAsync(() -> store.send(TOPIC, List.of(grouped(id, 1, group))));
				boolean gone = store.cancel(TOPIC, id);
				send.join();
				cancelled += gone ? 1 : 0;
				List<String> claimed = drain(store);
				claimedAll.addAll(claimed);
				assertThat(claimed).as("claimed after the cancel of %s (cancelled: %s)", id, gone)
					.hasSize(gone ? 0 : 1);
			}
			System.out.println("send then cancel: cancelled " + cancelled + " of 50, claimed " + claimedAll.size());
			assertGroupKeysEmpty(test, keys);
		}
	}

	/**
	 * The repair of a group ready set of the wrong type walks a groups hash of 2,500
	 * entries (several HSCAN chunks of 500) with messages ready, scheduled, in flight and
	 * dead, twice (a regroup over what a first one made ready): every ready one is
	 * claimed once, the in-flight ones once after their hand-back, the scheduled ones
	 * stay scheduled, and the group keys end empty once all is done.
	 */
	@Test
	void aRegroupOverABigGroupsHashTwiceMakesEachReadyMessageClaimableOnce() {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			TopicKeys keys = store.keys(TOPIC);
			List<NewMessage> messages = new ArrayList<>();
			for (int i = 0; i < 2000; i++) {
				messages.add(grouped("r-" + i, 1 + i, "g-" + (i % 7)).withPriority(i % 10));
			}
			for (int i = 0; i < 1000; i++) {
				messages.add(grouped("s-" + i, System.currentTimeMillis() + 3_600_000, "g-" + (i % 7)));
			}
			store.send(TOPIC, messages);
			// 500 in flight, 500 dead
			List<ClaimedMessage> inFlight = new ArrayList<>();
			while (inFlight.size() < 1000) {
				inFlight.addAll(Transitions.claim(store, TOPIC, 100, MINUTE));
			}
			for (ClaimedMessage message : inFlight.subList(500, 1000)) {
				assertThat(Transitions.deadLetter(store, TOPIC, message.id(), message.leaseToken(), "e")).isTrue();
			}
			Set<String> readyBefore = new HashSet<>();
			for (int i = 0; i < 2000; i++) {
				readyBefore.add("r-" + i);
			}
			inFlight.subList(0, 1000).forEach((message) -> readyBefore.remove(message.id()));
			for (int round = 0; round < 2; round++) {
				String key = keys.groupReady();
				test.redis().rename(key, key + ":saved" + round);
				test.redis().opsForValue().set(key, "not a zset");
				RuntimeException failure = null;
				try {
					Transitions.claim(store, TOPIC, 1, MINUTE);
				}
				catch (RuntimeException ex) {
					failure = ex;
				}
				assertThat(failure).isNotNull();
				assertThat(store.topic(TOPIC).repairAfter(failure)).hasSize(1);
			}
			Map<String, Integer> times = new HashMap<>();
			List<ClaimedMessage> live = inFlight.subList(0, 500);
			for (ClaimedMessage message : live) {
				assertThat(Transitions.release(store, TOPIC, message.id(), message.leaseToken())).isTrue();
			}
			for (String id : drain(store)) {
				times.merge(id, 1, Integer::sum);
			}
			Set<String> expected = new HashSet<>(readyBefore);
			live.forEach((message) -> expected.add(message.id()));
			assertThat(times.keySet()).as("claimed").isEqualTo(expected);
			assertThat(times.values()).as("times each was claimed").allMatch((n) -> n == 1);
			assertThat(test.redis().opsForZSet().size(keys.scheduled())).isEqualTo(1000);
			assertThat(test.redis().opsForHash().size(keys.groups())).isEqualTo(1000);
			assertGroupKeysEmpty(test, keys);
		}
	}

	/**
	 * Three groups of 500 ready messages and 500 ready messages of no group (priorities 0
	 * to 9 in both), claims of 10 that also take up to 10 early ones, under a rate limit
	 * or not: in the first 200 claimed, every group and the messages of no group have a
	 * share of about a quarter (at least 40), none starves.
	 */
	@Test
	void theMessagesOfNoGroupAndEachGroupShareTheClaimsWithPrioritiesAndEarlyOnes() {
		for (RateLimit rateLimit : java.util.Arrays.asList(null, new RateLimit(1000, Duration.ofSeconds(1)))) {
			try (TestStore test = TestStore.create()) {
				RedisMessageStore store = test.store();
				List<NewMessage> messages = new ArrayList<>();
				for (int i = 0; i < 500; i++) {
					messages.add(due("plain-" + i, 1 + i).withPriority(i % 10));
					for (String group : List.of("a", "b", "c")) {
						messages.add(grouped(group + "-" + i, 1 + i, group).withPriority(i % 10));
					}
				}
				for (int i = 0; i < 100; i++) {
					messages.add(NewMessage.afterDelay("early-" + i, Duration.ofSeconds(30), GroupsReviewTests.body()));
				}
				store.send(TOPIC, messages);
				Transitions.promote(store, TOPIC, 5000, MINUTE);
				Map<String, Integer> shares = new HashMap<>();
				int claimed = 0;
				for (int i = 0; claimed < 200 && i < 100; i++) {
					for (ClaimedMessage message : Transitions
						.claim(store, TOPIC, "c", "c." + i, 10, 10, MINUTE, rateLimit)
						.messages()) {
						String kind = message.id().substring(0, message.id().indexOf('-'));
						if (!kind.equals("early")) {
							shares.merge(kind, 1, Integer::sum);
							claimed++;
						}
					}
				}
				assertThat(shares).as("shares of the first 200 due ones claimed, rate limit %s", rateLimit)
					.allSatisfy((kind, share) -> assertThat(share).isGreaterThanOrEqualTo(40))
					.containsOnlyKeys("plain", "a", "b", "c");
			}
		}
	}

	/**
	 * The test clock: a grouped message due by the offset clock (though not by the
	 * server's) is ready at once; one not yet due by it is scheduled and promoted once
	 * the clock moves past it.
	 */
	@Test
	void aGroupedSendOnTheTestClockIsReadyAtOnceWhenDueByThatClockOnly() {
		withOffsetClock((store, redis, clockKey) -> {
			redis.opsForValue().set(clockKey, String.valueOf(Duration.ofHours(1).toNanos() / 1000));
			long wallNow = System.currentTimeMillis();
			store.send(TOPIC, List.of(grouped("due", wallNow + MINUTE.toMillis(), "g"),
					grouped("later", wallNow + Duration.ofHours(2).toMillis(), "g")));
			assertThat(ids(Transitions.claim(store, TOPIC, 10, MINUTE))).containsExactly("due");
			assertThat(Transitions.promote(store, TOPIC, 100).moved()).isZero();
			redis.opsForValue().set(clockKey, String.valueOf(Duration.ofHours(3).toNanos() / 1000));
			assertThat(drain(store)).containsExactly("later");
		});
	}

	/**
	 * A grouped message sent with a deduplication window, due when sent, handled, then
	 * sent again within its window: remembered, not made ready again.
	 */
	@Test
	void aRememberedIdOfAGroupedMessageIsNotMadeReadyAgainWithinItsWindow() {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			TopicKeys keys = store.keys(TOPIC);
			byte[] body = MessageFormat.encodeBody(
					Map.of(MessageFormat.GROUP_HEADER, "g", MessageFormat.DEDUPLICATION_HEADER, "3600000"),
					new byte[] { 1 });
			NewMessage message = new NewMessage("a", false, 1, body).inGroup("g").deduplicating();
			store.send(TOPIC, List.of(message));
			assertThat(drain(store)).containsExactly("a");
			List<Sent> again = store.send(TOPIC, List.of(message, message));
			assertThat(again).extracting(Sent::duplicate).containsExactly(true, true);
			assertThat(drain(store)).isEmpty();
			assertGroupKeysEmpty(test, keys);
		}
	}

	/**
	 * A message of a group cancelled while ready, sent again under its id with no group
	 * and the same due time: it is ready in a ready list and its old member looks valid
	 * (no groups-hash entry counts as the member's group). It is claimed once by each
	 * claim that finds it, never twice while leased, and once for good after an ack.
	 */
	@Test
	void aMessageReadyInAListAndByAMemberLeftInItsOldGroupIsClaimedOnceAtATime() {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			TopicKeys keys = store.keys(TOPIC);
			store.send(TOPIC, List.of(grouped("x", 1, "g"), grouped("y", 2, "h")));
			assertThat(store.cancel(TOPIC, "x")).isTrue();
			store.send(TOPIC, List.of(due("x", 1)));
			Transitions.promote(store, TOPIC, 100);
			ClaimedMessage first = Transitions.claim(store, TOPIC, 1, MINUTE).get(0);
			assertThat(Transitions.claim(store, TOPIC, 10, MINUTE)).extracting(ClaimedMessage::id)
				.doesNotContain(first.id());
			assertThat(Transitions.release(store, TOPIC, first.id(), first.leaseToken())).isTrue();
			List<String> rest = drain(store);
			assertThat(rest).as("after %s was handed back", first.id()).containsExactly(first.id());
			assertGroupKeysEmpty(test, keys);
			assertThat(test.redis().keys(keys.ready() + "*")).isEmpty();
		}
	}

	/**
	 * A grouped send due when sent, in a transaction: held until the commit (nothing in
	 * the group keys before), ready at once after it; dropped on a rollback; a cancel in
	 * the transaction drops it.
	 */
	@Test
	void aGroupedSendDueWhenSentInATransactionIsHeldUntilTheCommit() {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			TopicKeys keys = store.keys(TOPIC);
			DelayQueueTemplate template = test.template();
			TransactionTemplate transactions = new TransactionTemplate(new NoResourceTransactionManager());
			transactions.executeWithoutResult((status) -> {
				template.send(DelayMessage.builder(TOPIC, "x").id("committed").group("g").build());
				template.send(DelayMessage.builder(TOPIC, "x").id("cancelled").group("g").build());
				assertThat(template.cancel(TOPIC, "cancelled")).isTrue();
				assertThat(test.redis().opsForZSet().size(keys.groupReady())).as("gq in the transaction").isZero();
			});
			transactions.executeWithoutResult((status) -> {
				template.send(DelayMessage.builder(TOPIC, "x").id("rolled-back").group("g").build());
				status.setRollbackOnly();
			});
			assertThat(ids(Transitions.claim(store, TOPIC, 10, MINUTE))).containsExactly("committed");
		}
	}

	/**
	 * A grouped send due when sent to a partition whose count marker refuses the caller's
	 * count writes nothing: no member, no count, no rotation, no message.
	 */
	@Test
	void aGroupedSendDueWhenSentThatTheCountMarkerRefusesWritesNothing() {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			TopicKeys keys = store.keys(TOPIC);
			test.redis().opsForValue().set(keys.partitionCount(), "?3:token");
			assertThatThrownBy(() -> store.send(TOPIC, List.of(grouped("a", 1, "g")))).isNotNull();
			test.redis().delete(keys.partitionCount());
			assertThat(test.redis().hasKey(keys.messages())).isFalse();
			assertThat(test.redis().hasKey(keys.groups())).isFalse();
			assertGroupKeysEmpty(test, keys);
		}
	}

	/**
	 * The stats and a page of ready messages on 10,000 groups with one ready message each
	 * (and with priorities: ten ranks a group): their Redis commands per call stay
	 * bounded (stats: 100 groups, 1,000 members; page: what it lists).
	 */
	@Test
	void theStatsAndAPageOfTenThousandGroupsRunBoundedWork() {
		Map<String, Long> costs = new LinkedHashMap<>();
		for (boolean priorities : List.of(false, true)) {
			try (TestStore test = TestStore.create()) {
				RedisMessageStore store = test.store();
				for (int first = 0; first < 10_000; first += 1000) {
					List<NewMessage> batch = new ArrayList<>();
					for (int g = first; g < first + 1000; g++) {
						NewMessage message = grouped("m-" + g, 1 + g, "group-" + g);
						batch.add(priorities ? message.withPriority(g % 10) : message);
					}
					store.send(TOPIC, batch);
				}
				String suffix = priorities ? " with priorities" : "";
				long[] stats = measure(test.redis(), () -> store.stats(TOPIC));
				long[] page = measure(test.redis(), () -> store.inspector(TOPIC).page(MessageState.READY, 9_990, 10));
				long[] claim = measure(test.redis(), () -> Transitions.claim(store, TOPIC, 100, MINUTE));
				costs.put("stats" + suffix + " commands", stats[0]);
				costs.put("stats" + suffix + " µs", stats[1]);
				costs.put("page at 9,990" + suffix + " commands", page[0]);
				costs.put("page at 9,990" + suffix + " µs", page[1]);
				costs.put("claim of 100" + suffix + " commands", claim[0]);
				costs.put("claim of 100" + suffix + " µs", claim[1]);
				assertThat(store.stats(TOPIC).oldestReadyDueMillis()).as("oldest ready" + suffix).isPositive();
			}
		}
		System.out.println("10,000 groups: " + costs);
		// 1,000 reads of the group ready set, 1,000 members of 4 reads each at most (two
		// ZSCOREs, and HSTRLEN and HGET of up to 1 KiB to pass over a stale member)
		assertThat(costs.get("stats commands")).isLessThan(5_100);
		assertThat(costs.get("stats with priorities commands")).isLessThan(5_100);
		assertThat(costs.get("page at 9,990 commands")).isLessThan(100);
	}

	/**
	 * The rotation of 10,000 groups lost (deleted): what the claims that rebuild it cost
	 * (the first finds 1,000 groups one by one, each next one puts back up to 1,000 more
	 * of those the counts name). Printed; asserts that no claim takes more than about
	 * 12,000 commands and that every group with ready messages is back after twelve
	 * claims (which empty at most 60 of them).
	 */
	@Test
	void theClaimsThatRebuildALostRotationOfTenThousandGroupsCost() {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			TopicKeys keys = store.keys(TOPIC);
			for (int first = 0; first < 10_000; first += 1000) {
				List<NewMessage> batch = new ArrayList<>();
				for (int g = first; g < first + 1000; g++) {
					batch.add(grouped("m-" + g, 1 + g, "group-" + g));
					batch.add(grouped("n-" + g, 1 + g, "group-" + g));
				}
				store.send(TOPIC, batch);
			}
			test.redis().delete(keys.groupRotation());
			Map<String, Long> costs = new LinkedHashMap<>();
			for (int i = 1; i <= 12; i++) {
				long[] claim = measure(test.redis(), () -> Transitions.claim(store, TOPIC, 10, MINUTE));
				costs.put("claim " + i + " commands", claim[0]);
				costs.put("claim " + i + " µs", claim[1]);
				assertThat(claim[0]).as("commands of claim %d", i).isLessThan(12_000);
			}
			System.out.println("rebuild of 10,000 groups: " + costs);
			assertThat(test.redis().opsForZSet().size(keys.groupRotation())).as("groups in the rotation")
				.isEqualTo(test.redis().opsForHash().size(keys.groupCounts()))
				.isGreaterThanOrEqualTo(10_000 - 60);
		}
	}

	private static long[] measure(StringRedisTemplate redis, Supplier<?> call) {
		CommandStats before = CommandStats.of(redis);
		call.get();
		CommandStats after = CommandStats.of(redis);
		return new long[] { after.otherCalls() - before.otherCalls(), after.scriptMicros() - before.scriptMicros() };
	}

	private static void withOffsetClock(OffsetClockTest body) {
		try (TestStore fixture = TestStore.create()) {
			String clockKey = fixture.prefix() + ":clock";
			RedisMessageStore store = new RedisMessageStore(fixture.connectionFactory(), fixture.prefix(),
					RedisMessageStore.DEFAULT_TIMEOUT, ScriptClock.offsetBy(clockKey));
			body.run(store, fixture.redis(), clockKey);
		}
	}

	@FunctionalInterface
	private interface OffsetClockTest {

		void run(RedisMessageStore store, StringRedisTemplate redis, String clockKey);

	}

	private static void assertGroupKeysEmpty(TestStore test, TopicKeys keys) {
		assertThat(test.redis().opsForZSet().size(keys.groupReady())).as("gq").isZero();
		assertThat(test.redis().opsForHash().entries(keys.groupCounts())).as("gn").isEmpty();
		assertThat(test.redis().opsForZSet().size(keys.groupRotation())).as("ga").isZero();
	}

}

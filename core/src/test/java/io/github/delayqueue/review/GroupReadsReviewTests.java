package io.github.delayqueue.review;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.delayqueue.testsupport.CommandStats;
import io.github.delayqueue.store.ClaimResult;
import io.github.delayqueue.store.ClaimedMessage;
import io.github.delayqueue.store.GroupView;
import io.github.delayqueue.store.LeaseTokens;
import io.github.delayqueue.store.MessageFormat;
import io.github.delayqueue.store.NewMessage;
import io.github.delayqueue.store.TopicStats;
import io.github.delayqueue.store.redis.RedisMessageStore;
import io.github.delayqueue.store.redis.TopicKeys;
import io.github.delayqueue.testsupport.OnOneServerVersion;
import io.github.delayqueue.testsupport.TestStore;
import io.github.delayqueue.testsupport.Transitions;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;

import static io.github.delayqueue.review.GroupsReviewTests.due;
import static io.github.delayqueue.review.GroupsReviewTests.ids;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * Adversarial review of the reads of groups (issue 38): one group read by name
 * ({@code group.lua}), the groups with the most in flight in stats, the recount of the
 * group slots ({@code recount_slots.lua}) and the claim's shorter read of the rotation,
 * on a real Redis.
 */
@OnOneServerVersion
class GroupReadsReviewTests {

	private static final String TOPIC = "jobs";

	private static final Duration MINUTE = Duration.ofMinutes(1);

	/**
	 * Groups whose names share a prefix ("a", "ab", "a b") or hold odd characters: a read
	 * by name counts and lists only the group's own messages, with its in-flight count
	 * and whether a claim parked it at its limit.
	 */
	@Test
	void aGroupReadCountsAndListsOnlyItsOwnMessagesWhateverItsName() {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			String odd = "ä[%]* (🙂)\\+-";
			List<NewMessage> messages = new ArrayList<>();
			for (String group : List.of("a", "ab", "a b", odd, "b")) {
				for (int i = 0; i < 3; i++) {
					messages.add(due(group + "/" + i, 10 + i).inGroup(group));
				}
			}
			store.send(TOPIC, messages);
			assertThat(ids(claim(store, 1, 1))).hasSize(1);
			assertThat(ids(claim(store, 100, 1))).hasSize(4);
			assertThat(claim(store, 100, 1)).as("every group at its limit").isEmpty();
			for (String group : List.of("a", "ab", "a b", odd, "b")) {
				GroupView view = store.inspector(TOPIC).group(group);
				assertThat(view.ready()).as(group).isEqualTo(2);
				assertThat(view.inFlight()).as(group).isEqualTo(1);
				assertThat(view.waitingAtLimit()).as(group).isTrue();
				assertThat(view.firstReadyIds()).as(group).containsExactly(group + "/1", group + "/2");
			}
			GroupView unknown = store.inspector(TOPIC).group("a\u00a0");
			assertThat(unknown.ready()).isZero();
			assertThat(unknown.firstReadyIds()).isEmpty();
			assertThatThrownBy(() -> store.inspector(TOPIC).group("a\0b")).isInstanceOf(IllegalArgumentException.class);
		}
	}

	/**
	 * Members left by a cancel, a reschedule (still scheduled) and a send again in
	 * another group are not listed; the count still holds them, as documented, until a
	 * claim serves the group.
	 */
	@Test
	void membersLeftByACancelARescheduleOrAnotherGroupAreNotListed() {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			store.send(TOPIC, List.of(due("cancelled", 5).inGroup("g"), due("moved", 6).inGroup("g"),
					due("later", 7).inGroup("g"), due("kept", 8).inGroup("g")));
			assertThat(store.cancel(TOPIC, "cancelled")).isTrue();
			assertThat(store.cancel(TOPIC, "moved")).isTrue();
			store.send(TOPIC, List.of(due("moved", 6).inGroup("h")));
			assertThat(store.reschedule(TOPIC, "later", Duration.ofHours(1))).isPositive();
			GroupView view = store.inspector(TOPIC).group("g");
			assertThat(view.firstReadyIds()).containsExactly("kept");
			assertThat(view.ready()).isEqualTo(4);
			assertThat(store.inspector(TOPIC).group("h").firstReadyIds()).containsExactly("moved");
			assertThat(ids(claim(store, 10, 1))).containsExactlyInAnyOrder("kept", "moved");
			assertThat(store.inspector(TOPIC).group("g").ready()).isZero();
		}
	}

	/**
	 * A ready message of a group rescheduled and made ready again has two members in the
	 * group ready set: its old one (claims drop it) and its new one. The read lists its
	 * id twice, the first time at its old place, ahead of a message that claims take
	 * first.
	 */
	@Test
	void aMessageRescheduledWhileReadyAndReadyAgainIsListedOnceAtItsNewPlace() {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			store.send(TOPIC, List.of(due("x", 5).inGroup("g"), due("y", 6).inGroup("g")));
			assertThat(store.reschedule(TOPIC, "x", Duration.ofMillis(1))).isPositive();
			await().atMost(Duration.ofSeconds(3)).until(() -> {
				Transitions.promote(store, TOPIC, 1000);
				return test.redis().opsForZSet().score(store.keys(TOPIC).scheduled(), "x") == null;
			});
			GroupView view = store.inspector(TOPIC).group("g");
			List<String> claimedInOrder = new ArrayList<>();
			for (int i = 0; i < 2; i++) {
				ClaimedMessage one = claim(store, 1, 1).get(0);
				claimedInOrder.add(one.id());
				assertThat(Transitions.ack(store, TOPIC, one.id(), one.leaseToken())).isTrue();
			}
			assertThat(claimedInOrder).containsExactly("y", "x");
			assertThat(view.firstReadyIds()).as("ready count %s", view.ready())
				.containsExactlyElementsOf(claimedInOrder);
		}
	}

	/**
	 * Where the read meets the feature matrix: priorities order the ids (most urgent
	 * first), and a message back in its group after a hand-back (a stop), an expired
	 * lease or a dead letter replayed is listed once, at its place; the in-flight count
	 * follows each step.
	 */
	@Test
	void aGroupReadListsMessagesBackInTheirGroupOnceInClaimOrder() {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			byte[] body = MessageFormat.encodeBody(Map.of(MessageFormat.GROUP_HEADER, "g"),
					"x".getBytes(StandardCharsets.UTF_8));
			store.send(TOPIC,
					List.of(new NewMessage("low", false, 5, body).inGroup("g"),
							new NewMessage("high", false, 6, body).withPriority(9).inGroup("g"),
							new NewMessage("mid", false, 7, body).withPriority(4).inGroup("g"),
							new NewMessage("late", false, 8, body).inGroup("g")));
			assertThat(store.inspector(TOPIC).group("g").firstReadyIds()).containsExactly("high", "mid", "low", "late");
			ClaimedMessage high = claim(store, 1, 0).get(0);
			assertThat(Transitions.release(store, TOPIC, high.id(), high.leaseToken())).isTrue();
			assertThat(store.inspector(TOPIC).group("g").firstReadyIds()).as("handed back")
				.containsExactly("high", "mid", "low", "late");
			String consumer = LeaseTokens.newToken();
			List<ClaimedMessage> two = Transitions
				.claim(store, TOPIC, consumer, consumer + ".1", 2, 0, Duration.ZERO, null, 0)
				.messages();
			assertThat(ids(two)).containsExactly("high", "mid");
			assertThat(store.inspector(TOPIC).group("g").inFlight()).isEqualTo(2);
			assertThat(Transitions.expireLeases(store, TOPIC, 100, 5).requeued()).containsExactlyInAnyOrder("high",
					"mid");
			GroupView expired = store.inspector(TOPIC).group("g");
			assertThat(expired.inFlight()).isZero();
			assertThat(expired.firstReadyIds()).as("leases expired").containsExactly("high", "mid", "low", "late");
			ClaimedMessage first = claim(store, 1, 1).get(0);
			assertThat(Transitions.deadLetter(store, TOPIC, first.id(), first.leaseToken(), "boom")).isTrue();
			assertThat(store.replayDead(TOPIC, List.of("high")).replayed()).containsExactly("high");
			Transitions.promote(store, TOPIC, 1000);
			GroupView replayed = store.inspector(TOPIC).group("g");
			assertThat(replayed.firstReadyIds()).as("replayed").containsExactly("high", "mid", "low", "late");
			assertThat(replayed.ready()).isEqualTo(4);
			assertThat(replayed.waitingAtLimit()).isFalse();
		}
	}

	/**
	 * A group parked at its limit while both the groups hash and the slot counts are lost
	 * (a Redis that lost keys): the ack of its message in flight frees nothing (no entry
	 * names its group), and the recount reads nothing (no group in use, no count). Its
	 * other ready message must still be claimed, at the latest after a recount.
	 */
	@Test
	void aGroupParkedWhenTheGroupsHashAndTheCountsAreLostIsLetBackByTheRecount() {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			TopicKeys keys = store.keys(TOPIC);
			StringRedisTemplate redis = test.redis();
			store.send(TOPIC, List.of(due("a", 5).inGroup("g"), due("b", 6).inGroup("g")));
			ClaimedMessage a = claim(store, 10, 1).get(0);
			assertThat(claim(store, 10, 1)).isEmpty();
			assertThat(redis.opsForZSet().score(keys.groupRotation(), "g")).isEqualTo(Double.POSITIVE_INFINITY);
			redis.delete(List.of(keys.groups(), keys.groupSlots()));
			assertThat(Transitions.ack(store, TOPIC, a.id(), a.leaseToken())).isTrue();
			List<String> corrected = store.topic(TOPIC).recountGroupSlots().join();
			assertThat(ids(claim(store, 10, 1)))
				.as("after the recount %s; rotation %s", corrected,
						redis.opsForZSet().rangeWithScores(keys.groupRotation(), 0, -1))
				.containsExactly("b");
		}
	}

	/**
	 * A group whose count in the group counts is lost (or is no number) while its
	 * messages are ready: the read fails on nothing and still lists its ready ids.
	 */
	@Test
	void aGroupWhoseCountIsLostOrNoNumberStillListsItsReadyIds() {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			TopicKeys keys = store.keys(TOPIC);
			StringRedisTemplate redis = test.redis();
			store.send(TOPIC, List.of(due("x", 5).inGroup("g"), due("y", 6).inGroup("g")));
			redis.opsForHash().put(keys.groupCounts(), "g", "many");
			redis.opsForHash().put(keys.groupSlots(), "g", "none");
			GroupView view = store.inspector(TOPIC).group("g");
			assertThat(view.inFlight()).isZero();
			assertThat(view.firstReadyIds()).as("count 'many'").containsExactly("x", "y");
			redis.delete(keys.groupCounts());
			assertThat(store.inspector(TOPIC).group("g").firstReadyIds()).as("counts lost").containsExactly("x", "y");
		}
	}

	/**
	 * One group of 10,000 ready messages: the read looks at 50 members at most (its cost
	 * is measured, not asserted: 0.5 to 1.2 ms a read, round trip included, in the
	 * review).
	 */
	@Test
	void aHugeGroupIsReadInBoundedTime() {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			List<NewMessage> messages = new ArrayList<>();
			for (int i = 0; i < 10_000; i++) {
				messages.add(due(String.format("m%05d", i), 5 + i).inGroup("huge"));
			}
			for (int from = 0; from < messages.size(); from += 2000) {
				store.send(TOPIC, messages.subList(from, from + 2000));
			}
			GroupView view = store.inspector(TOPIC).group("huge");
			assertThat(view.ready()).isEqualTo(10_000);
			assertThat(view.firstReadyIds()).hasSize(10).startsWith("m00000");
		}
	}

	/**
	 * busiestInFlight names 10 at most, each with a count that is a real count (entries
	 * that are no number, 0, negative, infinite or past what Redis returns as an integer
	 * passed over: they read as -9223372036854775808 before the fix), ties by name.
	 */
	@Test
	void busiestInFlightPassesOverBadEntriesAndBreaksTiesByName() {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			TopicKeys keys = store.keys(TOPIC);
			StringRedisTemplate redis = test.redis();
			store.send(TOPIC, List.of(due("x", 5).inGroup("g")));
			Map<String, String> slots = new LinkedHashMap<>();
			for (int i = 0; i < 12; i++) {
				slots.put("tie" + (char) ('l' - i), "3");
			}
			slots.put("bad-word", "x");
			slots.put("bad-zero", "0");
			slots.put("bad-negative", "-4");
			slots.put("bad-inf", "inf");
			slots.put("bad-huge", "1e30");
			slots.put("bad-fraction", "2.5");
			redis.opsForHash().putAll(keys.groupSlots(), slots);
			TopicStats small = store.stats(TOPIC);
			System.out.println("GroupReadsReviewTests busiestInFlight with bad entries: " + small.busiestInFlight());
			assertThat(small.busiestInFlight().keySet()).as("ties by name")
				.containsSubsequence("tiea", "tieb", "tiec")
				.doesNotContain("bad-word", "bad-zero", "bad-negative");
			assertThat(small.busiestInFlight().values()).as("counts of messages in flight")
				.allSatisfy((count) -> assertThat(count).isBetween(1L, 1_000_000L));
		}
	}

	/**
	 * Stats with 10,000 groups in flight: busiestInFlight is read from one HSCAN's worth
	 * (bounded) and names 10.
	 */
	@Test
	void busiestInFlightIsBoundedWithTenThousandGroups() {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			TopicKeys keys = store.keys(TOPIC);
			StringRedisTemplate redis = test.redis();
			store.send(TOPIC, List.of(due("x", 5).inGroup("g")));
			store.stats(TOPIC);
			long before = CommandStats.of(redis).scriptMicros();
			for (int i = 0; i < 10; i++) {
				store.stats(TOPIC);
			}
			long smallMicros = (CommandStats.of(redis).scriptMicros() - before) / 10;
			Map<String, String> many = new HashMap<>();
			for (int i = 0; i < 10_000; i++) {
				many.put("many" + i, Integer.toString(1 + i % 7));
			}
			redis.opsForHash().putAll(keys.groupSlots(), many);
			store.stats(TOPIC);
			before = CommandStats.of(redis).scriptMicros();
			TopicStats large = null;
			for (int i = 0; i < 10; i++) {
				large = store.stats(TOPIC);
			}
			long micros = (CommandStats.of(redis).scriptMicros() - before) / 10;
			// Measured, not asserted (the benchmarks check speed): 2.0-2.2 ms in the
			// review.
			System.out.println("GroupReadsReviewTests stats with 10,000 groups in gf: " + micros
					+ " us of Redis a call (one group: " + smallMicros + " us), busiest " + large.busiestInFlight());
			assertThat(large.busiestInFlight()).hasSize(10);
			assertThat(large.busiestInFlight().values()).containsOnly(7L);
		}
	}

	/**
	 * 200 groups at one tag, the first 17 by name each at its limit of 1 (their message
	 * in flight, a new one ready: they joined the rotation again at the virtual time, not
	 * parked). A claim of 1 reads the rotation's first 17 groups, parks them all and must
	 * then say that more may be waiting: 183 groups have a message it may take.
	 */
	@Test
	void aClaimOfOneThatParksTheSeventeenGroupsItReadSaysMoreMayBeWaiting() {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			TopicKeys keys = store.keys(TOPIC);
			StringRedisTemplate redis = test.redis();
			sendOneToEachGroup(store, 17, "first", 5);
			assertThat(claim(store, 100, 1)).hasSize(17);
			sendOneToEachGroup(store, 200, "next", 6);
			assertThat(redis.opsForZSet().rangeWithScores(keys.groupRotation(), 0, 0).iterator().next().getScore())
				.isEqualTo(redis.opsForZSet().score(keys.groupRotation(), "g199"));
			ClaimResult one = claimResult(store, 1, 1);
			assertThat(one.messages().isEmpty() && !one.more())
				.as("took %s, more %s, while g017 to g199 wait with a free slot", ids(one.messages()), one.more())
				.isFalse();
			ClaimResult again = claimResult(store, 1, 1);
			assertThat(ids(again.messages())).containsExactly("g017-next");
		}
	}

	/**
	 * The same through a running listener (concurrency 41, group concurrency 1): 40
	 * groups each hold a handler, then one send makes a message of each of them ready
	 * beside one of a new group "z0". The claim that follows reads the first wanted + 16
	 * groups of the rotation, all at their limit: the message of z0 must start soon, not
	 * at the next idle check (2 s here). Measured: 2,238-2,470 ms, with claim.lua's fix
	 * too (the claim of 1 parks g00 to g16 and now says more may be waiting, but the
	 * listener does not claim again).
	 */
	@Test
	void aMessageOfAFreeGroupBehindGroupsAtTheirLimitStartsSoonNotAtTheIdleCheck() {
		String prefix = TestStore.uniquePrefix();
		CountDownLatch release = new CountDownLatch(1);
		GroupConcurrencyReviewTests.Handlers handlers = new GroupConcurrencyReviewTests.Handlers(0);
		handlers.blockOn = release;
		try (TestStore sender = TestStore.builder().prefix(prefix).build();
				GroupConcurrencyReviewTests.App app = new GroupConcurrencyReviewTests.App(sender, false, 1, 41,
						handlers)) {
			try {
				List<NewMessage> first = new ArrayList<>();
				List<NewMessage> next = new ArrayList<>();
				for (int g = 0; g < 40; g++) {
					String group = String.format("g%02d", g);
					first.add(due(group + "-0", 5).inGroup(group));
					next.add(due(group + "-1", 6).inGroup(group));
				}
				next.add(due("z0-0", 7).inGroup("z0"));
				sender.store().send(TOPIC, first);
				await().atMost(Duration.ofSeconds(5)).until(() -> handlers.started.size() == 40);
				await().pollDelay(Duration.ofMillis(300)).until(() -> true);
				long sent = System.nanoTime();
				sender.store().send(TOPIC, next);
				await().atMost(Duration.ofSeconds(5)).until(() -> handlers.started.contains("z0-0"));
				long millis = (System.nanoTime() - sent) / 1_000_000;
				System.out.println("GroupReadsReviewTests z0 behind 40 groups at their limit started after " + millis
						+ " ms (idle check 2000 ms)");
				// Not the idle check's 2 s: claimed again 1 ms after a claim that parked.
				assertThat(millis).isLessThan(1500);
			}
			finally {
				release.countDown();
			}
		}
	}

	/**
	 * Groups parked at +inf sort last in the rotation, so a claim of 1 with 150 of 200
	 * groups parked reads the others first; a lost rotation is rebuilt by a claim of 1.
	 */
	@Test
	void parkedGroupsAndALostRotationHideNoClaimableGroupFromAClaimOfOne() {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			TopicKeys keys = store.keys(TOPIC);
			StringRedisTemplate redis = test.redis();
			List<NewMessage> messages = new ArrayList<>();
			for (int g = 0; g < 200; g++) {
				for (int i = 0; i < 2; i++) {
					messages.add(due(group(g) + "-" + i, 5 + i).inGroup(group(g)));
				}
			}
			store.send(TOPIC, messages);
			assertThat(claim(store, 100, 1)).hasSize(100);
			assertThat(claim(store, 50, 1)).hasSize(50);
			assertThat(claim(store, 1, 1)).as("after 150 took a slot").hasSize(1);
			assertThat(
					redis.opsForZSet().count(keys.groupRotation(), Double.POSITIVE_INFINITY, Double.POSITIVE_INFINITY))
				.isGreaterThanOrEqualTo(150);
			redis.delete(keys.groupRotation());
			List<String> taken = new ArrayList<>();
			for (int i = 0; i < 49; i++) {
				ClaimResult one = claimResult(store, 1, 1);
				assertThat(one.messages().isEmpty() && !one.more()).as("claim %d after the rotation was lost", i)
					.isFalse();
				taken.addAll(ids(one.messages()));
			}
			assertThat(taken).as("one of each group not at its limit")
				.hasSizeGreaterThanOrEqualTo(40)
				.doesNotHaveDuplicates();
			assertThat(redis.opsForHash().entries(keys.groupSlots()).values()).containsOnly("1");
		}
	}

	/**
	 * A recount finds nothing to correct while the counts are right, parks and un-parks
	 * no group; with the slot counts moved aside (renamed, as the repair does with a key
	 * of the wrong type) it sets them back from the messages in flight and the group
	 * stays parked until its message leaves flight; run again (a replay) it changes
	 * nothing.
	 */
	@Test
	void aRecountSetsCountsMovedAsideBackAndUnparksNoGroupAtItsLimit() {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			TopicKeys keys = store.keys(TOPIC);
			StringRedisTemplate redis = test.redis();
			store.send(TOPIC, List.of(due("a", 5).inGroup("g"), due("b", 6).inGroup("g"),
					due("c", 7).withPriority(3).inGroup("h"), due("d", 8).inGroup("h")));
			List<ClaimedMessage> two = claim(store, 10, 1);
			assertThat(ids(two)).containsExactlyInAnyOrder("a", "c");
			assertThat(claim(store, 10, 1)).isEmpty();
			assertThat(store.topic(TOPIC).recountGroupSlots().join()).isEmpty();
			assertThat(redis.opsForZSet().score(keys.groupRotation(), "g")).isEqualTo(Double.POSITIVE_INFINITY);
			redis.rename(keys.groupSlots(), keys.groupSlots() + ":quarantined:1");
			assertThat(store.topic(TOPIC).recountGroupSlots().join()).containsExactlyInAnyOrder("g: 0 -> 1",
					"h: 0 -> 1");
			assertThat(store.topic(TOPIC).recountGroupSlots().join()).as("replayed").isEmpty();
			assertThat(redis.opsForZSet().score(keys.groupRotation(), "g")).isEqualTo(Double.POSITIVE_INFINITY);
			assertThat(claim(store, 10, 1)).isEmpty();
			ClaimedMessage a = two.stream().filter((m) -> m.id().equals("a")).findFirst().orElseThrow();
			assertThat(Transitions.ack(store, TOPIC, a.id(), a.leaseToken())).isTrue();
			assertThat(ids(claim(store, 10, 1))).containsExactly("b");
			assertThat(store.topic(TOPIC).recountGroupSlots().join()).isEmpty();
		}
	}

	/**
	 * Two workers claim (limit 1) and acknowledge while a third recounts in a loop: the
	 * recount never finds a count to correct (it runs as one script), and no group ever
	 * has two messages held at once.
	 */
	@Test
	void aRecountRacingClaimsAndAcksCorrectsNothingAndLetsNoGroupPastItsLimit() throws Exception {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			List<NewMessage> messages = new ArrayList<>();
			for (int g = 0; g < 10; g++) {
				for (int i = 0; i < 30; i++) {
					messages.add(due("g" + g + "-" + i, 5 + i).inGroup("g" + g));
				}
			}
			store.send(TOPIC, messages);
			Map<String, AtomicInteger> held = new ConcurrentHashMap<>();
			AtomicInteger most = new AtomicInteger();
			AtomicInteger acked = new AtomicInteger();
			List<String> corrections = new CopyOnWriteArrayList<>();
			AtomicInteger recounts = new AtomicInteger();
			Runnable worker = () -> {
				while (acked.get() < 300) {
					for (ClaimedMessage m : claim(store, 3, 1)) {
						String group = m.id().substring(0, m.id().indexOf('-'));
						int now = held.computeIfAbsent(group, (k) -> new AtomicInteger()).incrementAndGet();
						most.accumulateAndGet(now, Math::max);
						held.get(group).decrementAndGet();
						assertThat(Transitions.ack(store, TOPIC, m.id(), m.leaseToken())).isTrue();
						acked.incrementAndGet();
					}
				}
			};
			Thread one = new Thread(worker);
			Thread two = new Thread(worker);
			Thread recounter = new Thread(() -> {
				while (acked.get() < 300) {
					corrections.addAll(store.topic(TOPIC).recountGroupSlots().join());
					recounts.incrementAndGet();
				}
			});
			one.start();
			two.start();
			recounter.start();
			one.join(15_000);
			two.join(15_000);
			recounter.join(15_000);
			System.out.println("GroupReadsReviewTests recount race: " + acked + " acked, " + recounts
					+ " recounts, corrections " + corrections + ", most held of a group " + most);
			assertThat(acked.get()).isEqualTo(300);
			assertThat(corrections).isEmpty();
			assertThat(most.get()).isEqualTo(1);
			assertThat(test.redis().hasKey(store.keys(TOPIC).groupSlots())).isFalse();
		}
	}

	/**
	 * A recount while more than 5,000 messages are in flight is skipped; within the
	 * bound, 4,001 groups in flight whose counts were lost beside 4,001 stale counts
	 * (8,002 to set right) must not fail on Lua's limit of 8,000 values unpacked at once.
	 */
	@Test
	void aRecountWithinItsBoundOfFiveThousandDoesNotFailOnLuasUnpackLimit() {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			TopicKeys keys = store.keys(TOPIC);
			StringRedisTemplate redis = test.redis();
			fill(redis, keys, 5001, 0);
			assertThat(store.topic(TOPIC).recountGroupSlots().join()).as("skipped").isEmpty();
			assertThat(redis.opsForHash().size(keys.groupSlots())).isZero();
			redis.delete(List.of(keys.inFlight(), keys.groups()));
			fill(redis, keys, 4001, 4001);
			List<String> corrected = store.topic(TOPIC).recountGroupSlots().join();
			assertThat(corrected).hasSize(8002);
			assertThat(redis.opsForHash().size(keys.groupSlots())).isEqualTo(4001);
		}
	}

	/**
	 * In flight: {@code inFlight} ids of a group each, without counts; {@code stale}
	 * counts of other groups.
	 */
	private static void fill(StringRedisTemplate redis, TopicKeys keys, int inFlight, int stale) {
		String lua = "for i = 1, tonumber(ARGV[1]) do redis.call('ZADD', KEYS[1], 9e12, 'f' .. i) "
				+ "redis.call('HSET', KEYS[2], 'f' .. i, 'fg' .. i) end "
				+ "for i = 1, tonumber(ARGV[2]) do redis.call('HSET', KEYS[3], 'stale' .. i, 1) end return 1";
		redis.execute(RedisScript.of(lua, Long.class), List.of(keys.inFlight(), keys.groups(), keys.groupSlots()),
				Integer.toString(inFlight), Integer.toString(stale));
	}

	/**
	 * Sends one message to each of so many groups, {@code <group>-<suffix>} in
	 * {@link #group(int) group} 0, 1 and on, all due at the same time.
	 * @param store the store
	 * @param groups how many groups
	 * @param suffix the messages' suffix
	 * @param dueMillis when they are due (epoch ms)
	 */
	private static void sendOneToEachGroup(RedisMessageStore store, int groups, String suffix, long dueMillis) {
		List<NewMessage> messages = new ArrayList<>();
		for (int g = 0; g < groups; g++) {
			messages.add(due(group(g) + "-" + suffix, dueMillis).inGroup(group(g)));
		}
		store.send(TOPIC, messages);
	}

	/**
	 * The name of a numbered group, whose order by name is its number's: g000, g001 and
	 * on.
	 * @param number the group's number
	 * @return its name
	 */
	private static String group(int number) {
		return String.format("g%03d", number);
	}

	private static List<ClaimedMessage> claim(RedisMessageStore store, int limit, int groupConcurrency) {
		return claimResult(store, limit, groupConcurrency).messages();
	}

	private static ClaimResult claimResult(RedisMessageStore store, int limit, int groupConcurrency) {
		String consumer = LeaseTokens.newToken();
		return Transitions.claim(store, TOPIC, consumer, consumer + ".1", limit, 0, MINUTE, null, groupConcurrency);
	}

}

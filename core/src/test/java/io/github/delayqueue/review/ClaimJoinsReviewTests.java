package io.github.delayqueue.review;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import io.github.delayqueue.group.DelayQueueGroups;
import io.github.delayqueue.store.ClaimResult;
import io.github.delayqueue.store.ClaimedMessage;
import io.github.delayqueue.store.GroupWait;
import io.github.delayqueue.store.GroupWeights;
import io.github.delayqueue.store.LeaseTokens;
import io.github.delayqueue.store.MessageFormat;
import io.github.delayqueue.store.MessagePage;
import io.github.delayqueue.store.MessageState;
import io.github.delayqueue.store.MessageSummary;
import io.github.delayqueue.store.NewMessage;
import io.github.delayqueue.store.RateLimit;
import io.github.delayqueue.store.TopicStats;
import io.github.delayqueue.store.WriteGate;
import io.github.delayqueue.store.redis.RedisMessageStore;
import io.github.delayqueue.store.redis.TopicKeys;
import io.github.delayqueue.test.redis.FaultyRedisProxy;
import io.github.delayqueue.testsupport.OnOneServerVersion;
import io.github.delayqueue.testsupport.TestStore;
import io.github.delayqueue.testsupport.Transitions;
import org.junit.jupiter.api.Disabled;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.script.DefaultRedisScript;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatException;

/**
 * Adversarial review of commits 666b9665, 008c49a2 and 3cac9702 on a real Redis: a due
 * message of a group found in a ready list (made ready there by a promote of a version
 * without groups, during a rolling upgrade) joins its group instead of being claimed out
 * of turn, one not yet due is kept at the list's head; the lists of priorities are read
 * whenever one of them or the priorities hash exists, and a member's rank is read from
 * its body when its priorities-hash entry is lost. Attacks: deliveries twice and stranded
 * messages, a group's limit, pause, strict wait and pace for joined messages, an id both
 * in a list and a member, a claim whose reply is dropped and sent again, 1,200 grouped
 * ids of 300 groups in one list, keys of the wrong type (no write before the failure),
 * lookahead ids kept at the head, a stale copy on a list of a priority during a join, and
 * stats and pages while the priorities hash is lost.
 */
@OnOneServerVersion
class ClaimJoinsReviewTests {

	private static final String TOPIC = "jobs";

	private static final Duration LEASE = Duration.ofMinutes(1);

	private static final Duration MINUTE = Duration.ofMinutes(1);

	/**
	 * What a promote of a version without groups does: moves the ids ARGV from the
	 * schedule KEYS[1] to the end of the ready list KEYS[2], whatever their group.
	 */
	private static final DefaultRedisScript<Long> OLD_PROMOTE = new DefaultRedisScript<>("""
			for _, id in ipairs(ARGV) do
			  redis.call('ZREM', KEYS[1], id)
			  redis.call('RPUSH', KEYS[2], id)
			end
			return redis.call('LLEN', KEYS[2])
			""", Long.class);

	@Test
	void aJoinedMessageOfAPausedGroupOnAListOfAPriorityWithTheHashLostWaitsForTheResume() {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			TopicKeys keys = store.keys(TOPIC);
			StringRedisTemplate redis = test.redis();
			store.send(TOPIC, List.of(message("x", 5, "g", 5)));
			oldPromote(test, keys.ready(5), "x");
			redis.delete(keys.priorities());
			new DelayQueueGroups(store).pause(TOPIC, "g");
			for (int i = 0; i < 3; i++) {
				assertThat(ids(claim(store, 10, 0, 0))).isEmpty();
			}
			assertThat(redis.opsForList().size(keys.ready(5))).isZero();
			assertThat(redis.opsForZSet().range(keys.groupReady(), 0, -1)).singleElement()
				.satisfies((member) -> assertThat(member).startsWith("g\0" + "4"));
			new DelayQueueGroups(store).resume(TOPIC, "g");
			assertThat(ids(claim(store, 10, 0, 0))).containsExactly("x");
			assertThat(drain(store)).isEmpty();
		}
	}

	@Test
	void aJoinedMessageWaitsForItsGroupsSlotThenForItsGroupsStrictWait() {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			TopicKeys keys = store.keys(TOPIC);
			store.send(TOPIC, List.of(message("g-0", 5, "g", 0)));
			Transitions.promote(store, TOPIC, 10);
			ClaimedMessage first = claim(store, 10, 0, 1).messages().get(0);
			store.send(TOPIC, List.of(message("g-1", 6, "g", 0), message("n-0", 7, null, 0)));
			oldPromote(test, keys.ready(), "g-1", "n-0");
			assertThat(ids(claim(store, 10, 0, 1))).containsExactly("n-0");
			assertThat(ids(claim(store, 10, 0, 1))).isEmpty();
			assertThat(store.topic(TOPIC).retry("g-0", first.leaseToken(), MINUTE, "boom", GroupWait.IN_GROUP))
				.isPositive();
			for (int limit : new int[] { 1, 0 }) {
				assertThat(ids(claim(store, 10, 0, limit))).isEmpty();
			}
			assertThat(test.redis().opsForZSet().range(keys.groupReady(), 0, -1))
				.anySatisfy((member) -> assertThat(member).endsWith("\0g-1"));
			assertThat(test.redis().opsForList().size(keys.ready())).isZero();
		}
	}

	@Test
	void joinedMessagesKeepTheirGroupsPace() {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			store.send(TOPIC, List.of(message("g-0", 5, "g", 0), message("g-1", 6, "g", 3), message("g-2", 7, "g", 0)));
			oldPromote(test, store.keys(TOPIC).ready(), "g-0", "g-2");
			oldPromote(test, store.keys(TOPIC).ready(3), "g-1");
			List<String> claimed = new ArrayList<>();
			for (int i = 0; i < 5; i++) {
				String consumer = LeaseTokens.newToken();
				claimed.addAll(ids(store.topic(TOPIC)
					.claim(consumer, consumer + ".1", 10, 0, LEASE, null, 0, GroupWeights.NONE,
							new RateLimit(1, MINUTE), WriteGate.OPEN)
					.join()));
			}
			// The most urgent first (priority 3), one a minute.
			assertThat(claimed).containsExactly("g-1");
		}
	}

	@Test
	void anIdBothInListsAndAMemberIsClaimedOnceWithOrWithoutThePrioritiesHash() {
		for (boolean lost : new boolean[] { false, true }) {
			try (TestStore test = TestStore.create()) {
				RedisMessageStore store = test.store();
				TopicKeys keys = store.keys(TOPIC);
				StringRedisTemplate redis = test.redis();
				store.send(TOPIC, List.of(message("x", 5, "g", 0), message("y", 6, "g", 3), message("z", 7, "h", 7)));
				Transitions.promote(store, TOPIC, 10);
				redis.opsForList().rightPushAll(keys.ready(), "x", "x");
				redis.opsForList().rightPushAll(keys.ready(3), "y", "x");
				redis.opsForList().rightPushAll(keys.ready(7), "z", "y", "z");
				if (lost) {
					redis.delete(keys.priorities());
				}
				assertThat(drain(store)).as("hash lost %s", lost).containsExactlyInAnyOrder("x", "y", "z");
				assertEmpty(test);
			}
		}
	}

	@Test
	void aJoinWhoseClaimReplyIsDroppedAndSentAgainDeliversEachMessageOnce() {
		try (TestStore test = TestStore.builder().behindProxy().sendTimeout(Duration.ofSeconds(2)).build()) {
			RedisMessageStore store = test.store();
			TopicKeys keys = store.keys(TOPIC);
			store.send(TOPIC,
					List.of(message("n-0", 5, null, 0), message("g-0", 6, "g", 0), message("h-0", 7, "h", 0)));
			oldPromote(test, keys.ready(), "g-0", "n-0", "h-0");
			String consumer = LeaseTokens.newToken();
			FaultyRedisProxy.Fault dropped = test.proxy().dropNextReplyTo(FaultyRedisProxy.named("EVALSHA", "EVAL"));
			CompletableFuture<ClaimResult> first = store.topic(TOPIC)
				.claim(consumer, consumer + ".1", 10, 0, LEASE, null, 1, WriteGate.OPEN);
			List<String> claimed = new ArrayList<>();
			try {
				claimed.addAll(ids(first.join()));
			}
			catch (RuntimeException ex) {
				// Lost: sent again by the consumer with the same token.
				claimed.addAll(ids(Transitions.claim(store, TOPIC, consumer, consumer + ".1", 10, 0, LEASE, null, 1)));
			}
			assertThat(dropped.hasFired()).isTrue();
			// The same request once more: the same answer, nothing new.
			List<String> again = ids(Transitions.claim(store, TOPIC, consumer, consumer + ".1", 10, 0, LEASE, null, 1));
			assertThat(again).isEqualTo(claimed);
			for (int i = 0; i < 3; i++) {
				String other = LeaseTokens.newToken();
				claimed.addAll(ids(Transitions.claim(store, TOPIC, other, other + ".1", 10, 0, LEASE, null, 1)));
			}
			assertThat(claimed).containsExactlyInAnyOrder("n-0", "g-0", "h-0");
		}
	}

	@Test
	void manyGroupedIdsInOneListAreJoinedAThousandAClaimAndEachDeliveredOnce() {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			TopicKeys keys = store.keys(TOPIC);
			StringRedisTemplate redis = test.redis();
			List<NewMessage> messages = new ArrayList<>();
			List<String> ids = new ArrayList<>();
			for (int i = 0; i < 1200; i++) {
				messages.add(message("m-" + i, 5 + i, "g" + (i % 300), 0));
				ids.add("m-" + i);
			}
			messages.add(message("plain", 10_000, null, 0));
			ids.add("plain");
			store.send(TOPIC, messages);
			oldPromote(test, keys.ready(), ids.toArray(String[]::new));
			long started = System.nanoTime();
			ClaimResult first = claim(store, 1, 0, 1);
			long firstMillis = (System.nanoTime() - started) / 1_000_000;
			assertThat(first.more()).isTrue();
			// At most a thousand ids looked at a claim.
			assertThat(redis.opsForList().size(keys.ready())).isGreaterThanOrEqualTo(200);
			List<String> claimed = new ArrayList<>(ids(first.messages()));
			first.messages().forEach((m) -> Transitions.ack(store, TOPIC, m.id(), m.leaseToken()));
			int claims = 1;
			for (; claims < 400; claims++) {
				ClaimResult result = claim(store, 10, 0, 1);
				claimed.addAll(ids(result.messages()));
				for (ClaimedMessage message : result.messages()) {
					Transitions.ack(store, TOPIC, message.id(), message.leaseToken());
				}
				if (result.messages().isEmpty() && !result.more()) {
					break;
				}
			}
			System.out.printf("1201 ids, 300 groups: first claim %d ms, %d claims%n", firstMillis, claims);
			System.out.printf("left: list %d, group ready %d, rotation %s, counts %s, stored %d, slots %s%n",
					redis.opsForList().size(keys.ready()), redis.opsForZSet().zCard(keys.groupReady()),
					redis.opsForZSet()
						.rangeWithScores(keys.groupRotation(), 0, 5)
						.stream()
						.map((t) -> t.getValue() + "=" + t.getScore())
						.toList(),
					redis.opsForHash().size(keys.groupCounts()), redis.opsForHash().size(keys.messages()),
					redis.opsForHash()
						.entries(keys.groupSlots())
						.entrySet()
						.stream()
						.filter((e) -> !"0".equals(e.getValue()))
						.toList());
			ClaimResult after = claim(store, 10, 0, 1);
			System.out.printf("one more claim: %s more %s%n", ids(after), after.more());
			assertThat(claimed).hasSize(1201).doesNotHaveDuplicates();
		}
	}

	@Test
	void aClaimThatWouldJoinFailsOnAGroupKeyOfTheWrongTypeBeforeTrimmingAList() {
		for (String which : new String[] { "counts", "tags", "rotation", "ready" }) {
			try (TestStore test = TestStore.create()) {
				RedisMessageStore store = test.store();
				TopicKeys keys = store.keys(TOPIC);
				StringRedisTemplate redis = test.redis();
				store.send(TOPIC,
						List.of(message("n-0", 5, null, 0), message("g-0", 6, "g", 0), message("p-0", 7, "g", 4)));
				oldPromote(test, keys.ready(), "n-0", "g-0");
				oldPromote(test, keys.ready(4), "p-0");
				String key = switch (which) {
					case "counts" -> keys.groupCounts();
					case "tags" -> keys.groupTags();
					case "rotation" -> keys.groupRotation();
					default -> keys.groupReady();
				};
				redis.opsForValue().set(key, "wrong");
				String consumer = LeaseTokens.newToken();
				assertThatException().as(which)
					.isThrownBy(() -> Transitions.claim(store, TOPIC, consumer, consumer + ".1", 10, 0, LEASE, null, 0))
					.withStackTraceContaining("WRONGTYPE");
				assertThat(redis.opsForList().range(keys.ready(), 0, -1)).as(which).containsExactly("n-0", "g-0");
				assertThat(redis.opsForList().range(keys.ready(4), 0, -1)).as(which).containsExactly("p-0");
				assertThat(redis.opsForZSet().zCard(keys.inFlight())).as(which).isZero();
				redis.delete(key);
				assertThat(drain(store)).as(which).containsExactlyInAnyOrder("n-0", "g-0", "p-0");
			}
		}
	}

	/**
	 * The rotation lost (rebuilt from the group ready set, so the group counts are not
	 * read) while the group counts hold the wrong type: the claim fails before any write
	 * (finding, fixed: claim.lua trimmed the group ready set before its HSET of the
	 * counts failed, and the message taken was neither leased nor ready any more).
	 */
	@Test
	void aRebuiltRotationWithCountsOfTheWrongTypeFailsBeforeAnyWrite() {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			TopicKeys keys = store.keys(TOPIC);
			StringRedisTemplate redis = test.redis();
			store.send(TOPIC, List.of(message("g-0", 5, "g", 0)));
			Transitions.promote(store, TOPIC, 10);
			redis.delete(keys.groupRotation());
			redis.delete(keys.groupCounts());
			redis.opsForValue().set(keys.groupCounts(), "wrong");
			String consumer = LeaseTokens.newToken();
			assertThatException()
				.isThrownBy(() -> Transitions.claim(store, TOPIC, consumer, consumer + ".1", 10, 0, LEASE, null, 0))
				.withStackTraceContaining("WRONGTYPE");
			assertThat(redis.opsForZSet().zCard(keys.groupReady())).isEqualTo(1);
			redis.delete(keys.groupCounts());
			assertThat(drain(store)).containsExactly("g-0");
		}
	}

	@Test
	void earlyGroupedIdsStayAtTheHeadWhileDueOnesBehindAreTakenOrJoined() {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			TopicKeys keys = store.keys(TOPIC);
			StringRedisTemplate redis = test.redis();
			long later = System.currentTimeMillis() + 3_600_000;
			store.send(TOPIC,
					List.of(message("e-0", later, "g", 0), message("e-1", later + 1, "h", 0),
							message("n-early", later + 2, null, 0), message("n-0", 5, null, 0),
							message("g-0", 6, "g", 0), message("e-2", later + 3, "g", 0), message("n-1", 7, null, 0)));
			oldPromote(test, keys.ready(), "e-0", "e-1", "n-early", "n-0", "g-0", "e-2", "n-1");
			ClaimResult first = claim(store, 1, 5, 0);
			assertThat(ids(first)).containsExactlyInAnyOrder("n-early", "n-0");
			List<String> claimed = new ArrayList<>(ids(first));
			for (int i = 0; i < 4; i++) {
				claimed.addAll(ids(claim(store, 10, 5, 0)));
			}
			assertThat(claimed).containsExactlyInAnyOrder("n-early", "n-0", "g-0", "n-1");
			assertThat(redis.opsForList().range(keys.ready(), 0, -1)).containsExactly("e-0", "e-1", "e-2");
			assertThat(redis.opsForZSet().zCard(keys.groupReady())).isZero();
		}
	}

	@Test
	void aStaleCopyOnAListOfAPriorityDuringAJoinDeliversEachOnce() {
		for (boolean lost : new boolean[] { false, true }) {
			try (TestStore test = TestStore.create()) {
				RedisMessageStore store = test.store();
				TopicKeys keys = store.keys(TOPIC);
				StringRedisTemplate redis = test.redis();
				store.send(TOPIC, List.of(message("x", 5, "g", 9), message("y", 6, "g", 9)));
				oldPromote(test, keys.ready(9), "x", "y");
				assertThat(store.cancel(TOPIC, "x")).isTrue();
				// Sent again with another priority, due: a copy on the list of 9 stays.
				store.send(TOPIC, List.of(message("x", 7, "g", 2)));
				oldPromote(test, keys.ready(2), "x");
				redis.opsForList().rightPush(keys.ready(), "x");
				if (lost) {
					redis.delete(keys.priorities());
				}
				List<String> claimed = drain(store);
				assertThat(claimed).as("hash lost %s", lost).containsExactlyInAnyOrder("x", "y");
				// The most urgent first.
				assertThat(claimed).as("hash lost %s", lost).containsExactly("y", "x");
				assertEmpty(test);
			}
		}
	}

	/**
	 * While the priorities hash is lost, claim takes an id of a list of a priority whose
	 * body names it: the page of ready messages and the stats should show it too.
	 */
	@Test
	void statsAndPagesShowWhatClaimTakesWhileThePrioritiesHashIsLost() {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			TopicKeys keys = store.keys(TOPIC);
			store.send(TOPIC, List.of(message("x", 5, null, 5), message("g-0", 6, "g", 4)));
			Transitions.promote(store, TOPIC, 10);
			test.redis().delete(keys.priorities());
			TopicStats stats = store.stats(TOPIC);
			MessagePage page = store.page(TOPIC, MessageState.READY, 0, 10);
			System.out.printf("hash lost: stats ready %d by priority %s oldest %d; page %s%n", stats.ready(),
					stats.readyByPriority(), stats.oldestReadyDueMillis(),
					page.messages().stream().map(MessageSummary::id).toList());
			assertThat(stats.ready()).isEqualTo(2);
			assertThat(stats.oldestReadyDueMillis()).isEqualTo(5);
			assertThat(stats.readyByPriority()).containsEntry(5, 1L);
			assertThat(page.messages()).extracting(MessageSummary::id).containsExactlyInAnyOrder("x", "g-0");
			assertThat(drain(store)).containsExactlyInAnyOrder("x", "g-0");
		}
	}

	@Test
	void aJoinIntoAGroupServedInTheSameClaimKeepsItsCountAndDeliversEachOnce() {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			TopicKeys keys = store.keys(TOPIC);
			StringRedisTemplate redis = test.redis();
			store.send(TOPIC, List.of(message("g-a", 100, "g", 0), message("g-b", 101, "g", 0)));
			Transitions.promote(store, TOPIC, 10);
			store.send(TOPIC,
					List.of(message("g-x", 5, "g", 0), message("g-y", 102, "g", 0), message("n-0", 6, null, 0)));
			oldPromote(test, keys.ready(), "g-x", "n-0", "g-y");
			List<String> claimed = new ArrayList<>();
			for (int i = 0; i < 10; i++) {
				ClaimResult result = claim(store, 2, 0, 0);
				claimed.addAll(ids(result));
				Object count = redis.opsForHash().get(keys.groupCounts(), "g");
				Long members = redis.opsForZSet().zCard(keys.groupReady());
				assertThat((count != null) ? Long.parseLong((String) count) : 0L).as("claim %d", i).isEqualTo(members);
				result.messages().forEach((m) -> Transitions.ack(store, TOPIC, m.id(), m.leaseToken()));
				if (result.messages().isEmpty() && !result.more()) {
					break;
				}
			}
			assertThat(claimed).containsExactlyInAnyOrder("g-a", "g-b", "g-x", "g-y", "n-0");
			assertEmpty(test);
		}
	}

	/**
	 * A thousand grouped ids not yet due (made ready early by a promote of a version
	 * without groups and its lookahead) at the head of the ready list: each claim looks
	 * at them, keeps them, and says more may be waiting, so a consumer claims again at
	 * once and in vain until they are due; a due message behind them waits as long.
	 */
	@Test
	@Disabled("finding (low, upgrades only): 1000+ early grouped ids at a ready list's head are kept by every claim, "
			+ "which takes nothing behind them and answers more=1 (a consumer's busy loop until they are due)")
	void aThousandEarlyGroupedIdsAtTheHeadDoNotHideADueMessage() {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			TopicKeys keys = store.keys(TOPIC);
			long later = System.currentTimeMillis() + 5_000;
			List<NewMessage> messages = new ArrayList<>();
			List<String> ids = new ArrayList<>();
			for (int i = 0; i < 1000; i++) {
				messages.add(message("e-" + i, later, "g" + (i % 10), 0));
				ids.add("e-" + i);
			}
			messages.add(message("n-0", 5, null, 0));
			ids.add("n-0");
			store.send(TOPIC, messages);
			oldPromote(test, keys.ready(), ids.toArray(String[]::new));
			ClaimResult result = claim(store, 10, 10, 0);
			System.out.printf("1000 early grouped ids first: claimed %s, more %s%n", ids(result), result.more());
			assertThat(ids(result)).containsExactly("n-0");
		}
	}

	@Test
	void staleMembersOfAnotherRankAreDroppedAndTheLiveOneTakenOnceWithThePrioritiesHashLost() {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			TopicKeys keys = store.keys(TOPIC);
			store.send(TOPIC, List.of(message("x", 5, "g", 5), message("y", 6, "g", 0)));
			Transitions.promote(store, TOPIC, 10);
			assertThat(store.cancel(TOPIC, "x")).isTrue();
			store.send(TOPIC, List.of(message("x", 7, "g", 3)));
			Transitions.promote(store, TOPIC, 10);
			test.redis().delete(keys.priorities());
			assertThat(test.redis().opsForZSet().zCard(keys.groupReady())).isEqualTo(3);
			assertThat(drain(store)).containsExactly("x", "y");
			assertEmpty(test);
		}
	}

	@Test
	void joinedMessagesKeepTheTopicsRateLimit() {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			store.send(TOPIC, List.of(message("g-0", 5, "g", 0), message("h-0", 6, "h", 0), message("k-0", 7, "k", 0),
					message("n-0", 8, null, 0)));
			oldPromote(test, store.keys(TOPIC).ready(), "g-0", "h-0", "k-0", "n-0");
			List<String> claimed = new ArrayList<>();
			for (int i = 0; i < 5; i++) {
				String consumer = LeaseTokens.newToken();
				claimed.addAll(ids(Transitions.claim(store, TOPIC, consumer, consumer + ".1", 10, 0, LEASE,
						new RateLimit(2, MINUTE), 0)));
			}
			assertThat(claimed).hasSize(2).doesNotHaveDuplicates();
		}
	}

	private static NewMessage message(String id, long due, String group, int priority) {
		Map<String, String> headers = new HashMap<>();
		if (group != null) {
			headers.put(MessageFormat.GROUP_HEADER, group);
		}
		if (priority > 0) {
			headers.put(MessageFormat.PRIORITY_HEADER, Integer.toString(priority));
		}
		NewMessage message = new NewMessage(id, false, due,
				MessageFormat.encodeBody(headers, id.getBytes(StandardCharsets.UTF_8)));
		if (priority > 0) {
			message = message.withPriority(priority);
		}
		return (group != null) ? message.inGroup(group) : message;
	}

	private static void oldPromote(TestStore test, String list, String... ids) {
		test.redis().execute(OLD_PROMOTE, List.of(test.store().keys(TOPIC).scheduled(), list), (Object[]) ids);
	}

	private static ClaimResult claim(RedisMessageStore store, int limit, int early, int groupConcurrency) {
		String consumer = LeaseTokens.newToken();
		return Transitions.claim(store, TOPIC, consumer, consumer + ".1", limit, early, LEASE, null, groupConcurrency);
	}

	/** Claims and acknowledges until a claim finds nothing more; every id claimed. */
	private static List<String> drain(RedisMessageStore store) {
		return Transitions.drain(store, TOPIC, LEASE);
	}

	private static void assertEmpty(TestStore test) {
		TopicKeys keys = test.store().keys(TOPIC);
		assertThat(test.redis().opsForHash().entries(keys.messages())).as("stored after the drain").isEmpty();
		assertThat(test.redis().opsForZSet().zCard(keys.groupReady())).isZero();
	}

	private static List<String> ids(ClaimResult result) {
		return ids(result.messages());
	}

	private static List<String> ids(List<ClaimedMessage> messages) {
		return messages.stream().map(ClaimedMessage::id).toList();
	}

}

package io.github.delayqueue.review;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;

import io.github.delayqueue.store.ClaimResult;
import io.github.delayqueue.store.ClaimedMessage;
import io.github.delayqueue.store.LeaseTokens;
import io.github.delayqueue.store.MessageFormat;
import io.github.delayqueue.store.MessagePage;
import io.github.delayqueue.store.MessageState;
import io.github.delayqueue.store.MessageSummary;
import io.github.delayqueue.store.NewMessage;
import io.github.delayqueue.store.TopicStats;
import io.github.delayqueue.store.redis.RedisMessageStore;
import io.github.delayqueue.store.redis.TopicKeys;
import io.github.delayqueue.test.redis.FaultyRedisProxy;
import io.github.delayqueue.testsupport.OnOneServerVersion;
import io.github.delayqueue.testsupport.TestStore;
import io.github.delayqueue.testsupport.Transitions;
import org.junit.jupiter.api.Disabled;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.util.unit.DataSize;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatException;

/**
 * Adversarial review of commit fc6175cd on a real Redis: stats.lua decides that a topic
 * uses priorities by one EXISTS over its priorities hash and the lists of priorities
 * (counts by priority, every rank of the groups for the oldest ready time), and page.lua
 * shows an id without a priorities-hash entry found on the list of priority p as that
 * list's when its body names p (or when its body is too long to read). Attacks: random
 * mixes of priorities, groups, stale copies, in-flight messages and a lost hash, checked
 * against a drain by claim; odd bodies (no header, another priority, not the stored
 * format, longer than the page's byte limit); keys of the wrong type; commands run by
 * idle reads; partitions; a delaying and a reply-dropping proxy.
 */
@OnOneServerVersion
class PrioritiesReadersReviewTests {

	private static final Duration LEASE = Duration.ofMinutes(1);

	/**
	 * Commands (the script call included) of one stats call of a topic with two ready
	 * messages of priority 0 and no groups before fc6175cd, counted by hand from its
	 * stats.lua.
	 */
	private static final long STATS_COMMANDS_BEFORE = 19;

	/**
	 * Random mixes: what a page of READY lists is exactly what a drain by claim then
	 * delivers, each once; stats' ready count and oldest ready due time agree with it.
	 * Grouped messages with a priority while the hash is lost and no list of a priority
	 * is left are kept out here (see the finding below).
	 */
	@Test
	void aReadyPageAndTheStatsReadyCountAgreeWithADrainByClaimForRandomMixes() {
		randomMixes(false);
	}

	/**
	 * The same mixes, checking stats' oldest ready due time against the drain's oldest.
	 * Stale copies and stale group members are passed over now; what is left needs the
	 * hash lost.
	 */
	@Test
	@Disabled("finding (low, ops view only, the priorities hash lost): a stale copy on the plain ready list of a "
			+ "message sent again with a priority and a later due time has no entry left, so claim takes it as "
			+ "the plain list's and stats reads its new due time as the list's head, hiding the real head behind "
			+ "it (seed 237583: 100 reported, 11 true; 2 of 60 rounds)")
	void theStatsOldestReadyTimeAgreesWithADrainByClaimForRandomMixes() {
		randomMixes(true);
	}

	private static void randomMixes(boolean checkOldest) {
		try (TestStore test = TestStore.create()) {
			List<String> failures = new ArrayList<>();
			for (int round = 0; round < 60; round++) {
				long seed = 7919L * round + 13;
				String failure = runMix(test, "mix" + round, new Random(seed), round % 3 != 0, checkOldest);
				if (failure != null) {
					failures.add("round " + round + " (seed " + seed + "): " + failure);
				}
			}
			failures.forEach(System.out::println);
			assertThat(failures).isEmpty();
		}
	}

	private static String runMix(TestStore test, String topic, Random random, boolean groups, boolean checkOldest) {
		RedisMessageStore store = test.store();
		TopicKeys keys = store.keys(topic);
		int count = 3 + random.nextInt(10);
		Map<String, Integer> priorityOf = new HashMap<>();
		Map<String, String> groupOf = new HashMap<>();
		List<NewMessage> messages = new ArrayList<>();
		for (int i = 0; i < count; i++) {
			String id = "m" + i;
			int priority = (random.nextInt(3) == 0) ? 0 : 1 + random.nextInt(9);
			String group = (groups && random.nextBoolean()) ? "g" + random.nextInt(2) : null;
			priorityOf.put(id, priority);
			groupOf.put(id, group);
			messages.add(message(id, 10 + i, group, priority));
		}
		store.send(topic, messages);
		Transitions.promote(store, topic, 1000);
		int lose = random.nextInt(3);
		if (lose == 0) {
			test.redis().delete(keys.priorities());
		}
		// Cancelled while ready and sent again with another priority (or group): stale
		// copies left on the lists and in the group ready set.
		List<NewMessage> again = new ArrayList<>();
		for (int i = 0; i < count; i++) {
			if (random.nextInt(3) == 0) {
				String id = "m" + i;
				store.cancel(topic, id);
				int priority = random.nextInt(10);
				String group = (groups && random.nextBoolean()) ? "g" + random.nextInt(2) : null;
				priorityOf.put(id, priority);
				groupOf.put(id, group);
				again.add(message(id, 100 + i, group, priority));
			}
		}
		if (!again.isEmpty()) {
			store.send(topic, again);
			Transitions.promote(store, topic, 1000);
		}
		if (lose == 1) {
			test.redis().delete(keys.priorities());
		}
		// Some in flight: neither shown nor drained.
		Set<String> leased = new HashSet<>();
		if (random.nextBoolean()) {
			claim(store, topic, 1 + random.nextInt(2)).messages().forEach((m) -> leased.add(m.id()));
		}
		if (lose == 2 && random.nextBoolean()) {
			test.redis().delete(keys.priorities());
		}
		boolean hashLost = !Boolean.TRUE.equals(test.redis().hasKey(keys.priorities()));
		boolean prioritizedGroupsOnly = hashLost && lists(test, keys).isEmpty();
		TopicStats stats = store.stats(topic);
		MessagePage page = store.page(topic, MessageState.READY, 0, 1000);
		List<String> shown = page.messages().stream().map(MessageSummary::id).toList();
		Map<String, Long> dueOf = new HashMap<>();
		List<String> drained = new ArrayList<>();
		for (int k = 0; k < 50; k++) {
			ClaimResult result = claim(store, topic, 10);
			for (ClaimedMessage m : result.messages()) {
				drained.add(m.id());
				dueOf.put(m.id(), MessageFormat.dueAtMillis(m.stored()));
				Transitions.ack(store, topic, m.id(), m.leaseToken());
			}
			if (result.messages().isEmpty() && !result.more()) {
				break;
			}
		}
		String state = "priorities " + priorityOf + ", groups " + groupOf + ", lost at " + lose + ", leased " + leased
				+ "; page " + shown + ", drained " + drained + ", stats ready " + stats.ready() + " oldest "
				+ stats.oldestReadyDueMillis() + " by priority " + stats.readyByPriority();
		if (new HashSet<>(shown).size() != shown.size()) {
			return "page shows an id twice: " + state;
		}
		if (new HashSet<>(drained).size() != drained.size()) {
			return "drain delivers an id twice: " + state;
		}
		if (!new HashSet<>(shown).equals(new HashSet<>(drained))) {
			return "page and drain differ: " + state;
		}
		if (stats.ready() != drained.size()) {
			return "stats ready differs: " + state;
		}
		long oldest = dueOf.values().stream().mapToLong(Long::longValue).min().orElse(-1);
		boolean groupedPriorities = groupOf.entrySet()
			.stream()
			.anyMatch((e) -> e.getValue() != null && priorityOf.get(e.getKey()) > 0);
		if (checkOldest && stats.oldestReadyDueMillis() != oldest && !(prioritizedGroupsOnly && groupedPriorities)) {
			return "stats oldest ready " + stats.oldestReadyDueMillis() + " but the drain's oldest is " + oldest + ": "
					+ state;
		}
		return null;
	}

	/**
	 * The priorities hash intact: "a" of priority 0 at the head of the ready list is
	 * cancelled while ready and sent again with priority 3 and a later due time; "b"
	 * (priority 0, due 6) waits behind the stale copy. Stats read the stale copy, take
	 * the new due time of "a" and stop: "b" is missed.
	 */
	@Test
	void theOldestReadyTimeIsNotTakenFromAStaleCopy() {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			store.send("jobs", List.of(message("a", 5, null, 0), message("b", 6, null, 0)));
			Transitions.promote(store, "jobs", 10);
			assertThat(store.cancel("jobs", "a")).isTrue();
			store.send("jobs", List.of(message("a", 500, null, 3)));
			Transitions.promote(store, "jobs", 10);
			assertThat(test.redis().hasKey(store.keys("jobs").priorities())).isTrue();
			TopicStats stats = store.stats("jobs");
			System.out.printf("stale copy at the head of the ready list: oldest %d%n", stats.oldestReadyDueMillis());
			assertThat(drain(store, "jobs")).containsExactly("a", "b");
			assertThat(stats.oldestReadyDueMillis()).isEqualTo(6);
		}
	}

	/**
	 * A topic whose messages with a priority are all in groups: while its priorities hash
	 * is lost, no list of a priority exists; stats still finds each group's first member
	 * of any rank (the first version read rank 9 only and reported no oldest ready time),
	 * and the page shows each with the priority its rank names.
	 */
	@Test
	void statsSeeGroupedMessagesWithAPriorityWhileTheHashIsLostAndNoListOfAPriorityExists() {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			TopicKeys keys = store.keys("jobs");
			store.send("jobs", List.of(message("g-0", 5, "g", 4), message("h-0", 6, "h", 7)));
			Transitions.promote(store, "jobs", 10);
			test.redis().delete(keys.priorities());
			TopicStats stats = store.stats("jobs");
			MessagePage page = store.page("jobs", MessageState.READY, 0, 10);
			System.out.printf("grouped priorities, hash lost: ready %d, oldest %d, by priority %s, page %s%n",
					stats.ready(), stats.oldestReadyDueMillis(), stats.readyByPriority(),
					page.messages().stream().map((m) -> m.id() + "@" + m.priority()).toList());
			assertThat(drain(store, "jobs")).containsExactlyInAnyOrder("g-0", "h-0");
			assertThat(stats.ready()).isEqualTo(2);
			assertThat(page.messages()).extracting(MessageSummary::priority).containsExactlyInAnyOrder(4, 7);
			assertThat(stats.oldestReadyDueMillis()).isEqualTo(5);
		}
	}

	/**
	 * The same with one list of a priority left: stats reads every rank and finds the
	 * oldest (the fix works while some list exists).
	 */
	@Test
	void statsFindTheOldestGroupedMessageWhileTheHashIsLostAndAListOfAPriorityExists() {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			store.send("jobs", List.of(message("g-0", 5, "g", 4), message("x", 9, null, 2)));
			Transitions.promote(store, "jobs", 10);
			test.redis().delete(store.keys("jobs").priorities());
			TopicStats stats = store.stats("jobs");
			assertThat(stats.oldestReadyDueMillis()).isEqualTo(5);
			assertThat(stats.readyByPriority()).containsEntry(2, 1L).containsEntry(0, 1L);
			assertThat(drain(store, "jobs")).containsExactlyInAnyOrder("g-0", "x");
		}
	}

	/**
	 * A message of priority 5 cancelled while ready leaves its id on the list of priority
	 * 5; sent again with priority 0 (no priorities-hash entry, as always for priority 0)
	 * and a body longer than the page's byte limit, it is ready on the ready list. The
	 * hash is intact. The page leaves the stale copy out, as claim drops it (the first
	 * version took it for the list's unread, showed the message with priority 5, and a
	 * page walk showed it twice).
	 */
	@Test
	void aStaleCopyOfAHugeMessageNowOfPriorityZeroIsNotShownAsTheListsPriority() {
		try (TestStore test = TestStore.builder().maxPayloadSize(DataSize.ofMegabytes(3)).build()) {
			RedisMessageStore store = test.store();
			store.send("jobs", List.of(message("big", 5, null, 5)));
			Transitions.promote(store, "jobs", 10);
			assertThat(store.cancel("jobs", "big")).isTrue();
			store.send("jobs", List.of(huge("big", 6, 0), message("small", 7, null, 0)));
			Transitions.promote(store, "jobs", 10);
			assertThat(test.redis().hasKey(store.keys("jobs").priorities())).isFalse();
			MessagePage page = store.page("jobs", MessageState.READY, 0, 10);
			List<String> walk = new ArrayList<>();
			for (int offset = 0; offset < 3; offset++) {
				store.page("jobs", MessageState.READY, offset, 1).messages().forEach((m) -> walk.add(m.id()));
			}
			System.out.printf("huge priority-0 message with a stale copy on list 5: page %s, walk %s%n",
					page.messages().stream().map((m) -> m.id() + "@" + m.priority()).toList(), walk);
			assertThat(drain(store, "jobs")).containsExactly("big", "small");
			assertThat(page.messages()).extracting(MessageSummary::priority).containsOnly(0);
			assertThat(walk).containsExactly("big", "small");
		}
	}

	/**
	 * The same kind of body but without a stale copy and with the hash lost: a huge
	 * message sent with priority 5 whose body names no priority (sent by the store, not
	 * the template): the page leaves it out, as claim drops it (the first version showed
	 * it unread).
	 */
	@Test
	void aHugeBodyThatNamesNoPriorityIsNotShownWhileClaimDropsIt() {
		try (TestStore test = TestStore.builder().maxPayloadSize(DataSize.ofMegabytes(3)).build()) {
			RedisMessageStore store = test.store();
			store.send("jobs", List.of(huge("big", 5, 5)));
			Transitions.promote(store, "jobs", 10);
			test.redis().delete(store.keys("jobs").priorities());
			MessagePage page = store.page("jobs", MessageState.READY, 0, 10);
			List<String> drained = drain(store, "jobs");
			System.out.printf("huge body naming no priority, hash lost: page %s, drained %s%n",
					page.messages().stream().map(MessageSummary::id).toList(), drained);
			assertThat(page.messages()).extracting(MessageSummary::id).containsExactlyElementsOf(drained);
		}
	}

	/**
	 * A huge body that names its list's priority, with the hash lost: taken by claim, but
	 * left out of the page, which does not read a body over its byte limit (it cannot
	 * tell it from a stale copy, above).
	 */
	@Test
	void aHugeBodyNamingItsListsPriorityIsTakenButLeftOutOfThePageWhileTheHashIsLost() {
		try (TestStore test = TestStore.builder().maxPayloadSize(DataSize.ofMegabytes(3)).build()) {
			RedisMessageStore store = test.store();
			store.send("jobs", List.of(hugeNaming("big", 5, 5), message("x", 6, null, 3)));
			Transitions.promote(store, "jobs", 10);
			test.redis().delete(store.keys("jobs").priorities());
			MessagePage page = store.page("jobs", MessageState.READY, 0, 10);
			assertThat(page.messages()).extracting((m) -> m.id() + "@" + m.priority() + "/" + m.attempts())
				.containsExactly("x@3/0");
			assertThat(drain(store, "jobs")).containsExactly("big", "x");
		}
	}

	/**
	 * Odd bodies on the list of priority 4 while the hash is lost: no header, a header
	 * naming another priority, "x" for the priority, a stored value not in the stored
	 * format; page and claim agree on each (left out and dropped), and the one with the
	 * right header is shown with its priority and taken.
	 */
	@Test
	void oddBodiesOnAListOfAPriorityAreLeftOutAsClaimDropsThem() {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			TopicKeys keys = store.keys("jobs");
			StringRedisTemplate redis = test.redis();
			store.send("jobs",
					List.of(message("good", 5, null, 4), withHeader("none", 6, 4, null), withHeader("other", 7, 4, "6"),
							withHeader("word", 8, 4, "x"), withHeader("spaced", 9, 4, " 4 "),
							message("raw", 10, null, 4)));
			Transitions.promote(store, "jobs", 10);
			redis.opsForHash().put(keys.messages(), "raw", "not the stored format");
			redis.delete(keys.priorities());
			MessagePage page = store.page("jobs", MessageState.READY, 0, 10);
			List<String> drained = drain(store, "jobs");
			System.out.printf("odd bodies, hash lost: page %s, drained %s%n",
					page.messages().stream().map((m) -> m.id() + "@" + m.priority()).toList(), drained);
			assertThat(page.messages()).extracting(MessageSummary::id).containsExactlyInAnyOrderElementsOf(drained);
			assertThat(page.messages()).filteredOn((m) -> m.id().equals("good"))
				.extracting(MessageSummary::priority)
				.containsExactly(4);
		}
	}

	/**
	 * Keys of the wrong type: the priorities hash a string fails stats and the page
	 * clearly (and claim alike); a list of a priority a string fails stats and the page
	 * clearly; no read writes (the keys are the same afterwards).
	 */
	@Test
	void keysOfTheWrongTypeFailTheReadsClearlyAndChangeNothing() {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			TopicKeys keys = store.keys("jobs");
			StringRedisTemplate redis = test.redis();
			store.send("jobs", List.of(message("a", 5, null, 4), message("b", 6, null, 0)));
			Transitions.promote(store, "jobs", 10);
			redis.delete(keys.priorities());
			redis.opsForValue().set(keys.priorities(), "not a hash");
			Map<String, String> before = dump(test, "jobs");
			assertThatException().isThrownBy(() -> store.stats("jobs")).withStackTraceContaining("WRONGTYPE");
			assertThatException().isThrownBy(() -> store.page("jobs", MessageState.READY, 0, 10))
				.withStackTraceContaining("WRONGTYPE");
			assertThat(dump(test, "jobs")).isEqualTo(before);
			redis.delete(keys.priorities());
			String list4 = keys.ready(4);
			redis.delete(list4);
			redis.opsForValue().set(list4, "not a list");
			before = dump(test, "jobs");
			assertThatException().isThrownBy(() -> store.stats("jobs")).withStackTraceContaining("WRONGTYPE");
			assertThatException().isThrownBy(() -> store.page("jobs", MessageState.READY, 0, 10))
				.withStackTraceContaining("WRONGTYPE");
			assertThat(dump(test, "jobs")).isEqualTo(before);
		}
	}

	/**
	 * Without priorities: one stats and one page call of an idle-ish topic run as few
	 * commands as the scripts before the change did (counted by hand from fc6175cd^:
	 * stats ran EXISTS and two HLEN of the priorities hash, now two EXISTS), and a topic
	 * of 1,500 groups still gets its oldest ready time.
	 */
	@Test
	void readsWithoutPrioritiesRunNoMoreCommandsAndManyGroupsStillGetTheirOldestReadyTime() {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			StringRedisTemplate redis = test.redis();
			store.send("plain", List.of(message("a", 5, null, 0), message("b", 6, null, 0)));
			Transitions.promote(store, "plain", 10);
			store.stats("plain");
			store.page("plain", MessageState.READY, 0, 10);
			Map<String, Long> before = commandCounts(redis);
			store.stats("plain");
			Map<String, Long> afterStats = commandCounts(redis);
			store.page("plain", MessageState.READY, 0, 10);
			Map<String, Long> afterPage = commandCounts(redis);
			Map<String, Long> statsCommands = diff(before, afterStats);
			Map<String, Long> pageCommands = diff(afterStats, afterPage);
			System.out.printf("no priorities: stats ran %s, page ran %s%n", statsCommands, pageCommands);
			assertThat(statsCommands.getOrDefault("hlen", 0L)).as("HLEN in stats").isLessThanOrEqualTo(4);
			assertThat(pageCommands.get("hstrlen")).as("HSTRLEN in page").isEqualTo(2);
			assertThat(pageCommands.get("hget")).as("HGET in page").isEqualTo(4);
			assertThat(statsCommands.values().stream().mapToLong(Long::longValue).sum()).as("commands in stats")
				.isLessThanOrEqualTo(STATS_COMMANDS_BEFORE);
			List<NewMessage> many = new ArrayList<>();
			for (int g = 0; g < 1500; g++) {
				many.add(message("g" + g, 1000 + g, "grp" + String.format("%04d", g), (g % 3 == 0) ? 0 : 1 + g % 9));
			}
			many.add(message("old", 400, "grp1499", 8));
			store.send("many", many);
			Transitions.promote(store, "many", 2000);
			redis.delete(store.keys("many").priorities());
			TopicStats stats = store.stats("many");
			System.out.printf("1500 groups, hash lost: oldest %d, ready %d%n", stats.oldestReadyDueMillis(),
					stats.ready());
			assertThat(stats.ready()).isEqualTo(1501);
			assertThat(stats.oldestReadyDueMillis()).isBetween(1000L, 2000L);
		}
	}

	/**
	 * A partitioned topic with the hash lost in one partition: the merged stats count by
	 * priority across partitions and the merged page shows every message claim takes.
	 */
	@Test
	void aPartitionedTopicsMergedStatsAndPagesShowWhatClaimTakesWhileOnePartitionLostItsHash() {
		try (TestStore test = TestStore.builder().partitions(Map.of("parts", 3)).build()) {
			RedisMessageStore store = test.store();
			List<NewMessage> messages = new ArrayList<>();
			for (int i = 0; i < 30; i++) {
				messages.add(message("p" + i, 10 + i, null, i % 10));
			}
			store.send("parts", messages);
			List<String> names = store.partitions().names("parts");
			for (String name : names) {
				Transitions.promote(store, name, 100);
			}
			test.redis().delete(store.keys(names.get(1)).priorities());
			TopicStats stats = store.stats("parts");
			MessagePage page = store.page("parts", MessageState.READY, 0, 100);
			System.out.printf("partitions, one hash lost: by priority %s, page %s%n", stats.readyByPriority(),
					page.messages().stream().map((m) -> m.id() + "@" + m.priority()).toList());
			Map<Integer, Long> expected = new TreeMap<>();
			for (int p = 0; p < 10; p++) {
				expected.put(p, 3L);
			}
			assertThat(stats.ready()).isEqualTo(30);
			assertThat(stats.readyByPriority()).isEqualTo(expected);
			assertThat(stats.oldestReadyDueMillis()).isEqualTo(10);
			assertThat(page.messages()).hasSize(30);
			assertThat(page.messages()).allMatch((m) -> m.priority() == Integer.parseInt(m.id().substring(1)) % 10);
			List<String> drained = new ArrayList<>();
			for (String name : names) {
				drained.addAll(drain(store, name));
			}
			assertThat(drained)
				.containsExactlyInAnyOrderElementsOf(page.messages().stream().map(MessageSummary::id).toList());
		}
	}

	/**
	 * Behind a proxy: a stats and a page call whose reply is held for 50 ms, then ones
	 * whose reply is dropped (Lettuce reconnects and runs the read again): the same
	 * answers, nothing written.
	 */
	@Test
	void delayedAndDroppedRepliesToStatsAndPagesGiveTheSameAnswers() {
		try (TestStore test = TestStore.builder().behindProxy().build()) {
			RedisMessageStore store = test.store();
			store.send("jobs", List.of(message("a", 5, null, 4), message("b", 6, "g", 2), message("c", 7, null, 0)));
			Transitions.promote(store, "jobs", 10);
			test.redis().delete(store.keys("jobs").priorities());
			TopicStats expectedStats = store.stats("jobs");
			List<String> expectedPage = ids(store.page("jobs", MessageState.READY, 0, 10));
			assertThat(expectedPage).containsExactlyInAnyOrder("a", "b", "c");
			Map<String, String> before = dump(test, "jobs");
			FaultyRedisProxy proxy = test.proxy();
			String marker = store.keys("jobs").messages();
			FaultyRedisProxy.Fault delay = proxy.delayNextReplyToCommand(
					FaultyRedisProxy.withArgumentContaining("EVALSHA", marker), Duration.ofMillis(50));
			assertThat(store.stats("jobs").readyByPriority()).isEqualTo(expectedStats.readyByPriority());
			assertThat(delay.hasFired()).isTrue();
			delay = proxy.delayNextReplyToCommand(FaultyRedisProxy.withArgumentContaining("EVALSHA", marker),
					Duration.ofMillis(50));
			assertThat(ids(store.page("jobs", MessageState.READY, 0, 10))).isEqualTo(expectedPage);
			assertThat(delay.hasFired()).isTrue();
			FaultyRedisProxy.Fault drop = proxy
				.dropNextReplyToCommand(FaultyRedisProxy.withArgumentContaining("EVALSHA", marker));
			TopicStats again = store.stats("jobs");
			assertThat(drop.hasFired()).isTrue();
			assertThat(again.readyByPriority()).isEqualTo(expectedStats.readyByPriority());
			assertThat(again.oldestReadyDueMillis()).isEqualTo(expectedStats.oldestReadyDueMillis());
			drop = proxy.dropNextReplyToCommand(FaultyRedisProxy.withArgumentContaining("EVALSHA", marker));
			assertThat(ids(store.page("jobs", MessageState.READY, 0, 10))).isEqualTo(expectedPage);
			assertThat(drop.hasFired()).isTrue();
			assertThat(dump(test, "jobs")).isEqualTo(before);
		}
	}

	private static NewMessage message(String id, long due, String group, int priority) {
		return withHeader(id, due, priority, (priority > 0) ? Integer.toString(priority) : null, group,
				id.getBytes(StandardCharsets.UTF_8));
	}

	private static NewMessage withHeader(String id, long due, int priority, String header) {
		return withHeader(id, due, priority, header, null, id.getBytes(StandardCharsets.UTF_8));
	}

	private static NewMessage huge(String id, long due, int priority) {
		byte[] payload = new byte[(1 << 20) + 100];
		Arrays.fill(payload, (byte) 'x');
		return withHeader(id, due, priority, null, null, payload);
	}

	private static NewMessage hugeNaming(String id, long due, int priority) {
		byte[] payload = new byte[(1 << 20) + 100];
		Arrays.fill(payload, (byte) 'x');
		return withHeader(id, due, priority, Integer.toString(priority), null, payload);
	}

	private static NewMessage withHeader(String id, long due, int priority, String header, String group,
			byte[] payload) {
		Map<String, String> headers = new HashMap<>();
		if (group != null) {
			headers.put(MessageFormat.GROUP_HEADER, group);
		}
		if (header != null) {
			headers.put(MessageFormat.PRIORITY_HEADER, header);
		}
		NewMessage message = new NewMessage(id, false, due, MessageFormat.encodeBody(headers, payload));
		if (priority > 0) {
			message = message.withPriority(priority);
		}
		return (group != null) ? message.inGroup(group) : message;
	}

	private static ClaimResult claim(RedisMessageStore store, String topic, int limit) {
		String consumer = LeaseTokens.newToken();
		return Transitions.claim(store, topic, consumer, consumer + ".1", limit, 0, LEASE, null, 0);
	}

	private static List<String> drain(RedisMessageStore store, String topic) {
		return Transitions.drain(store, topic, LEASE);
	}

	private static List<String> ids(MessagePage page) {
		return page.messages().stream().map(MessageSummary::id).toList();
	}

	private static List<String> lists(TestStore test, TopicKeys keys) {
		List<String> lists = new ArrayList<>();
		for (int p = 1; p <= 9; p++) {
			lists.add(keys.ready(p));
		}
		return lists.stream().filter((list) -> Boolean.TRUE.equals(test.redis().hasKey(list))).toList();
	}

	/** Every key of the topic with its type and DUMP-free digest (type, size). */
	private static Map<String, String> dump(TestStore test, String topic) {
		StringRedisTemplate redis = test.redis();
		Map<String, String> out = new TreeMap<>();
		for (String key : redis.keys(test.prefix() + "*")) {
			String type = redis.type(key).code();
			String value = switch (type) {
				case "hash" -> new TreeMap<>(redis.opsForHash().entries(key)).toString().hashCode() + "";
				case "list" -> redis.opsForList().range(key, 0, -1).toString();
				case "zset" -> redis.opsForZSet()
					.rangeWithScores(key, 0, -1)
					.stream()
					.map((t) -> t.getValue() + "=" + t.getScore())
					.toList()
					.toString();
				case "string" -> redis.opsForValue().get(key);
				default -> type;
			};
			out.put(key, type + ":" + value);
		}
		return out;
	}

	private static Map<String, Long> commandCounts(StringRedisTemplate redis) {
		Properties stats = redis
			.execute((RedisCallback<Properties>) (RedisConnection connection) -> connection.serverCommands()
				.info("commandstats"));
		Map<String, Long> counts = new LinkedHashMap<>();
		for (String name : stats.stringPropertyNames()) {
			String value = stats.getProperty(name);
			int at = value.indexOf("calls=") + 6;
			int end = value.indexOf(',', at);
			counts.put(name.replace("cmdstat_", ""), Long.parseLong(value.substring(at, end)));
		}
		return counts;
	}

	private static Map<String, Long> diff(Map<String, Long> before, Map<String, Long> after) {
		Map<String, Long> out = new TreeMap<>();
		after.forEach((name, calls) -> {
			long d = calls - before.getOrDefault(name, 0L);
			if (d > 0 && !name.equals("info")) {
				out.put(name, d);
			}
		});
		return out;
	}

}

package io.github.delayqueue.review;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

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
import io.github.delayqueue.testsupport.CommandStats;
import io.github.delayqueue.testsupport.OnOneServerVersion;
import io.github.delayqueue.testsupport.TestStore;
import io.github.delayqueue.testsupport.Transitions;
import org.junit.jupiter.api.Disabled;
import org.junit.jupiter.api.Test;

import org.springframework.core.io.ClassPathResource;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.script.DefaultRedisScript;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatException;

/**
 * Second adversarial review, of d9d8368c and c87d104f on a real Redis: stats.lua passes
 * over a ready-list id of another priority than its list's and a group member whose
 * message's stored due time is not the member's (read up to 64 KiB, 1 KiB since its
 * findings), reading a group's members of every rank at once while the topic uses no
 * priorities (rank 9 first since); page.lua leaves out an unread body without a
 * priorities entry on a list of a priority and gives a group member without an entry its
 * rank's priority. Attacks: the answers and command counts of topics without priorities
 * against the stats.lua of fc6175cd~1 (run by EVAL, a copy in this package's test
 * resources), odd member due times and bodies, prefixes of group names, pages across
 * lists, group members and partitions, stale copies and members checked against a drain
 * by claim, a delaying and a reply-dropping proxy.
 */
@OnOneServerVersion
class PrioritiesReadersSecondReviewTests {

	private static final Duration LEASE = Duration.ofMinutes(1);

	private static final String DIR = "io/github/delayqueue/store/redis/";

	private static final Pattern INCLUDE = Pattern.compile("(?m)^-- @include (\\S+)$");

	private static final String STATS_NOW = assemble(read(DIR + "stats.lua"));

	private static final String STATS_BEFORE = assemble(read("io/github/delayqueue/review/stats-before-fc6175cd.lua"));

	// 1. Regressions without priorities.

	/**
	 * A topic without priorities or groups (ready, scheduled, in flight, a cancelled and
	 * a rescheduled id left on the ready list) and topics with groups but no priorities
	 * (a paused group, a member whose message is gone, a stale member of the same due
	 * time): the reply of stats is the one of fc6175cd~1's stats.lua, but for the clock.
	 */
	@Test
	void statsWithoutPrioritiesAnswerAsTheScriptBeforeFc6175cd() {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			store.send("plain", List.of(message("e", 3, null, 0), message("f", 4, null, 0), message("a", 5, null, 0),
					message("b", 6, null, 0), message("d", 7, null, 0), message("c", 4_000_000_000_000L, null, 0)));
			Transitions.promote(store, "plain", 10);
			assertThat(store.cancel("plain", "e")).isTrue();
			store.reschedule("plain", "f", Duration.ofHours(1));
			assertThat(claimIds(store, "plain", 1)).containsExactly("a");
			compare(test, "plain", 6L);

			List<NewMessage> grouped = new ArrayList<>();
			for (int g = 0; g < 12; g++) {
				grouped.add(message("m" + g, 100 + g, "grp" + g, 0));
				grouped.add(message("n" + g, 50 + g, "grp" + g, 0));
			}
			grouped.add(message("x", 20, null, 0));
			grouped.add(message("gone", 1, "grp3", 0));
			grouped.add(message("same", 2, "grp4", 0));
			store.send("groups", grouped);
			Transitions.promote(store, "groups", 100);
			store.pauseGroup("groups", "grp0", null);
			test.redis().opsForHash().delete(store.keys("groups").messages(), "gone");
			assertThat(store.cancel("groups", "same")).isTrue();
			store.send("groups", List.of(message("same", 2, "grp4", 0)));
			Transitions.promote(store, "groups", 100);
			compare(test, "groups", 2L);
		}
	}

	/**
	 * Commands per stats call without priorities, before (fc6175cd~1) and now, for a
	 * topic of 0, 10 and 1,000 groups of one small ready message each: printed; now runs
	 * at most one command more a group (HSTRLEN and HGET for the HEXISTS of before), none
	 * more without groups.
	 */
	@Test
	void commandsPerStatsCallWithoutPrioritiesForZeroTenAndAThousandGroups() {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			for (int groups : new int[] { 0, 10, 1000 }) {
				String topic = "count" + groups;
				List<NewMessage> messages = new ArrayList<>();
				messages.add(message("plain", 5, null, 0));
				for (int g = 0; g < groups; g++) {
					messages.add(message("m" + g, 10 + g, "g" + g, 0));
				}
				store.send(topic, messages);
				Transitions.promote(store, topic, 2000);
				long[] before = commands(test, topic, STATS_BEFORE);
				long[] now = commands(test, topic, STATS_NOW);
				System.out.printf("stats commands without priorities, %d groups: before %d (%d µs), now %d (%d µs)%n",
						groups, before[0], before[1], now[0], now[1]);
				assertThat(now[0]).isLessThanOrEqualTo(before[0] + groups);
				assertThat(evalStats(test, topic, STATS_NOW).subList(1, 9))
					.isEqualTo(evalStats(test, topic, STATS_BEFORE).subList(1, 9));
			}
		}
	}

	/**
	 * The cost of reading the bodies: 300 groups whose first member's message is 60 KiB
	 * (no priorities): the first fix loaded each body (18 MB a call) where it ran
	 * HEXISTS; a body over 1 KiB is not loaded now. Times printed, not asserted (the
	 * machine is shared).
	 */
	@Test
	void statsLoadsTheBodyOfEachGroupsFirstMember() {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			List<NewMessage> messages = new ArrayList<>();
			for (int g = 0; g < 300; g++) {
				messages.add(sized("m" + g, 10 + g, "g" + g, 60 * 1024));
			}
			store.send("fat", messages);
			Transitions.promote(store, "fat", 1000);
			long[] before = commands(test, "fat", STATS_BEFORE);
			long[] now = commands(test, "fat", STATS_NOW);
			System.out.printf("300 groups of 60 KiB bodies: before %d commands %d µs, now %d commands %d µs%n",
					before[0], before[1], now[0], now[1]);
			assertThat(evalStats(test, "fat", STATS_NOW).get(6)).isEqualTo("10");
			evalStats(test, "fat", STATS_NOW);
			long hgetBefore = hgetCalls(test);
			evalStats(test, "fat", STATS_NOW);
			assertThat(hgetCalls(test) - hgetBefore).as("message bodies loaded by one stats call").isLessThan(10);
		}
	}

	/**
	 * Without priorities (no hash, no list of a priority), group g holds 12 stale members
	 * of rank 2 (messages of priority 7 cancelled while ready, not yet dropped by a
	 * claim) ahead of the member of its ready message "ok" of priority 0. The all-ranks
	 * read of the first fix took g's first 10 members, all stale, and stats reported no
	 * oldest ready time, while fc6175cd~1 (rank 9 read apart) reported 100 and claim
	 * takes "ok"; rank 9 is read first again.
	 */
	@Test
	void staleMembersOfAnotherRankDoNotHideAGroupsReadyMessageWithoutPriorities() {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			List<NewMessage> messages = new ArrayList<>();
			for (int i = 0; i < 12; i++) {
				messages.add(message("s" + i, 1 + i, "g", 7));
			}
			store.send("jobs", messages);
			Transitions.promote(store, "jobs", 100);
			for (int i = 0; i < 12; i++) {
				assertThat(store.cancel("jobs", "s" + i)).isTrue();
			}
			store.send("jobs", List.of(message("ok", 100, "g", 0)));
			Transitions.promote(store, "jobs", 100);
			assertThat(test.redis().hasKey(store.keys("jobs").priorities())).isFalse();
			assertThat(evalStats(test, "jobs", STATS_BEFORE).get(6)).isEqualTo("100");
			TopicStats stats = store.stats("jobs");
			System.out.printf("12 stale rank-2 members ahead: oldest %d, ready %d%n", stats.oldestReadyDueMillis(),
					stats.ready());
			assertThat(drain(store, "jobs")).containsExactly("ok");
			assertThat(stats.oldestReadyDueMillis()).isEqualTo(100);
		}
	}

	// 2. Member due times and bodies.

	/**
	 * A grouped message due before the epoch (its member holds 0): stats report 0, the
	 * member's time, as before; the message is taken.
	 */
	@Test
	void aMemberDueBeforeTheEpochCountsAsDueAtZero() {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			store.send("jobs", List.of(message("early", -5000, "g", 0), message("later", 50, "h", 0)));
			Transitions.promote(store, "jobs", 10);
			TopicStats stats = store.stats("jobs");
			assertThat(stats.oldestReadyDueMillis()).isEqualTo(0);
			assertThat(evalStats(test, "jobs", STATS_BEFORE).get(6)).isEqualTo("0");
			assertThat(drain(store, "jobs")).containsExactlyInAnyOrder("early", "later");
		}
	}

	/**
	 * A message due at -1 (before the epoch) on the ready list: stats report -1 as its
	 * oldest ready time, which reads as "no ready message" (pre-existing).
	 */
	@Test
	@Disabled("finding (low, pre-existing, ops view only): a ready message due at -1 ms (before the epoch, on a list) "
			+ "makes stats report oldest ready -1, the value for none, while one message is ready")
	void aReadyMessageDueAtMinusOneIsNotReportedAsNone() {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			store.send("jobs", List.of(message("a", -1, null, 0)));
			Transitions.promote(store, "jobs", 10);
			TopicStats stats = store.stats("jobs");
			assertThat(stats.ready()).isEqualTo(1);
			assertThat(stats.oldestReadyDueMillis()).isNotEqualTo(-1);
		}
	}

	/**
	 * Members whose message's header is unreadable, whose message is gone, or whose group
	 * is paused are passed over (claim takes none of them), and the next group's time is
	 * found.
	 */
	@Test
	void membersWithAnUnreadableHeaderAGoneMessageOrAPausedGroupArePassedOver() {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			TopicKeys keys = store.keys("jobs");
			store.send("jobs", List.of(message("bad", 1, "a", 0), message("gone", 2, "b", 0),
					message("held", 3, "c", 0), message("ok", 40, "d", 0)));
			Transitions.promote(store, "jobs", 10);
			test.redis().opsForHash().put(keys.messages(), "bad", "no header at all");
			test.redis().opsForHash().delete(keys.messages(), "gone");
			store.pauseGroup("jobs", "c", null);
			assertThat(store.stats("jobs").oldestReadyDueMillis()).isEqualTo(40);
			assertThat(drain(store, "jobs")).containsExactly("ok");
		}
	}

	/**
	 * A stale member (due 5, left by a cancel) and the message's new member (due 50) in
	 * the same group, the stored message exactly 1,024 bytes: read, the stale member is
	 * passed over (oldest 50); at 1,025 bytes it is not read and counts (oldest 5, as
	 * documented).
	 */
	@Test
	void aStaleMemberIsPassedOverUpTo1KiBAndCountsAbove() {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			TopicKeys keys = store.keys("jobs");
			store.send("jobs", List.of(message("a", 5, "g", 0)));
			Transitions.promote(store, "jobs", 10);
			assertThat(store.cancel("jobs", "a")).isTrue();
			store.send("jobs", List.of(message("a", 50, "g", 0)));
			Transitions.promote(store, "jobs", 10);
			assertThat(test.redis().opsForZSet().zCard(keys.groupReady())).isEqualTo(2);
			assertThat(store.stats("jobs").oldestReadyDueMillis()).isEqualTo(50);
			String stored = (String) test.redis().opsForHash().get(keys.messages(), "a");
			test.redis().opsForHash().put(keys.messages(), "a", padTo(stored, 1024));
			assertThat(test.redis().opsForHash().lengthOfValue(keys.messages(), "a")).isEqualTo(1024);
			assertThat(store.stats("jobs").oldestReadyDueMillis()).isEqualTo(50);
			test.redis().opsForHash().put(keys.messages(), "a", padTo(stored, 1025));
			assertThat(store.stats("jobs").oldestReadyDueMillis()).isEqualTo(5);
			assertThat(drain(store, "jobs")).containsExactly("a");
		}
	}

	/**
	 * Group "g" has only a stale member; "g1" (whose name "g" prefixes) and "g " and "g!"
	 * (names just above "g\1") hold older messages but are paused: the all-ranks read of
	 * "g" does not reach their members.
	 */
	@Test
	void theAllRanksReadOfAGroupDoesNotReachAGroupItsNamePrefixes() {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			store.send("jobs", List.of(message("own", 500, "g", 0), message("p1", 1, "g1", 0),
					message("p2", 2, "g ", 0), message("p3", 3, "g!", 0), message("p4", 4, "g\u00e9", 0)));
			Transitions.promote(store, "jobs", 10);
			for (String group : List.of("g1", "g ", "g!", "g\u00e9")) {
				store.pauseGroup("jobs", group, null);
			}
			assertThat(store.stats("jobs").oldestReadyDueMillis()).isEqualTo(500);
			assertThat(drain(store, "jobs")).containsExactly("own");
		}
	}

	// 3. Pages.

	/**
	 * Group members of ranks 2 and 7 (priorities 7 and 2) with the hash and without: each
	 * shown with its priority, in claim's order within the group, and drained in that
	 * order.
	 */
	@Test
	void groupMembersArePagedWithTheirPriorityWithAndWithoutTheHash() {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			store.send("jobs", List.of(message("low", 5, "g", 2), message("high", 6, "g", 7),
					message("zero", 4, "g", 0), message("list", 9, null, 3)));
			Transitions.promote(store, "jobs", 10);
			List<String> withHash = idsAndPriorities(store.page("jobs", MessageState.READY, 0, 10));
			test.redis().delete(store.keys("jobs").priorities());
			List<String> withoutHash = idsAndPriorities(store.page("jobs", MessageState.READY, 0, 10));
			System.out.printf("group members paged: with hash %s, without %s%n", withHash, withoutHash);
			assertThat(withHash).containsExactly("list@3", "high@7", "low@2", "zero@0");
			assertThat(withoutHash).isEqualTo(withHash);
			assertThat(drain(store, "jobs")).containsExactly("list", "high", "low", "zero");
		}
	}

	/**
	 * A grouped message of priority 7 cancelled while ready and sent again in the same
	 * group with priority 2 and the same due time: its stale member (rank 2) sorts before
	 * its new one (rank 7). With the hash intact the page shows it with priority 2; with
	 * the hash lost it shows the stale member's rank, 7, while claim reads 2 from the
	 * body.
	 */
	@Test
	@Disabled("finding (low, ops view only): page.lua takes a group's members as they sort and checks none against "
			+ "its message: a message re-sent in its group with a lower priority (7 -> 2, same due) is shown at its "
			+ "stale rank-2 member's place, before b@4, though claim takes b first ([a@2, b@4] with the hash; "
			+ "[a@7, b@4] with the hash lost, the stale rank's priority, while claim reads 2 from the body)")
	void aStaleMemberOfAnotherRankIsNotShownAheadOfWhatClaimTakesFirst() {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			store.send("jobs", List.of(message("a", 5, "g", 7), message("b", 6, "g", 4)));
			Transitions.promote(store, "jobs", 10);
			assertThat(store.cancel("jobs", "a")).isTrue();
			store.send("jobs", List.of(message("a", 5, "g", 2)));
			Transitions.promote(store, "jobs", 10);
			List<String> withHash = idsAndPriorities(store.page("jobs", MessageState.READY, 0, 10));
			test.redis().delete(store.keys("jobs").priorities());
			List<String> withoutHash = idsAndPriorities(store.page("jobs", MessageState.READY, 0, 10));
			System.out.printf("stale member of rank 2: with hash %s, without %s%n", withHash, withoutHash);
			assertThat(drain(store, "jobs")).containsExactly("b", "a");
			assertThat(withHash).containsExactly("b@4", "a@2");
			assertThat(withoutHash).containsExactly("b@4", "a@2");
		}
	}

	/**
	 * Pages of one message at each offset, walking from the lists of priorities through
	 * the ready list into the group ready set: the walk is the whole page, each id once.
	 */
	@Test
	void aWalkOfOneMessagePagesCrossesFromTheListsIntoTheGroupReadySet() {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			store.send("jobs",
					List.of(message("p9", 5, null, 9), message("p3", 6, null, 3), message("p0", 7, null, 0),
							message("q0", 8, null, 0), message("ga", 9, "a", 5), message("gb", 10, "a", 0),
							message("hb", 11, "b", 1)));
			Transitions.promote(store, "jobs", 10);
			MessagePage whole = store.page("jobs", MessageState.READY, 0, 20);
			List<String> walk = new ArrayList<>();
			for (int offset = 0; offset < 9; offset++) {
				walk.addAll(idsAndPriorities(store.page("jobs", MessageState.READY, offset, 1)));
			}
			List<String> pairs = new ArrayList<>();
			for (int offset = 0; offset < 9; offset += 2) {
				pairs.addAll(idsAndPriorities(store.page("jobs", MessageState.READY, offset, 2)));
			}
			assertThat(whole.total()).isEqualTo(7);
			assertThat(idsAndPriorities(whole)).containsExactly("p9@9", "p3@3", "p0@0", "q0@0", "ga@5", "gb@0", "hb@1");
			assertThat(walk).isEqualTo(idsAndPriorities(whole));
			assertThat(pairs).isEqualTo(idsAndPriorities(whole));
		}
	}

	/**
	 * A topic of three partitions with ready messages of priorities and groups: the
	 * merged page holds every message claim takes, each once, and a walk by one-message
	 * pages gives the same as the whole page.
	 */
	@Test
	void aPartitionedTopicsMergedPageAndItsWalkShowEachMessageOnce() {
		try (TestStore test = TestStore.builder().partitions(Map.of("parts", 3)).build()) {
			RedisMessageStore store = test.store();
			List<NewMessage> messages = new ArrayList<>();
			for (int i = 0; i < 24; i++) {
				messages.add(message("p" + i, 10 + i, (i % 4 == 0) ? "g" + (i % 3) : null, i % 10));
			}
			store.send("parts", messages);
			List<String> names = store.partitions().names("parts");
			for (String name : names) {
				Transitions.promote(store, name, 100);
			}
			// A stale copy in each partition: cancelled while ready, sent again with
			// another priority.
			for (int i = 1; i < 24; i += 5) {
				assertThat(store.cancel("parts", "p" + i)).isTrue();
			}
			List<NewMessage> again = new ArrayList<>();
			for (int i = 1; i < 24; i += 5) {
				again.add(message("p" + i, 10 + i, null, (i + 3) % 10));
			}
			store.send("parts", again);
			for (String name : names) {
				Transitions.promote(store, name, 100);
			}
			MessagePage whole = store.page("parts", MessageState.READY, 0, 100);
			List<String> walk = new ArrayList<>();
			for (int offset = 0; offset < 30; offset++) {
				walk.addAll(ids(store.page("parts", MessageState.READY, offset, 1)));
			}
			System.out.printf("merged page %s%nwalk %s%n", idsAndPriorities(whole), walk);
			assertThat(new HashSet<>(ids(whole))).hasSize(24);
			assertThat(walk).isEqualTo(ids(whole));
			List<String> drained = new ArrayList<>();
			for (String name : names) {
				drained.addAll(drain(store, name));
			}
			assertThat(drained).containsExactlyInAnyOrderElementsOf(ids(whole));
		}
	}

	// 4. Stale copies with the hash intact, and lost.

	/**
	 * Stale copies with the hash intact: cancelled or rescheduled while ready, sent again
	 * with another priority, due time or group; the page, stats' ready count and oldest
	 * ready time agree with a drain by claim, with the hash intact and then lost.
	 */
	@Test
	void staleCopiesAgreeWithADrainWithTheHashIntactAndLost() {
		try (TestStore test = TestStore.create()) {
			for (boolean lose : new boolean[] { false, true }) {
				RedisMessageStore store = test.store();
				String topic = lose ? "lost" : "intact";
				store.send(topic, List.of(message("a", 5, null, 4), message("b", 6, null, 0), message("c", 7, "g", 3),
						message("d", 8, "g", 0), message("e", 9, null, 6), message("f", 30, null, 2)));
				Transitions.promote(store, topic, 10);
				assertThat(store.cancel(topic, "a")).isTrue();
				assertThat(store.cancel(topic, "c")).isTrue();
				store.reschedule(topic, "e", Duration.ofMillis(1));
				store.send(topic, List.of(message("a", 40, null, 0), message("c", 41, "h", 6)));
				Transitions.promote(store, topic, 10);
				await(store, topic);
				if (lose) {
					test.redis().delete(store.keys(topic).priorities());
				}
				TopicStats stats = store.stats(topic);
				MessagePage page = store.page(topic, MessageState.READY, 0, 20);
				Map<String, Long> dueOf = new HashMap<>();
				List<String> drained = new ArrayList<>();
				for (int k = 0; k < 20; k++) {
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
				System.out.printf("stale copies (%s): page %s, drained %s, ready %d, oldest %d%n", topic,
						idsAndPriorities(page), drained, stats.ready(), stats.oldestReadyDueMillis());
				assertThat(ids(page)).containsExactlyInAnyOrderElementsOf(drained);
				assertThat(stats.ready()).isEqualTo(drained.size());
				assertThat(stats.oldestReadyDueMillis())
					.isEqualTo(dueOf.values().stream().mapToLong(Long::longValue).min().orElse(-1));
			}
		}
	}

	/**
	 * A grouped message cancelled while ready and sent again with the same due time into
	 * another group, which is paused: its stale member in the first group still matches
	 * the stored due time, so stats count it as ready, while claim drops it (its groups
	 * entry names the paused group) and holds the message back.
	 */
	@Test
	@Disabled("finding (low, ops view only): stats' stale-member check compares the due time only; a message "
			+ "cancelled in group g and sent again with the same due time in paused group h is reported as the "
			+ "oldest ready (5) through its stale member in g, while claim drops that member and takes nothing "
			+ "(a paused group's messages are documented as passed over); QueueModel.oldestReadyDue checks the "
			+ "due time only too")
	void aStaleMemberOfTheSameDueTimeInAnotherGroupDoesNotCount() {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			store.send("jobs", List.of(message("a", 5, "g", 0)));
			Transitions.promote(store, "jobs", 10);
			assertThat(store.cancel("jobs", "a")).isTrue();
			store.pauseGroup("jobs", "h", null);
			store.send("jobs", List.of(message("a", 5, "h", 0)));
			Transitions.promote(store, "jobs", 10);
			TopicStats stats = store.stats("jobs");
			System.out.printf("stale member in g, message paused in h: oldest %d%n", stats.oldestReadyDueMillis());
			assertThat(drain(store, "jobs")).isEmpty();
			assertThat(stats.oldestReadyDueMillis()).isEqualTo(-1);
		}
	}

	/**
	 * With priorities, the hash intact: a grouped message sent again into its group with
	 * another priority and the same due time, then the group paused: both its members
	 * (stale rank 2, new rank 7) are passed over, and the list's message gives the time.
	 */
	@Test
	void aStaleMemberOfAMessageInFlightIsPassedOver() {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			store.send("jobs", List.of(message("a", 5, "g", 7), message("z", 60, null, 1)));
			Transitions.promote(store, "jobs", 10);
			assertThat(store.cancel("jobs", "a")).isTrue();
			store.send("jobs", List.of(message("a", 5, "g", 2)));
			Transitions.promote(store, "jobs", 10);
			store.pauseGroup("jobs", "g", null);
			assertThat(store.stats("jobs").oldestReadyDueMillis()).isEqualTo(60);
		}
	}

	/**
	 * The priorities hash a string while the only ready messages are in groups (no id on
	 * a list): claim and the page fail with WRONGTYPE; stats, which reads the hash only
	 * for a list's waiting id, answers.
	 */
	@Test
	void aPrioritiesHashOfTheWrongTypeFailsStatsWithGroupedMessagesOnly() {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			TopicKeys keys = store.keys("jobs");
			store.send("jobs", List.of(message("a", 5, "g", 4)));
			Transitions.promote(store, "jobs", 10);
			test.redis().delete(keys.priorities());
			test.redis().opsForValue().set(keys.priorities(), "not a hash");
			assertThatException().isThrownBy(() -> store.page("jobs", MessageState.READY, 0, 10))
				.withStackTraceContaining("WRONGTYPE");
			assertThatException().isThrownBy(() -> claim(store, "jobs", 10)).withStackTraceContaining("WRONGTYPE");
			assertThatException().isThrownBy(() -> store.stats("jobs")).withStackTraceContaining("WRONGTYPE");
		}
	}

	// 5. Proxies.

	/**
	 * Behind a proxy, with groups of several ranks, a stale member and the hash lost: a
	 * stats and a page call whose reply is held 50 ms, then ones whose reply is dropped
	 * (run again after the reconnect): the same answers, nothing written.
	 */
	@Test
	void delayedAndDroppedRepliesGiveTheSameAnswersAndWriteNothing() {
		try (TestStore test = TestStore.builder().behindProxy().build()) {
			RedisMessageStore store = test.store();
			store.send("jobs", List.of(message("a", 5, "g", 4), message("b", 6, "g", 0), message("c", 7, null, 2),
					message("d", 8, "h", 9)));
			Transitions.promote(store, "jobs", 10);
			assertThat(store.cancel("jobs", "b")).isTrue();
			store.send("jobs", List.of(message("b", 60, "g", 0)));
			Transitions.promote(store, "jobs", 10);
			test.redis().delete(store.keys("jobs").priorities());
			TopicStats expected = store.stats("jobs");
			List<String> expectedPage = idsAndPriorities(store.page("jobs", MessageState.READY, 0, 10));
			Map<String, String> before = dump(test);
			FaultyRedisProxy proxy = test.proxy();
			String marker = store.keys("jobs").messages();
			for (int round = 0; round < 2; round++) {
				FaultyRedisProxy.Fault fault = (round == 0)
						? proxy.delayNextReplyToCommand(FaultyRedisProxy.withArgumentContaining("EVALSHA", marker),
								Duration.ofMillis(50))
						: proxy.dropNextReplyToCommand(FaultyRedisProxy.withArgumentContaining("EVALSHA", marker));
				TopicStats again = store.stats("jobs");
				assertThat(fault.hasFired()).isTrue();
				assertThat(withoutClock(again)).isEqualTo(withoutClock(expected));
				fault = (round == 0)
						? proxy.delayNextReplyToCommand(FaultyRedisProxy.withArgumentContaining("EVALSHA", marker),
								Duration.ofMillis(50))
						: proxy.dropNextReplyToCommand(FaultyRedisProxy.withArgumentContaining("EVALSHA", marker));
				assertThat(idsAndPriorities(store.page("jobs", MessageState.READY, 0, 10))).isEqualTo(expectedPage);
				assertThat(fault.hasFired()).isTrue();
			}
			assertThat(dump(test)).isEqualTo(before);
		}
	}

	// Helpers.

	private static void compare(TestStore test, String topic, long oldest) {
		List<Object> before = evalStats(test, topic, STATS_BEFORE);
		List<Object> now = evalStats(test, topic, STATS_NOW);
		System.out.printf("%s: before %s%n%s: now    %s%n", topic, before, topic, now);
		assertThat(now.subList(1, now.size())).isEqualTo(before.subList(1, before.size()));
		assertThat(now.get(6)).isEqualTo(Long.toString(oldest));
		assertThat(test.store().stats(topic).oldestReadyDueMillis()).isEqualTo(oldest);
	}

	private static long hgetCalls(TestStore test) {
		java.util.Properties info = test.redis()
			.execute((org.springframework.data.redis.core.RedisCallback<java.util.Properties>) (
					connection) -> connection.serverCommands().info("commandstats"));
		String value = info.getProperty("cmdstat_hget", "calls=0,");
		int at = value.indexOf("calls=") + 6;
		return Long.parseLong(value.substring(at, value.indexOf(',', at)));
	}

	/** Commands (the script call left out) and script µs of one stats call. */
	private static long[] commands(TestStore test, String topic, String script) {
		evalStats(test, topic, script);
		CommandStats before = CommandStats.of(test.redis());
		evalStats(test, topic, script);
		CommandStats after = CommandStats.of(test.redis());
		return new long[] { after.otherCalls() - before.otherCalls(), after.scriptMicros() - before.scriptMicros() };
	}

	@SuppressWarnings({ "rawtypes", "unchecked" })
	private static List<Object> evalStats(TestStore test, String topic, String script) {
		TopicKeys keys = test.store().keys(topic);
		List<String> k = new ArrayList<>(List.of(keys.messages(), keys.scheduled(), keys.ready(), keys.inFlight(),
				keys.dead(), keys.priorities()));
		for (int p = 1; p <= 9; p++) {
			k.add(keys.ready(p));
		}
		k.addAll(List.of(keys.remembered(), keys.groups(), keys.groupReady(), keys.groupCounts(), keys.groupTags(),
				keys.groupRotation(), keys.groupSlots(), keys.groupPauses()));
		List reply = test.redis().execute(new DefaultRedisScript<>(script, List.class), k, "1000");
		List<Object> out = new ArrayList<>();
		for (Object value : reply) {
			out.add(String.valueOf(value));
		}
		return out;
	}

	private static String assemble(String body) {
		StringBuilder text = new StringBuilder();
		text.append(read(DIR + "server_clock.lua")).append('\n');
		text.append(read(DIR + "publish_signal.lua")).append('\n');
		text.append(read(DIR + "common.lua")).append('\n');
		Set<String> added = new HashSet<>();
		for (String helper : includes(body)) {
			addHelper(helper, added, text);
		}
		return text.append(body).toString();
	}

	private static void addHelper(String helper, Set<String> added, StringBuilder text) {
		if (!added.add(helper)) {
			return;
		}
		String source = read(DIR + "include/" + helper + ".lua");
		for (String inner : includes(source)) {
			addHelper(inner, added, text);
		}
		text.append(source).append('\n');
	}

	private static List<String> includes(String source) {
		List<String> names = new ArrayList<>();
		Matcher matcher = INCLUDE.matcher(source);
		while (matcher.find()) {
			names.add(matcher.group(1));
		}
		return names;
	}

	private static String read(String path) {
		try {
			return new ClassPathResource(path).getContentAsString(StandardCharsets.UTF_8);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	private static String padTo(String stored, int length) {
		StringBuilder out = new StringBuilder(stored);
		while (out.length() < length) {
			out.append('x');
		}
		return out.toString();
	}

	private static NewMessage message(String id, long due, String group, int priority) {
		return build(id, due, group, priority, id.getBytes(StandardCharsets.UTF_8));
	}

	private static NewMessage sized(String id, long due, String group, int size) {
		byte[] payload = new byte[size];
		Arrays.fill(payload, (byte) 'x');
		return build(id, due, group, 0, payload);
	}

	private static NewMessage build(String id, long due, String group, int priority, byte[] payload) {
		Map<String, String> headers = new HashMap<>();
		if (group != null) {
			headers.put(MessageFormat.GROUP_HEADER, group);
		}
		if (priority > 0) {
			headers.put(MessageFormat.PRIORITY_HEADER, Integer.toString(priority));
		}
		NewMessage message = new NewMessage(id, false, due, MessageFormat.encodeBody(headers, payload));
		if (priority > 0) {
			message = message.withPriority(priority);
		}
		return (group != null) ? message.inGroup(group) : message;
	}

	/** Waits until no message of the topic is scheduled any more, promoting. */
	private static void await(RedisMessageStore store, String topic) {
		org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> {
			Transitions.promote(store, topic, 100);
			return store.stats(topic).scheduled() == 0;
		});
	}

	private static ClaimResult claim(RedisMessageStore store, String topic, int limit) {
		String consumer = LeaseTokens.newToken();
		return Transitions.claim(store, topic, consumer, consumer + ".1", limit, 0, LEASE, null, 0);
	}

	private static List<String> claimIds(RedisMessageStore store, String topic, int limit) {
		return claim(store, topic, limit).messages().stream().map(ClaimedMessage::id).toList();
	}

	private static List<String> drain(RedisMessageStore store, String topic) {
		return Transitions.drain(store, topic, LEASE);
	}

	private static List<String> ids(MessagePage page) {
		return page.messages().stream().map(MessageSummary::id).toList();
	}

	private static List<String> idsAndPriorities(MessagePage page) {
		return page.messages().stream().map((m) -> m.id() + "@" + m.priority()).toList();
	}

	private static String withoutClock(TopicStats stats) {
		return stats.toString().replaceFirst("nowMillis=\\d+", "");
	}

	private static Map<String, String> dump(TestStore test) {
		StringRedisTemplate redis = test.redis();
		Map<String, String> out = new TreeMap<>();
		for (String key : redis.keys(test.prefix() + "*")) {
			String type = redis.type(key).code();
			String value = switch (type) {
				case "hash" -> new TreeMap<>(redis.opsForHash().entries(key)).toString();
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

}

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
import io.github.delayqueue.testsupport.TestStore;
import io.github.delayqueue.testsupport.Transitions;
import org.junit.jupiter.api.Disabled;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Adversarial review of groups, step 1 (the scripts), on a real Redis: the bookkeeping of
 * the group keys ({@code g}, {@code gq}, {@code gn}, {@code gv}, {@code ga}) across every
 * transition, the fairness of the rotation, keys lost or of the wrong type.
 */
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
	@Test
	void aDeadLetterSentThroughTheStoreWithAGroupIsReplayedIntoItsGroup() {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			store.send(TOPIC, List.of(due("a", 1).inGroup("g")));
			Transitions.promote(store, TOPIC, 1000);
			ClaimedMessage claimed = Transitions.claim(store, TOPIC, 1, MINUTE).get(0);
			assertThat(Transitions.deadLetter(store, TOPIC, "a", claimed.leaseToken(), "failed")).isTrue();
			assertThat(store.replayDead(TOPIC, List.of("a")).replayed()).containsExactly("a");
			assertThat(test.redis().opsForHash().get(store.keys(TOPIC).groups(), "a")).isEqualTo("g");
		}
	}

	// ---- Lost keys: what happens (the design defers a recount to step 5)
	// -----------------

	/**
	 * A lost {@code gn} (deleted, or moved aside as of the wrong type): claims skip the
	 * rotation while it is empty, so every ready message of a group waits; once a promote
	 * counts one new message, the groups of the rotation are served once and leave it
	 * (their count is read as 0), their other ready messages stranded.
	 */
	@Test
	@Disabled("Known: a lost gn strands the groups' ready messages until a recount (design, step 5); run by hand")
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
	@Disabled("Known: a lost gq strands the groups' ready messages; no recount rebuilds gq from g (design, step 5)")
	void readyMessagesOfGroupsAreClaimedAfterTheGroupReadySetWasLost() {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			store.send(TOPIC, List.of(due("a", 1).inGroup("g")));
			Transitions.promote(store, TOPIC, 1000);
			test.redis().delete(store.keys(TOPIC).groupReady());
			assertThat(drain(store)).containsExactly("a");
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

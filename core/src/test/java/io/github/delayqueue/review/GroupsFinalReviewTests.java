package io.github.delayqueue.review;

import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;

import io.github.delayqueue.convert.JsonPayloadConverter;
import io.github.delayqueue.group.DelayQueueGroups;
import io.github.delayqueue.listener.DelayListenerEndpoint;
import io.github.delayqueue.listener.DelayListenerEndpointRegistry;
import io.github.delayqueue.listener.Delivery;
import io.github.delayqueue.listener.LatePolicy;
import io.github.delayqueue.listener.ListenerSettings;
import io.github.delayqueue.producer.DelayMessage;
import io.github.delayqueue.producer.SendResult;
import io.github.delayqueue.runtime.DelayQueueRuntime;
import io.github.delayqueue.runtime.broker.BrokerSettings;
import io.github.delayqueue.store.ClaimResult;
import io.github.delayqueue.store.ClaimedMessage;
import io.github.delayqueue.store.GroupWait;
import io.github.delayqueue.store.GroupWeights;
import io.github.delayqueue.store.LeaseTokens;
import io.github.delayqueue.store.MessageFormat;
import io.github.delayqueue.store.NewMessage;
import io.github.delayqueue.store.RateLimit;
import io.github.delayqueue.store.ReplayResult;
import io.github.delayqueue.store.TopicPartitions;
import io.github.delayqueue.store.WriteGate;
import io.github.delayqueue.store.redis.RedisMessageStore;
import io.github.delayqueue.store.redis.TopicKeys;
import io.github.delayqueue.testsupport.OnOneServerVersion;
import io.github.delayqueue.testsupport.PartitionApps;
import io.github.delayqueue.testsupport.TestStore;
import io.github.delayqueue.testsupport.Transitions;
import io.github.delayqueue.time.RetryBackoff;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Disabled;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.util.ReflectionUtils;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The final adversarial review of groups (issue 38) where they meet features the earlier
 * reviews left alone: a change of a topic's number of partitions under per-group paces,
 * pauses, strict waits and slots; deduplication windows of grouped ids across groups,
 * dead letters and replacing sends of a message waiting in strict order; what else than a
 * higher priority passes a message waiting in strict order. On a real Redis, through the
 * store's port, moving messages by hand.
 */
@OnOneServerVersion
class GroupsFinalReviewTests {

	private static final String TOPIC = "jobs";

	private static final Duration MINUTE = Duration.ofMinutes(1);

	private static final Duration HOUR = Duration.ofHours(1);

	private static final Duration TIMEOUT = Duration.ofSeconds(10);

	/** One message of a group every two seconds. */
	private static final RateLimit PACE = new RateLimit(1, Duration.ofSeconds(2));

	/** One message of a group a second. */
	private static final RateLimit ONE_A_SECOND = new RateLimit(1, Duration.ofSeconds(1));

	// ---------------------------------------------------------------- partition count
	// changes

	/**
	 * A group of a topic of 4 partitions limited to one message a second has one message
	 * claimed and acknowledged in partition 2; its pace is kept in partition 2 only (its
	 * {@code gr} and, as a pause, its {@code gp}). Going down to one partition, which
	 * moves the group to partition 0, is refused while that pace lasts, so the group's
	 * next message, in partition 0, starts a second after the first at the earliest.
	 */
	@Test
	void aGroupsPaceHoldsWhenTheTopicGoesDownToOnePartition() {
		try (PartitionApps apps = new PartitionApps()) {
			RedisMessageStore four = apps.store(4, TIMEOUT);
			String group = groupIn(four, 2);
			String p2 = four.partitions().nameForGroup(PartitionApps.TOPIC, group);
			four.send(PartitionApps.TOPIC, List.of(grouped("first", group)));
			ClaimedMessage first = single(claim(four, p2, 0, ONE_A_SECOND));
			assertThat(Transitions.ack(four, p2, first.id(), first.leaseToken())).isTrue();

			RedisMessageStore one = apps.store(1, TIMEOUT);
			sendOnceTheCountMayChange(one, grouped("second", group));
			assertThat(one.partitions().nameForGroup(PartitionApps.TOPIC, group)).isEqualTo(PartitionApps.TOPIC);
			ClaimedMessage second = await().atMost(Duration.ofSeconds(3))
				.until(() -> claim(one, PartitionApps.TOPIC, 0, ONE_A_SECOND).messages(),
						(claimed) -> !claimed.isEmpty())
				.get(0);
			assertThat(Duration.between(first.claimedAt(), second.claimedAt())).as("the group's pace across the change")
				.isGreaterThanOrEqualTo(Duration.ofMillis(999));
		}
	}

	/**
	 * The same going up: the group's pace, kept in partition 0 of a topic of one
	 * partition, holds the change to 4 off while it lasts (the group moves to partition
	 * 2, which would know no pace of it).
	 */
	@Test
	void aGroupsPaceHoldsWhenTheTopicGoesUpFromOnePartition() {
		try (PartitionApps apps = new PartitionApps()) {
			RedisMessageStore one = apps.store(1, TIMEOUT);
			RedisMessageStore fourLater = apps.store(4, TIMEOUT);
			String group = groupIn(fourLater, 2);
			one.send(PartitionApps.TOPIC, List.of(grouped("first", group)));
			ClaimedMessage first = single(claim(one, PartitionApps.TOPIC, 0, ONE_A_SECOND));
			assertThat(Transitions.ack(one, PartitionApps.TOPIC, first.id(), first.leaseToken())).isTrue();

			sendOnceTheCountMayChange(fourLater, grouped("second", group));
			String p2 = fourLater.partitions().nameForGroup(PartitionApps.TOPIC, group);
			assertThat(p2).isNotEqualTo(PartitionApps.TOPIC);
			ClaimedMessage second = await().atMost(Duration.ofSeconds(3))
				.until(() -> claim(fourLater, p2, 0, ONE_A_SECOND).messages(), (claimed) -> !claimed.isEmpty())
				.get(0);
			assertThat(Duration.between(first.claimedAt(), second.claimedAt())).as("the group's pace across the change")
				.isGreaterThanOrEqualTo(Duration.ofMillis(999));
		}
	}

	/** Sends, as a new count's application does, once the change is no longer refused. */
	private static void sendOnceTheCountMayChange(RedisMessageStore store, NewMessage message) {
		int[] refused = { 0 };
		await().atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(50)).until(() -> {
			try {
				store.send(PartitionApps.TOPIC, List.of(message));
				return true;
			}
			catch (io.github.delayqueue.store.PartitionCountException ex) {
				assertThat(ex.getMessage()).contains("paused groups");
				refused[0]++;
				return false;
			}
		});
		assertThat(refused[0]).as("refused while the pace lasted").isPositive();
	}

	/**
	 * Going down from 4 partitions to 1 while partition 0 holds a group paused until
	 * resumed, a group waiting in strict order (two messages, the first waiting for its
	 * retry an hour), a group at its limit of 1 and a paced group: after the change, none
	 * of them is claimed early, a group that came from partition 3 is served, and each
	 * goes on when its pause, slot or wait lets it; partitions 1-3 were refused the
	 * change while one of them held a pause.
	 */
	@Test
	void goingDownToOnePartitionKeepsPartitionZerosPausesWaitsSlotsAndPaces() {
		try (PartitionApps apps = new PartitionApps()) {
			RedisMessageStore four = apps.store(4, TIMEOUT);
			String paused = groupIn(four, 0, "paused-");
			String strict = groupIn(four, 0, "strict-");
			String limited = groupIn(four, 0, "limited-");
			String paced = groupIn(four, 0, "paced-");
			String elsewhere = groupIn(four, 3, "elsewhere-");
			String p0 = PartitionApps.TOPIC;
			String p3 = four.partitions().nameForGroup(PartitionApps.TOPIC, elsewhere);
			DelayQueueGroups groups = new DelayQueueGroups(four);
			four.agreePartitions(PartitionApps.TOPIC);
			groups.pause(PartitionApps.TOPIC, paused);
			four.send(PartitionApps.TOPIC,
					List.of(grouped("paused-1", paused), grouped("strict-1", strict), grouped("strict-2", strict),
							grouped("limited-1", limited), grouped("limited-2", limited), grouped("paced-1", paced),
							grouped("paced-2", paced)));
			List<ClaimedMessage> taken = claim(four, p0, 1, PACE).messages();
			assertThat(ids(taken)).containsExactlyInAnyOrder("strict-1", "limited-1", "paced-1");
			ClaimedMessage strict1 = taken.stream().filter((m) -> m.id().equals("strict-1")).findFirst().orElseThrow();
			ClaimedMessage paced1 = taken.stream().filter((m) -> m.id().equals("paced-1")).findFirst().orElseThrow();
			four.topic(p0).retry("strict-1", strict1.leaseToken(), HOUR, "boom", GroupWait.IN_GROUP);
			assertThat(Transitions.ack(four, p0, paced1.id(), paced1.leaseToken())).isTrue();
			// A pause in partition 3 holds the change off.
			groups.pause(PartitionApps.TOPIC, elsewhere, HOUR);
			RedisMessageStore one = apps.store(1, TIMEOUT);
			assertThat(org.assertj.core.api.Assertions
				.catchThrowable(() -> one.send(PartitionApps.TOPIC, List.of(grouped("elsewhere-1", elsewhere)))))
				.isInstanceOf(io.github.delayqueue.store.PartitionCountException.class);
			assertThat(groups.resume(PartitionApps.TOPIC, elsewhere)).isTrue();
			assertThat(apps.redis().hasKey(four.keys(p3).groupPauses())).isFalse();
			one.send(PartitionApps.TOPIC, List.of(grouped("elsewhere-1", elsewhere)));

			assertThat(ids(claim(one, p0, 1, PACE).messages())).as("only the group from partition 3")
				.containsExactly("elsewhere-1");
			assertThat(claim(one, p0, 1, PACE).messages()).as("paused, waiting, at its limit, paced").isEmpty();
			DelayQueueGroups oneGroups = new DelayQueueGroups(one);
			assertThat(oneGroups.group(PartitionApps.TOPIC, strict).pausedUntil()).isNotNull();
			assertThat(oneGroups.resume(PartitionApps.TOPIC, paused)).isTrue();
			oneGroups.resume(PartitionApps.TOPIC, strict);
			assertThat(oneGroups.group(PartitionApps.TOPIC, strict).pausedUntil()).as("a resume leaves a strict wait")
				.isNotNull();
			assertThat(ids(claim(one, p0, 1, PACE).messages())).as("the resumed group only")
				.containsExactly("paused-1");
			assertThat(claim(one, p0, 1, PACE).messages()).isEmpty();
			ClaimedMessage limited1 = taken.stream()
				.filter((m) -> m.id().equals("limited-1"))
				.findFirst()
				.orElseThrow();
			assertThat(Transitions.ack(one, p0, limited1.id(), limited1.leaseToken())).isTrue();
			List<ClaimedMessage> later = new ArrayList<>();
			await().atMost(Duration.ofSeconds(5)).until(() -> {
				later.addAll(claim(one, p0, 1, PACE).messages());
				return later.size() >= 2;
			});
			assertThat(ids(later)).as("the limited group's slot freed, the paced group on time; strict-2 waits")
				.containsExactlyInAnyOrder("limited-2", "paced-2");
			ClaimedMessage paced2 = later.stream().filter((m) -> m.id().equals("paced-2")).findFirst().orElseThrow();
			assertThat(Duration.between(paced1.claimedAt(), paced2.claimedAt())).isGreaterThanOrEqualTo(PACE.period());
			assertThat(claim(one, p0, 1, PACE).messages()).isEmpty();
		}
	}

	/**
	 * Finding (low). A group limited to one message a minute whose only message is
	 * claimed has nothing ready, yet the claim pauses it until its pace ends: the group
	 * read, the stats ({@code pausedGroups}), the endpoint, the dashboard and the kit's
	 * {@code hasPausedGroup} show it paused for a minute, and a partition count change is
	 * refused meanwhile ("paused groups"), after every claim of every such group.
	 * groups.md says a group "not yet on time waits, paused, until its next message is on
	 * time": it has no next message. (That pause is what keeps the pace across a
	 * partition change, {@link #aGroupsPaceHoldsWhenTheTopicGoesDownToOnePartition}: a
	 * fix that drops it must carry the pace another way.)
	 */
	@Test
	@Disabled("finding (low): a paced group whose last ready message is claimed is shown paused until its pace "
			+ "ends (group read, pausedGroups, endpoint, dashboard, the kit's hasPausedGroup) though nothing of it "
			+ "waits; a partition change is refused meanwhile")
	void aPacedGroupWithNothingReadyIsNotShownPaused() {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			store.send(TOPIC, List.of(grouped("only", "lone")));
			assertThat(single(claim(store, TOPIC, 0, new RateLimit(1, MINUTE))).id()).isEqualTo("only");
			assertThat(new DelayQueueGroups(store).group(TOPIC, "lone").paused()).as("paused with nothing ready")
				.isFalse();
			assertThat(store.stats(TOPIC).pausedGroups()).isZero();
		}
	}

	// ---------------------------------------------------------------- deduplication

	/**
	 * A grouped id sent with a deduplication window and handled is remembered for the
	 * topic (of one partition), not for its group: sent again within its window in
	 * another group, in no group, or replacing, it is not stored; no group counts it.
	 */
	@Test
	void aHandledDeduplicatedIdOfAGroupIsRememberedWhateverGroupItIsSentAgainIn() {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			TopicKeys keys = store.keys(TOPIC);
			SendResult sent = test.template()
				.send(DelayMessage.builder(TOPIC, "body").id("d").group("A").deduplicateFor(HOUR).build());
			assertThat(sent.duplicate()).isFalse();
			ClaimedMessage claimed = single(claim(store, TOPIC, 1, null));
			assertThat(Transitions.ack(store, TOPIC, "d", claimed.leaseToken())).isTrue();
			for (DelayMessage again : List.of(
					DelayMessage.builder(TOPIC, "body").id("d").group("B").deduplicateFor(HOUR).build(),
					DelayMessage.builder(TOPIC, "other").id("d").group("B").deduplicateFor(HOUR).build(),
					DelayMessage.builder(TOPIC, "body").id("d").deduplicateFor(HOUR).build(),
					DelayMessage.builder(TOPIC, "body").id("d").group("C").build(),
					DelayMessage.builder(TOPIC, "x").id("d").group("A").replaceIfPending().build())) {
				assertThat(test.template().send(again).duplicate()).as("%s", again).isTrue();
			}
			assertThat(claim(store, TOPIC, 1, null).messages()).isEmpty();
			StringRedisTemplate redis = test.redis();
			assertThat(redis.hasKey(keys.messages())).isFalse();
			assertThat(redis.hasKey(keys.groups())).isFalse();
			assertThat(redis.hasKey(keys.groupCounts())).isFalse();
			assertThat(redis.hasKey(keys.groupSlots())).isFalse();
		}
	}

	/**
	 * A deduplicated grouped id that died is sent again, in another group, while dead,
	 * and handled there: it is remembered, and the replay of its dead letter, into its
	 * first group, is skipped (it stays dead), within the window. The first group has
	 * nothing ready, and no slot is left.
	 */
	@Test
	void aDeadLetterOfADeduplicatedGroupedIdHandledAgainInAnotherGroupIsNotReplayedWithinItsWindow() {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			TopicKeys keys = store.keys(TOPIC);
			test.template().send(DelayMessage.builder(TOPIC, "body").id("d").group("A").deduplicateFor(HOUR).build());
			ClaimedMessage claimed = single(claim(store, TOPIC, 1, null));
			assertThat(Transitions.deadLetter(store, TOPIC, "d", claimed.leaseToken(), "failed")).isTrue();
			SendResult again = test.template()
				.send(DelayMessage.builder(TOPIC, "body").id("d").group("B").deduplicateFor(HOUR).build());
			assertThat(again.duplicate()).as("the id died: it is not remembered").isFalse();
			ClaimedMessage inB = single(claim(store, TOPIC, 1, null));
			assertThat(MessageFormat.decode(inB.id(), inB.stored()).headers()).containsEntry(MessageFormat.GROUP_HEADER,
					"B");
			assertThat(Transitions.ack(store, TOPIC, "d", inB.leaseToken())).isTrue();
			ReplayResult replay = store.replayDead(TOPIC, List.of("d"));
			assertThat(replay.replayed()).as("remembered since its message was handled in B").isEmpty();
			assertThat(claim(store, TOPIC, 1, null).messages()).isEmpty();
			StringRedisTemplate redis = test.redis();
			assertThat(redis.hasKey(keys.groupSlots())).isFalse();
			assertThat(redis.hasKey(keys.groupReady())).isFalse();
			assertThat(redis.hasKey(keys.groups())).isFalse();
		}
	}

	/**
	 * A deduplicated message waiting in strict order in group A is replaced by a
	 * replacing send into group B: the message is delivered once, in B, at once; A stays
	 * paused until the retry's time but its wait is over (a resume ends it, A's next
	 * message goes), and once the message is handled its id is remembered: sent again in
	 * A, nothing is stored. No slot, member or wait is left.
	 */
	@Test
	void aWaitingDeduplicatedMessageReplacedIntoAnotherGroupIsDeliveredOnceThereAndRemembered() {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			TopicKeys keys = store.keys(TOPIC);
			StringRedisTemplate redis = test.redis();
			test.template().send(DelayMessage.builder(TOPIC, "v1").id("d").group("A").deduplicateFor(HOUR).build());
			test.template().send(DelayMessage.builder(TOPIC, "next").id("e2").group("A").build());
			ClaimedMessage first = single(claim(store, TOPIC, 1, null));
			assertThat(first.id()).isEqualTo("d");
			store.topic(TOPIC).retry("d", first.leaseToken(), HOUR, "boom", GroupWait.IN_GROUP);
			assertThat(claim(store, TOPIC, 1, null).messages()).as("A waits for d's retry").isEmpty();

			SendResult replaced = test.template()
				.send(DelayMessage.builder(TOPIC, "v2")
					.id("d")
					.group("B")
					.deduplicateFor(HOUR)
					.replaceIfPending()
					.build());
			assertThat(replaced.replaced()).isTrue();
			Transitions.promote(store, TOPIC, 10);
			ClaimedMessage inB = single(claim(store, TOPIC, 1, null));
			assertThat(inB.id()).isEqualTo("d");
			assertThat(MessageFormat.decode(inB.id(), inB.stored()).headers()).containsEntry(MessageFormat.GROUP_HEADER,
					"B");
			assertThat(claim(store, TOPIC, 1, null).messages()).as("A is still paused until d's retry time").isEmpty();
			DelayQueueGroups groups = new DelayQueueGroups(store);
			groups.resume(TOPIC, "A");
			ClaimedMessage a2 = single(claim(store, TOPIC, 1, null));
			assertThat(a2.id()).as("the wait is over: the resume lets A go on").isEqualTo("e2");
			assertThat(Transitions.ack(store, TOPIC, "d", inB.leaseToken())).isTrue();
			assertThat(Transitions.ack(store, TOPIC, "e2", a2.leaseToken())).isTrue();
			assertThat(test.template()
				.send(DelayMessage.builder(TOPIC, "v1").id("d").group("A").deduplicateFor(HOUR).build())
				.duplicate()).isTrue();
			assertThat(claim(store, TOPIC, 1, null).messages()).isEmpty();
			assertThat(redis.hasKey(keys.groupSlots())).isFalse();
			assertThat(redis.hasKey(keys.groupReady())).isFalse();
			assertThat(redis.hasKey(keys.groupCounts())).isFalse();
			assertThat(redis.opsForZSet().range(keys.groupWaits(), 0, -1)).as("waits left")
				.noneMatch((member) -> member.contains("d"));
		}
	}

	// ---------------------------------------------------------------- strict order and
	// ranks

	/**
	 * Finding (documentation). groups.md says what passes a message waiting in strict
	 * order: a message of higher priority, a dead letter, an unreadable header. A message
	 * of the same priority sent meanwhile with a due time earlier than the waiting
	 * message's kept due time (a due time in the past, or only an earlier one of two
	 * messages sent due now: its rank is its due time) passes it too, with
	 * {@code group-concurrency: 1}.
	 */
	@Test
	@Disabled("finding (docs): a message of the same priority sent, while a message waits in strict order, "
			+ "with a due time before the waiting one's kept due time is claimed before it once the wait ends: "
			+ "groups.md names only a higher priority, a dead letter and an unreadable header as what passes")
	void nothingButAHigherPriorityPassesAMessageWaitingInStrictOrder() {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			long now = System.currentTimeMillis();
			store.send(TOPIC, List.of(grouped("a", now - 1_000, "g"), grouped("b", now - 500, "g")));
			ClaimedMessage a = single(claim(store, TOPIC, 1, null));
			assertThat(a.id()).isEqualTo("a");
			store.topic(TOPIC).retry("a", a.leaseToken(), Duration.ofMillis(300), "boom", GroupWait.IN_GROUP);
			store.send(TOPIC, List.of(grouped("c", now - 60_000, "g")));
			List<String> order = new ArrayList<>();
			await().atMost(Duration.ofSeconds(5)).until(() -> {
				for (ClaimedMessage next : claim(store, TOPIC, 1, null).messages()) {
					order.add(next.id());
					Transitions.ack(store, TOPIC, next.id(), next.leaseToken());
				}
				return order.size() == 3;
			});
			assertThat(order).as("a waited first in its group; c was sent after a failed").startsWith("a");
		}
	}

	/**
	 * What the strict wait holds while it lasts: a message of higher priority sent to the
	 * group, a replay of its dead letter, a message sent again after a cancel, a message
	 * whose lease expired: none is claimed before the wait's end (the group is paused),
	 * and after it the higher priority goes first, then the waiting message, then the
	 * rest by due time.
	 */
	@Test
	void nothingOfAWaitingGroupIsClaimedBeforeItsWaitEndsWhateverComesBackIntoIt() {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			long now = System.currentTimeMillis();
			store.send(TOPIC, List.of(grouped("a", now - 1_000, "g"), grouped("b", now - 900, "g"),
					grouped("dead", now - 800, "g")));
			// dead dies first (claimed without a limit), a is claimed and fails in strict
			// order
			List<ClaimedMessage> all = claim(store, TOPIC, 0, null).messages();
			assertThat(ids(all)).containsExactly("a", "b", "dead");
			ClaimedMessage a = all.get(0);
			assertThat(Transitions.release(store, TOPIC, "b", all.get(1).leaseToken())).isTrue();
			assertThat(Transitions.deadLetter(store, TOPIC, "dead", all.get(2).leaseToken(), "gone")).isTrue();
			long waitEnd = store.topic(TOPIC)
				.retry("a", a.leaseToken(), Duration.ofMillis(1_500), "boom", GroupWait.IN_GROUP);
			store.send(TOPIC, List.of(grouped("urgent", now, "g").withPriority(9)));
			assertThat(store.replayDead(TOPIC, List.of("dead")).replayed()).containsExactly("dead");
			Transitions.promote(store, TOPIC, 10);
			for (int i = 0; i < 3; i++) {
				assertThat(claim(store, TOPIC, 0, null).messages()).as("the group waits").isEmpty();
			}
			List<String> order = new ArrayList<>();
			await().atMost(Duration.ofSeconds(5)).until(() -> {
				Transitions.promote(store, TOPIC, 10);
				for (ClaimedMessage next : claim(store, TOPIC, 1, null).messages()) {
					assertThat(System.currentTimeMillis()).as("claimed after the wait").isGreaterThanOrEqualTo(waitEnd);
					order.add(next.id());
					Transitions.ack(store, TOPIC, next.id(), next.leaseToken());
				}
				return order.size() == 4;
			});
			assertThat(order).containsExactly("urgent", "a", "b", "dead");
		}
	}

	/**
	 * With {@code group-concurrency: 1} in strict order: a waits for its retry; a message
	 * of priority 9 sent meanwhile is claimed first when the wait ends, and fails too:
	 * the group waits again, for the urgent one's retry, and a (whose wait ended) is not
	 * claimed meanwhile; then the urgent one, then a, then b.
	 */
	@Test
	void aHigherPriorityMessageThatPassesAWaitingOneAndFailsHoldsTheGroupAgain() {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			long now = System.currentTimeMillis();
			store.send(TOPIC, List.of(grouped("a", now - 1_000, "g"), grouped("b", now - 900, "g")));
			ClaimedMessage a = single(claim(store, TOPIC, 1, null));
			store.topic(TOPIC).retry("a", a.leaseToken(), Duration.ofMillis(200), "boom", GroupWait.IN_GROUP);
			store.send(TOPIC, List.of(grouped("urgent", now, "g").withPriority(9)));
			ClaimedMessage urgent = await().atMost(Duration.ofSeconds(3))
				.until(() -> claim(store, TOPIC, 1, null).messages(), (claimed) -> !claimed.isEmpty())
				.get(0);
			assertThat(urgent.id()).isEqualTo("urgent");
			long urgentWaitEnd = store.topic(TOPIC)
				.retry("urgent", urgent.leaseToken(), Duration.ofMillis(600), "boom", GroupWait.IN_GROUP);
			List<String> order = new ArrayList<>();
			await().atMost(Duration.ofSeconds(5)).until(() -> {
				for (ClaimedMessage next : claim(store, TOPIC, 1, null).messages()) {
					assertThat(System.currentTimeMillis()).as("%s claimed after the urgent one's wait", next.id())
						.isGreaterThanOrEqualTo(urgentWaitEnd);
					order.add(next.id());
					Transitions.ack(store, TOPIC, next.id(), next.leaseToken());
				}
				return order.size() == 3;
			});
			assertThat(order).containsExactly("urgent", "a", "b");
		}
	}

	// ---------------------------------------------------------------- outages

	/**
	 * Three applications, each behind a proxy that puts Redis 1-4 ms away and now and
	 * then drops the reply to a script call after Redis ran it (the client reconnects and
	 * sends it again), claim six groups of thirty messages with {@code group-concurrency:
	 * 1}, {@code group-order: strict} and a per-group rate limit of 25 a second; they
	 * acknowledge, fail (a strict retry), slow down or abandon (a crash: its lease of a
	 * second expires) what they claim, while an operator pauses and resumes groups
	 * through the first proxy. Throughout: no message is claimed while another
	 * application holds its lease, no group has two messages in flight or a slot count
	 * above 1, no group's message is claimed inside a pause the operator holds, no two
	 * claims of a group are closer than its pace, each group's messages are acknowledged
	 * in order; at the end nothing is lost and no slot, member, count or wait is left.
	 */
	@Test
	void strictPacedAndPausedGroupsHoldThroughSlowAndLostRepliesAcrossThreeApplications() throws Exception {
		int groupsCount = 6;
		int perGroup = 30;
		RateLimit pace = new RateLimit(25, Duration.ofSeconds(1));
		long paceMicros = 40_000;
		try (TestStore sender = TestStore.create()) {
			List<TestStore> apps = new ArrayList<>();
			try {
				for (int i = 0; i < 3; i++) {
					apps.add(TestStore.builder().prefix(sender.prefix()).behindProxy().build());
				}
				RedisMessageStore senderStore = sender.store();
				TopicKeys keys = senderStore.keys(TOPIC);
				List<NewMessage> messages = new ArrayList<>();
				long now = System.currentTimeMillis();
				for (int i = 0; i < perGroup; i++) {
					for (int g = 0; g < groupsCount; g++) {
						messages.add(grouped("g" + g + "-" + (100 + i), now + i, "g" + g));
					}
				}
				senderStore.send(TOPIC, messages);
				Fuzz fuzz = new Fuzz(paceMicros);
				List<Thread> threads = new ArrayList<>();
				long deadline = System.nanoTime() + Duration.ofSeconds(25).toNanos();
				for (int a = 0; a < apps.size(); a++) {
					TestStore app = apps.get(a);
					java.util.Random random = new java.util.Random(38L * 31 + a);
					threads.add(new Thread(() -> fuzz.run(() -> {
						while (fuzz.acked.size() < messages.size() && System.nanoTime() < deadline) {
							fuzz.step(app, random, pace);
						}
					}), "fuzz-" + a));
				}
				DelayQueueGroups operator = new DelayQueueGroups(apps.get(0).store());
				java.util.Random opRandom = new java.util.Random(38);
				threads.add(new Thread(() -> fuzz.run(() -> {
					while (fuzz.acked.size() < messages.size() && System.nanoTime() < deadline) {
						fuzz.operate(operator, sender.redis(), keys, "g" + opRandom.nextInt(groupsCount), opRandom);
					}
				}), "operator"));
				long started = System.nanoTime();
				threads.add(new Thread(() -> fuzz.run(() -> {
					while (fuzz.acked.size() < messages.size() && System.nanoTime() < deadline) {
						fuzz.expired
							.addAndGet(Transitions.expireLeases(senderStore, TOPIC, 100, 100).requeued().size());
						java.util.concurrent.locks.LockSupport.parkNanos(Duration.ofMillis(20).toNanos());
					}
				}), "expirer"));
				threads.forEach(Thread::start);
				for (Thread thread : threads) {
					thread.join(Duration.ofSeconds(40).toMillis());
				}
				System.out
					.println("GroupsFinalReviewTests fuzz: " + Duration.ofNanos(System.nanoTime() - started).toMillis()
							+ " ms, slowest step " + fuzz.slowest.get() + " ms, " + fuzz.acked.size()
							+ " acknowledged of " + messages.size() + ", " + fuzz.claims.get() + " claims, "
							+ fuzz.retries.get() + " retries, " + fuzz.slowDowns.get() + " slow-downs, "
							+ fuzz.crashes.get() + " abandoned, " + fuzz.expired.get() + " leases expired, "
							+ fuzz.pauses.get() + " pauses, " + fuzz.drops.get() + " replies dropped, "
							+ fuzz.pauseChecks.get() + " messages of other groups claimed inside an operator's pause");
				assertThat(fuzz.failures).as("invariants broken").isEmpty();
				assertThat(fuzz.acked).hasSize(messages.size());
				fuzz.ackOrder
					.forEach((group, order) -> assertThat(order).as("%s acknowledged in order", group).isSorted());
				StringRedisTemplate redis = sender.redis();
				assertThat(redis.hasKey(keys.messages())).as("messages left").isFalse();
				assertThat(redis.hasKey(keys.inFlight())).isFalse();
				assertThat(redis.hasKey(keys.groupSlots())).as("slots left").isFalse();
				assertThat(redis.hasKey(keys.groupReady())).as("members left").isFalse();
				assertThat(redis.hasKey(keys.groupCounts())).as("counts left").isFalse();
				assertThat(redis.hasKey(keys.groupRotation())).as("rotation left").isFalse();
				assertThat(redis.opsForZSet()
					.rangeByScore(keys.groupWaits(), System.currentTimeMillis(), Double.POSITIVE_INFINITY))
					.as("waits not ended")
					.isEmpty();
			}
			finally {
				apps.forEach(TestStore::close);
			}
		}
	}

	/** An operator's pause, from when its call returned to when it ends or was ended. */
	private static final class Window {

		final String group;

		final long from;

		volatile long to;

		Window(String group, long from, long to) {
			this.group = group;
			this.from = from;
			this.to = to;
		}

	}

	/** The shared model of the fuzz: who holds what, and what each group saw. */
	private static final class Fuzz {

		final java.util.Set<String> acked = java.util.concurrent.ConcurrentHashMap.newKeySet();

		final Map<String, String> holder = new java.util.concurrent.ConcurrentHashMap<>();

		final Map<String, String> groupHeld = new java.util.concurrent.ConcurrentHashMap<>();

		final Map<String, List<String>> ackOrder = new java.util.concurrent.ConcurrentHashMap<>();

		final Map<String, java.util.Set<Long>> claimTimes = new java.util.concurrent.ConcurrentHashMap<>();

		final List<Window> windows = new java.util.concurrent.CopyOnWriteArrayList<>();

		final List<String> failures = new java.util.concurrent.CopyOnWriteArrayList<>();

		final java.util.concurrent.atomic.AtomicInteger claims = new java.util.concurrent.atomic.AtomicInteger();

		final java.util.concurrent.atomic.AtomicInteger retries = new java.util.concurrent.atomic.AtomicInteger();

		final java.util.concurrent.atomic.AtomicInteger slowDowns = new java.util.concurrent.atomic.AtomicInteger();

		final java.util.concurrent.atomic.AtomicInteger pauses = new java.util.concurrent.atomic.AtomicInteger();

		final java.util.concurrent.atomic.AtomicInteger drops = new java.util.concurrent.atomic.AtomicInteger();

		final java.util.concurrent.atomic.AtomicInteger crashes = new java.util.concurrent.atomic.AtomicInteger();

		final java.util.concurrent.atomic.AtomicInteger expired = new java.util.concurrent.atomic.AtomicInteger();

		final java.util.concurrent.atomic.AtomicLong slowest = new java.util.concurrent.atomic.AtomicLong();

		final java.util.concurrent.atomic.AtomicInteger pauseChecks = new java.util.concurrent.atomic.AtomicInteger();

		private final long paceMicros;

		/**
		 * The lease of the fuzz's claims: a crashed application's message comes back
		 * soon.
		 */
		static final Duration LEASE = Duration.ofSeconds(1);

		Fuzz(long paceMicros) {
			this.paceMicros = paceMicros;
		}

		void run(Runnable body) {
			try {
				body.run();
			}
			catch (Throwable ex) {
				this.failures.add(Thread.currentThread().getName() + " failed: " + ex);
			}
		}

		void step(TestStore app, java.util.Random random, RateLimit pace) {
			RedisMessageStore store = app.store();
			app.proxy().latency(Duration.ofMillis(1 + random.nextInt(4)));
			if (random.nextInt(12) == 0) {
				app.proxy()
					.dropNextReplyToCommand(
							(command) -> command.get(0).toUpperCase(java.util.Locale.ROOT).startsWith("EVAL"));
				this.drops.incrementAndGet();
			}
			if (random.nextInt(8) == 0) {
				Transitions.promote(store, TOPIC, 100);
			}
			String consumer = LeaseTokens.newToken();
			long start = System.currentTimeMillis();
			List<ClaimedMessage> claimed = store.topic(TOPIC)
				.claim(consumer, consumer + ".1", 1 + random.nextInt(3), 0, Fuzz.LEASE, null, 1, GroupWeights.NONE,
						pace, WriteGate.OPEN)
				.join()
				.messages();
			long end = System.currentTimeMillis();
			this.slowest.accumulateAndGet(end - start, Math::max);
			this.claims.incrementAndGet();
			for (ClaimedMessage message : claimed) {
				String group = message.id().substring(0, message.id().indexOf('-'));
				String before = this.holder.putIfAbsent(message.id(), consumer);
				if (before != null) {
					this.failures.add(message.id() + " claimed by " + consumer + " while " + before + " holds it");
				}
				String other = this.groupHeld.putIfAbsent(group, message.id());
				if (other != null) {
					this.failures.add(message.id() + " claimed while " + other + " of its group is in flight");
				}
				for (Window window : this.windows) {
					if (window.from <= start && end < window.to) {
						if (group.equals(window.group)) {
							this.failures.add(message.id() + " claimed at " + message.claimedAt()
									+ " by a claim sent at " + start + " and answered at " + end
									+ ", inside a pause of its group from " + window.from + " to " + window.to);
						}
						else {
							this.pauseChecks.incrementAndGet();
						}
					}
				}
				long micros = java.time.temporal.ChronoUnit.MICROS.between(Instant.EPOCH, message.claimedAt());
				java.util.Set<Long> times = this.claimTimes.computeIfAbsent(group,
						(g) -> new java.util.concurrent.ConcurrentSkipListSet<>());
				synchronized (times) {
					for (long time : times) {
						if (Math.abs(time - micros) < this.paceMicros - 1_000) {
							this.failures.add(message.id() + " claimed " + Math.abs(time - micros)
									+ " µs after another of its group, under a pace of " + this.paceMicros);
						}
					}
					times.add(micros);
				}
			}
			for (ClaimedMessage message : claimed) {
				String group = message.id().substring(0, message.id().indexOf('-'));
				int what = random.nextInt(20);
				this.holder.remove(message.id());
				this.groupHeld.remove(group);
				if (what < 4) {
					this.retries.incrementAndGet();
					store.topic(TOPIC)
						.retry(message.id(), message.leaseToken(), Duration.ofMillis(30 + random.nextInt(100)), "boom",
								GroupWait.IN_GROUP);
				}
				else if (what == 6) {
					// The application dies with it: its lease ends, and it is claimed
					// again first.
					this.crashes.incrementAndGet();
				}
				else if (what == 4 || what == 5) {
					this.slowDowns.incrementAndGet();
					store.topic(TOPIC)
						.postpone(message.id(), message.leaseToken(), Duration.ofMillis(30 + random.nextInt(60)),
								GroupWait.IN_GROUP);
				}
				else {
					this.ackOrder.computeIfAbsent(group, (g) -> new java.util.concurrent.CopyOnWriteArrayList<>())
						.add(message.id());
					this.acked.add(message.id());
					Transitions.ack(store, TOPIC, message.id(), message.leaseToken());
				}
			}
			if (claimed.isEmpty()) {
				java.util.concurrent.locks.LockSupport.parkNanos(Duration.ofMillis(2).toNanos());
			}
		}

		private void endPauses(String group, long at) {
			for (Window window : this.windows) {
				if (window.group.equals(group)) {
					window.to = Math.min(window.to, at);
				}
			}
		}

		void operate(DelayQueueGroups operator, StringRedisTemplate redis, TopicKeys keys, String group,
				java.util.Random random) {
			long length = 60 + random.nextInt(200);
			// A pause again sets a new end: the pauses of the group before end then at
			// the latest.
			endPauses(group, System.currentTimeMillis());
			Instant end = operator.pause(TOPIC, group, Duration.ofMillis(length));
			this.windows.add(new Window(group, System.currentTimeMillis(), end.toEpochMilli() - 2));
			this.pauses.incrementAndGet();
			java.util.concurrent.locks.LockSupport.parkNanos(Duration.ofMillis(random.nextInt(120)).toNanos());
			if (random.nextBoolean()) {
				endPauses(group, System.currentTimeMillis());
				operator.resume(TOPIC, group);
			}
			for (Map.Entry<Object, Object> slots : redis.opsForHash().entries(keys.groupSlots()).entrySet()) {
				if (Long.parseLong(slots.getValue().toString()) > 1) {
					this.failures.add("group " + slots.getKey() + " holds " + slots.getValue() + " slots");
				}
			}
			java.util.concurrent.locks.LockSupport.parkNanos(Duration.ofMillis(random.nextInt(20)).toNanos());
		}

	}

	// ---------------------------------------------------------------- the late policy

	private final List<String> handled = new java.util.concurrent.CopyOnWriteArrayList<>();

	/**
	 * Finding (design, documentation). With {@code late-policy: dead-letter} (threshold
	 * 500 ms), a group paused by an operator for 1.5 s: on its resume, its messages are
	 * dead-lettered as late for the time they waited on purpose. The strict-order wait is
	 * exempt (DeliveryHandler), and stats leave a paused group's messages out of the
	 * lateness ("they wait on purpose"), but a pause, a slow-down's pause of the group's
	 * other messages, a per-group pace and a wait at the group's concurrency limit are
	 * not, and groups.md does not say it (api.md says it for the topic's rate limit
	 * only).
	 */
	@Test
	@Disabled("finding (design/docs): under late-policy dead-letter, a paused group's messages are dead-lettered "
			+ "as late once resumed (the pause's time counts as lateness), unlike a strict-order wait; groups.md "
			+ "does not say so")
	void aPausedGroupsMessagesAreNotDeadLetteredAsLateForThePause() {
		try (TestStore fixture = TestStore.create()) {
			DelayQueueGroups groups = new DelayQueueGroups(fixture.store());
			DelayQueueRuntime runtime = lateRuntime(fixture, 0, null);
			try {
				fixture.store().agreePartitions(TOPIC);
				groups.pause(TOPIC, "g");
				for (int i = 0; i < 3; i++) {
					fixture.template().send(DelayMessage.builder(TOPIC, "step").id("p-" + i).group("g").build());
				}
				fixture.template().send(DelayMessage.builder(TOPIC, "other").id("other").group("h").build());
				await().atMost(Duration.ofSeconds(5)).until(() -> this.handled.contains("other"));
				await().pollDelay(Duration.ofMillis(1_500)).until(() -> true);
				groups.resume(TOPIC, "g");
				TopicKeys keys = fixture.store().keys(TOPIC);
				await().atMost(Duration.ofSeconds(5))
					.until(() -> this.handled.size() + fixture.redis().opsForZSet().size(keys.dead()) >= 4);
				assertThat(fixture.redis().opsForZSet().range(keys.dead(), 0, -1)).as("dead-lettered as late")
					.isEmpty();
				assertThat(this.handled).containsExactly("other", "p-0", "p-1", "p-2");
			}
			finally {
				runtime.stop();
			}
		}
	}

	/**
	 * Finding (design, documentation), the same for a per-group rate limit: a group
	 * limited to one message every 400 ms has five messages due at once; under
	 * {@code late-policy: dead-letter} with a threshold of 500 ms, the ones its own pace
	 * holds back past the threshold are dead-lettered as late. api.md says the topic's
	 * {@code rate-limit} makes messages late this way; groups.md does not say it of
	 * {@code group-rate-limit}.
	 */
	@Test
	@Disabled("finding (design/docs): under late-policy dead-letter, the messages a group's own group-rate-limit "
			+ "holds back past the late threshold are dead-lettered as late; groups.md does not say so")
	void aPacedGroupsMessagesAreNotDeadLetteredAsLateForTheirPace() {
		try (TestStore fixture = TestStore.create()) {
			DelayQueueRuntime runtime = lateRuntime(fixture, 0, new RateLimit(5, Duration.ofSeconds(2)));
			try {
				for (int i = 0; i < 5; i++) {
					fixture.template().send(DelayMessage.builder(TOPIC, "call").id("c-" + i).group("api").build());
				}
				TopicKeys keys = fixture.store().keys(TOPIC);
				await().atMost(Duration.ofSeconds(8))
					.until(() -> this.handled.size() + fixture.redis().opsForZSet().size(keys.dead()) >= 5);
				assertThat(fixture.redis().opsForZSet().range(keys.dead(), 0, -1)).as("dead-lettered as late")
					.isEmpty();
				assertThat(this.handled).containsExactly("c-0", "c-1", "c-2", "c-3", "c-4");
			}
			finally {
				runtime.stop();
			}
		}
	}

	private DelayQueueRuntime lateRuntime(TestStore fixture, int groupConcurrency, @Nullable RateLimit groupRate) {
		JsonPayloadConverter converter = new JsonPayloadConverter(new JsonMapper());
		DelayListenerEndpointRegistry registry = new DelayListenerEndpointRegistry(converter);
		ListenerSettings settings = new ListenerSettings(4, 0, 3, Duration.ofSeconds(30),
				new RetryBackoff(Duration.ofMillis(200), 1.0, Duration.ofMillis(200)), Duration.ofSeconds(1),
				Duration.ofSeconds(2), Duration.ofMinutes(5), LatePolicy.DEAD_LETTER, Duration.ofMillis(500))
			.withGroupConcurrency(groupConcurrency)
			.withGroupRateLimit(groupRate);
		Method on = ReflectionUtils.findMethod(GroupsFinalReviewTests.class, "record", Delivery.class);
		registry.register(new DelayListenerEndpoint(TOPIC, this, on, settings));
		DelayQueueRuntime runtime = new DelayQueueRuntime(fixture.store(), converter,
				new BrokerSettings(100, Duration.ofSeconds(1), Duration.ZERO), registry);
		runtime.start();
		return runtime;
	}

	void record(Delivery<String> delivery) {
		this.handled.add(delivery.id());
	}

	// ---------------------------------------------------------------- helpers

	private static ClaimResult claim(RedisMessageStore store, String partition, int groupConcurrency,
			@Nullable RateLimit groupRate) {
		String consumer = LeaseTokens.newToken();
		return store.topic(partition)
			.claim(consumer, consumer + ".1", 10, 0, MINUTE, null, groupConcurrency, GroupWeights.NONE, groupRate,
					WriteGate.OPEN)
			.join();
	}

	private static ClaimedMessage single(ClaimResult result) {
		assertThat(result.messages()).hasSize(1);
		return result.messages().get(0);
	}

	private static List<String> ids(List<ClaimedMessage> claimed) {
		return claimed.stream().map(ClaimedMessage::id).toList();
	}

	private static String groupIn(RedisMessageStore store, int index) {
		return groupIn(store, index, "g-");
	}

	private static String groupIn(RedisMessageStore store, int index, String prefix) {
		String wanted = TopicPartitions.names(PartitionApps.TOPIC, store.partitions().count(PartitionApps.TOPIC))
			.get(index);
		return IntStream.iterate(0, (i) -> i + 1)
			.mapToObj((i) -> prefix + i)
			.filter((group) -> store.partitions().nameForGroup(PartitionApps.TOPIC, group).equals(wanted))
			.findFirst()
			.orElseThrow();
	}

	/** A grouped message due now, its group in its header as the template writes it. */
	private static NewMessage grouped(String id, String group) {
		return grouped(id, System.currentTimeMillis(), group);
	}

	private static NewMessage grouped(String id, long due, String group) {
		byte[] body = MessageFormat.encodeBody(Map.of(MessageFormat.GROUP_HEADER, group),
				("body of " + id).getBytes(StandardCharsets.UTF_8));
		return new NewMessage(id, false, due, body).inGroup(group);
	}

}

package io.github.delayqueue.review;

import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiConsumer;

import io.github.delayqueue.convert.JsonPayloadConverter;
import io.github.delayqueue.listener.BatchListenerFailedException;
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
import io.github.delayqueue.store.WriteGate;
import io.github.delayqueue.store.TopicPartitions;
import io.github.delayqueue.store.redis.RedisMessageStore;
import io.github.delayqueue.store.redis.TopicKeys;
import io.github.delayqueue.test.redis.FaultyRedisProxy;
import io.github.delayqueue.test.redis.RedisServerProcess;
import io.github.delayqueue.test.redis.TestRedis;
import io.github.delayqueue.testsupport.Interruptibly;
import io.github.delayqueue.testsupport.OnOneServerVersion;
import io.github.delayqueue.testsupport.TestStore;
import io.github.delayqueue.testsupport.Transitions;
import io.github.delayqueue.time.RetryBackoff;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.util.ReflectionUtils;

import static io.github.delayqueue.review.GroupsReviewTests.due;
import static io.github.delayqueue.review.GroupsReviewTests.ids;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Adversarial review of groups where they meet the other features: batch listeners,
 * replacing and deduplicated sends, Redis that comes back empty, replies lost or late,
 * graceful stops, dead letters. On a real Redis, several consumers.
 */
@OnOneServerVersion
class GroupsMatrixReviewTests {

	private static final String TOPIC = "jobs";

	private static final Duration MINUTE = Duration.ofMinutes(1);

	// ---------------------------------------------------------------- store level

	/**
	 * A hand-back (release.lua) whose reply was lost after Redis ran it: Lettuce sends it
	 * again, which finds no lease. The group's slot is freed once: the other message of
	 * the group still holds its slot, and a claim with a limit of 2 takes one message
	 * more, not two.
	 */
	@Test
	void aHandBackWhoseReplyWasLostFreesItsGroupsSlotOnce() {
		try (TestStore test = TestStore.builder().behindProxy().build()) {
			RedisMessageStore store = test.store();
			TopicKeys keys = store.keys(TOPIC);
			StringRedisTemplate redis = test.redis();
			store.send(TOPIC, List.of(due("a", 5).inGroup("g"), due("b", 6).inGroup("g"), due("c", 7).inGroup("g"),
					due("d", 8).inGroup("g")));
			List<ClaimedMessage> two = claim(store, 10, 2);
			assertThat(ids(two)).containsExactly("a", "b");
			FaultyRedisProxy.Fault lost = test.proxy()
				.dropNextReplyToCommand((command) -> command.get(0).toUpperCase(Locale.ROOT).startsWith("EVAL")
						&& command.contains(two.get(0).leaseToken()));
			List<Boolean> released = Transitions.release(store, TOPIC, List.of("a"), List.of(two.get(0).leaseToken()));
			assertThat(lost.hasFired()).as("the hand-back's reply was lost").isTrue();
			assertThat(redis.opsForHash().get(keys.groupSlots(), "g")).as("b still holds a slot; released " + released)
				.isEqualTo("1");
			assertThat(ids(claim(store, 10, 2))).as("a is back at its rank, one slot free").containsExactly("a");
			assertThat(claim(store, 10, 2)).as("a and b in flight, limit 2").isEmpty();
		}
	}

	/**
	 * A strict-order retry whose reply was lost after Redis ran it: sent again, it finds
	 * no lease. The group waits once, its slot freed once; the message is the group's
	 * next one once the wait ends.
	 */
	@Test
	void aStrictRetryWhoseReplyWasLostFreesItsSlotOnceAndKeepsTheMessageFirst() {
		try (TestStore test = TestStore.builder().behindProxy().build()) {
			RedisMessageStore store = test.store();
			TopicKeys keys = store.keys(TOPIC);
			StringRedisTemplate redis = test.redis();
			store.send(TOPIC, List.of(due("a", 5).inGroup("g"), due("b", 6).inGroup("g"), due("c", 7).inGroup("g")));
			List<ClaimedMessage> two = claim(store, 10, 2);
			assertThat(ids(two)).containsExactly("a", "b");
			FaultyRedisProxy.Fault lost = test.proxy()
				.dropNextReplyToCommand((command) -> command.get(0).toUpperCase(Locale.ROOT).startsWith("EVAL")
						&& command.contains(two.get(0).leaseToken()));
			long next = store.topic(TOPIC)
				.retry("a", two.get(0).leaseToken(), Duration.ofMillis(300), "boom", GroupWait.IN_GROUP);
			assertThat(lost.hasFired()).isTrue();
			assertThat(redis.opsForHash().get(keys.groupSlots(), "g")).as("b holds a slot; retry said " + next)
				.isEqualTo("1");
			assertThat(claim(store, 10, 2)).as("the group waits for a's retry").isEmpty();
			assertThat(Transitions.ack(store, TOPIC, "b", two.get(1).leaseToken())).isTrue();
			await().atMost(Duration.ofSeconds(3))
				.untilAsserted(() -> assertThat(ids(claim(store, 10, 2))).containsExactly("a", "c"));
		}
	}

	/**
	 * A claim whose reply came after the caller gave up (held past the store's timeout):
	 * the caller hands the claim back by its token (release_claim.lua). The group's slots
	 * are freed and its messages claimed again at once, in order.
	 */
	@Test
	void aClaimAnsweredTooLateIsHandedBackWithItsGroupsSlots() {
		try (TestStore sender = TestStore.create();
				TestStore late = TestStore.builder()
					.prefix(sender.prefix())
					.behindProxy()
					.sendTimeout(Duration.ofMillis(300))
					.build()) {
			RedisMessageStore store = sender.store();
			TopicKeys keys = store.keys(TOPIC);
			StringRedisTemplate redis = sender.redis();
			store.send(TOPIC, List.of(due("a", 5).inGroup("g"), due("b", 6).inGroup("g"), due("c", 7).inGroup("h")));
			late.proxy()
				.delayNextReplyToCommand(FaultyRedisProxy.withArgumentContaining("EVALSHA", ":c:"),
						Duration.ofSeconds(1));
			String consumer = LeaseTokens.newToken();
			Throwable failure = null;
			try {
				Transitions.claim(late.store(), TOPIC, consumer, consumer + ".1", 10, 0, MINUTE, null, 1);
			}
			catch (RuntimeException ex) {
				failure = ex;
			}
			assertThat(failure).as("the claim timed out").isNotNull();
			// The proxy holds the replies after the claim's on that connection as well.
			await().pollDelay(Duration.ofMillis(1200)).until(() -> true);
			assertThat(redis.opsForHash().entries(keys.groupSlots())).as("the claim ran").containsOnlyKeys("g", "h");
			await().atMost(Duration.ofSeconds(3))
				.ignoreExceptions()
				.untilAsserted(() -> assertThat(
						Transitions.releaseClaim(late.store(), TOPIC, consumer, consumer + ".1", MINUTE))
					.containsExactlyInAnyOrder("a", "c"));
			assertThat(redis.hasKey(keys.groupSlots())).as("slots after the hand-back").isFalse();
			assertThat(ids(claim(store, 10, 1))).containsExactlyInAnyOrder("a", "c");
		}
	}

	/**
	 * A send of an id that is in flight in another group, on a topic of one partition: a
	 * duplicate, its message left in its group; the ack frees the first group's slot, and
	 * the other group holds none.
	 */
	@Test
	void aSendOfAnIdInFlightInAnotherGroupIsADuplicateAndLeavesTheSlots() {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			TopicKeys keys = store.keys(TOPIC);
			StringRedisTemplate redis = test.redis();
			test.template().send(DelayMessage.builder(TOPIC, "body").id("x").group("a").build());
			ClaimedMessage x = claim(store, 10, 1).get(0);
			SendResult plain = test.template().send(DelayMessage.builder(TOPIC, "body").id("x").group("b").build());
			SendResult replacing = test.template()
				.send(DelayMessage.builder(TOPIC, "body").id("x").group("b").replaceIfPending().build());
			assertThat(plain.duplicate()).isTrue();
			assertThat(replacing.duplicate()).isTrue();
			assertThat(redis.opsForHash().get(keys.groups(), "x")).isEqualTo("a");
			assertThat(Transitions.ack(store, TOPIC, "x", x.leaseToken())).isTrue();
			assertThat(redis.hasKey(keys.groupSlots())).isFalse();
			assertThat(redis.hasKey(keys.groupRotation())).isFalse();
		}
	}

	/**
	 * A replacing send that moves a scheduled message to another group while the first
	 * group is paused and the second at its limit: once due, it waits for the second
	 * group's slot, never for the first group's pause.
	 */
	@Test
	void aReplacingSendMovesAScheduledMessageOutOfAPausedGroupIntoAGroupAtItsLimit() {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			test.template()
				.send(DelayMessage.builder(TOPIC, "body").id("x").group("a").delay(Duration.ofMillis(200)).build());
			test.template().send(DelayMessage.builder(TOPIC, "body").id("y").group("b").build());
			store.pauseGroup(TOPIC, "a", null);
			ClaimedMessage y = claim(store, 10, 1).get(0);
			SendResult moved = test.template()
				.send(DelayMessage.builder(TOPIC, "body2")
					.id("x")
					.group("b")
					.delay(Duration.ofMillis(100))
					.replaceIfPending()
					.build());
			assertThat(moved.replaced()).isTrue();
			await().pollDelay(Duration.ofMillis(250)).until(() -> true);
			Transitions.promote(store, TOPIC, 1000);
			assertThat(claim(store, 10, 1)).as("b at its limit").isEmpty();
			assertThat(Transitions.ack(store, TOPIC, "y", y.leaseToken())).isTrue();
			assertThat(ids(claim(store, 10, 1))).as("a's pause does not hold it").containsExactly("x");
		}
	}

	/**
	 * An id sent with a deduplication window in a group, handled, is not stored again by
	 * a send in the same group on a partitioned topic (the window is kept in the group's
	 * partition, where the send goes).
	 */
	@Test
	void aDeduplicatedIdOfAGroupIsRememberedOnAPartitionedTopic() {
		try (TestStore test = TestStore.builder().partitions(Map.of(TOPIC, 4)).build()) {
			DelayMessage message = DelayMessage.builder(TOPIC, "body")
				.id("x")
				.group("shop-17")
				.deduplicateFor(Duration.ofMinutes(10))
				.build();
			assertThat(test.template().send(message).duplicate()).isFalse();
			await().atMost(Duration.ofSeconds(3)).untilAsserted(() -> {
				List<ClaimedMessage> claimed = new ArrayList<>();
				for (String partition : partitions(test, 4)) {
					claimed.addAll(Transitions.claim(test.store(), partition, 10, MINUTE));
					claimed.forEach((m) -> Transitions.ack(test.store(), partition, m.id(), m.leaseToken()));
					if (!claimed.isEmpty()) {
						break;
					}
				}
				assertThat(ids(claimed)).containsExactly("x");
			});
			SendResult again = test.template().send(message);
			assertThat(again.duplicate()).as("remembered within its window").isTrue();
		}
	}

	/**
	 * A dead letter of a group replayed while its group is paused waits for the resume,
	 * and one replayed into a group whose strict-order retry waits does not pass the
	 * group's wait.
	 */
	@Test
	void aDeadLetterReplayedIntoAPausedOrWaitingGroupWaitsWithIt() {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			store.send(TOPIC, List.of(grouped("d", 5, "p"), grouped("e", 6, "w")));
			for (ClaimedMessage m : claim(store, 10, 1)) {
				assertThat(Transitions.deadLetter(store, TOPIC, m.id(), m.leaseToken(), "boom")).isTrue();
			}
			store.send(TOPIC, List.of(grouped("w1", 7, "w")));
			ClaimedMessage w1 = claim(store, 10, 1).get(0);
			assertThat(store.topic(TOPIC).retry("w1", w1.leaseToken(), MINUTE, "boom", GroupWait.IN_GROUP))
				.isPositive();
			store.pauseGroup(TOPIC, "p", null);
			assertThat(store.replayDead(TOPIC, List.of("d", "e")).replayed()).containsExactlyInAnyOrder("d", "e");
			Transitions.promote(store, TOPIC, 1000);
			assertThat(claim(store, 10, 1)).as("p paused, w waiting for w1's retry").isEmpty();
			assertThat(store.resumeGroup(TOPIC, "p")).isTrue();
			assertThat(ids(claim(store, 10, 1))).containsExactly("d");
		}
	}

	/**
	 * A message of a group under a per-group rate limit (1 per 500 ms) claimed and handed
	 * back unhandled (its application stopping) waits a whole pace before it is claimed
	 * again although it was never delivered (1,984-2,086 ms with 1 per 2 s): the claim
	 * set the group's pace in gr and no hand-back gives it back, as the topic's rate
	 * limit keeps its window. Documented; asserted only that it is claimed again.
	 */
	@Test
	void aHandedBackMessageOfARateLimitedGroupIsClaimedAgain() {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			store.send(TOPIC, List.of(due("a", 5).inGroup("g")));
			RateLimit pace = new RateLimit(1, Duration.ofMillis(500));
			ClaimedMessage a = rateClaim(store, pace).get(0);
			assertThat(Transitions.release(store, TOPIC, "a", a.leaseToken())).isTrue();
			long from = System.nanoTime();
			await().atMost(Duration.ofSeconds(5))
				.untilAsserted(() -> assertThat(ids(rateClaim(store, pace))).containsExactly("a"));
			System.out.println("GroupsMatrixReviewTests rate-limited hand-back: claimed again "
					+ (System.nanoTime() - from) / 1_000_000 + " ms after the hand-back (pace 500 ms)");
		}
	}

	private static List<ClaimedMessage> rateClaim(RedisMessageStore store, RateLimit groupRateLimit) {
		String consumer = LeaseTokens.newToken();
		return store.topic(TOPIC)
			.claim(consumer, consumer + ".1", 10, 0, MINUTE, null, 0, GroupWeights.NONE, groupRateLimit, WriteGate.OPEN)
			.join()
			.messages();
	}

	// ---------------------------------------------------------------- runtime level

	/**
	 * Two applications with a batch listener (batches of up to 5), group concurrency 2, 4
	 * groups × 6 messages and 4 messages of no group; the listener names some messages
	 * failed in a batch (a retry), and those of "dead" ids fail on every attempt (dead
	 * letters after 2). No group ever has more than 2 messages in batches at once, every
	 * other message is handled, the dead ones are in the dead set, and no slot, count or
	 * rotation entry is left.
	 */
	@Test
	void batchesWithPartialFailuresAndDeadLettersFreeTheirGroupsSlots() {
		Seen seen = new Seen();
		BiConsumer<App, List<Delivery<String>>> handler = (app, batch) -> {
			seen.enter(batch);
			try {
				Interruptibly.sleep(10);
				List<String> failed = new ArrayList<>();
				for (Delivery<String> delivery : batch) {
					boolean fails = delivery.id().contains("dead")
							|| (delivery.attempt() == 1 && Math.floorMod(delivery.id().hashCode(), 3) == 0);
					if (fails) {
						failed.add(delivery.id());
					}
					else {
						seen.done.add(delivery.id());
					}
				}
				if (!failed.isEmpty()) {
					throw new BatchListenerFailedException("some failed", failed, null);
				}
			}
			finally {
				seen.leave(batch);
			}
		};
		try (TestStore sender = TestStore.create();
				App one = App.batch(sender, settings(2, 2).withMaxBatchSize(5).withBatchTimeout(Duration.ofMillis(30)),
						true, handler);
				App two = App.batch(sender, settings(2, 2).withMaxBatchSize(5).withBatchTimeout(Duration.ofMillis(30)),
						true, handler)) {
			List<String> ids = new ArrayList<>();
			for (int i = 0; i < 6; i++) {
				for (int g = 0; g < 4; g++) {
					String id = "g" + g + "-" + ((i == 5 && g % 2 == 0) ? "dead" + i : i);
					sender.template().send(DelayMessage.builder(TOPIC, "body").id(id).group("g" + g).build());
					ids.add(id);
				}
			}
			for (int i = 0; i < 4; i++) {
				sender.template().send(DelayMessage.builder(TOPIC, "body").id("none-" + i).build());
				ids.add("none-" + i);
			}
			TopicKeys keys = sender.store().keys(TOPIC);
			StringRedisTemplate redis = sender.redis();
			List<String> alive = ids.stream().filter((id) -> !id.contains("dead")).toList();
			await().atMost(Duration.ofSeconds(20)).until(() -> seen.done.containsAll(alive));
			await().atMost(Duration.ofSeconds(10)).until(() -> redis.opsForZSet().zCard(keys.dead()) == 2);
			await().atMost(Duration.ofSeconds(5)).until(() -> redis.opsForZSet().zCard(keys.inFlight()) == 0);
			System.out.println("GroupsMatrixReviewTests batches: most of a group in batches at once " + seen.most
					+ ", largest batch " + seen.largest);
			assertThat(seen.most.values()).as("most of a group in batches at once").allMatch((n) -> n <= 2);
			assertThat(redis.hasKey(keys.groupSlots())).as("slots left").isFalse();
			assertThat(redis.hasKey(keys.groupRotation())).as("rotation left").isFalse();
			assertThat(redis.hasKey(keys.groupCounts())).as("counts left").isFalse();
		}
	}

	/**
	 * A graceful stop of an application whose batch of grouped messages is still being
	 * gathered (batch timeout 10 s), the reply to its hand-back lost after Redis ran it:
	 * the messages are handed back, their slots freed, and the other application (group
	 * concurrency 1) handles them at once, not after the lease (30 s).
	 */
	@Test
	void aStopWithAGroupedBatchBeingGatheredHandsItBackAndFreesItsSlots() {
		Seen seen = new Seen();
		BiConsumer<App, List<Delivery<String>>> handler = (app, batch) -> {
			seen.enter(batch);
			batch.forEach((d) -> seen.done.add(d.id()));
			seen.leave(batch);
		};
		try (TestStore sender = TestStore.create()) {
			App gathering = App.batch(sender,
					settings(1, 2).withMaxBatchSize(50).withBatchTimeout(Duration.ofSeconds(10)), true, handler);
			List<String> ids = List.of("g0-0", "g1-0", "g2-0");
			App other = null;
			try {
				TopicKeys keys = sender.store().keys(TOPIC);
				StringRedisTemplate redis = sender.redis();
				for (String id : ids) {
					sender.template()
						.send(DelayMessage.builder(TOPIC, "body").id(id).group(id.substring(0, 2)).build());
				}
				await().atMost(Duration.ofSeconds(5)).until(() -> redis.opsForZSet().zCard(keys.inFlight()) == 3);
				FaultyRedisProxy.Fault lost = gathering.store.proxy()
					.dropNextReplyToCommand(
							(command) -> command.get(0).equalsIgnoreCase("EVAL") && command.contains("g0-0"));
				long stopAt = System.nanoTime();
				gathering.runtime.stop();
				other = new App(sender, settings(1, 2), false, handler);
				await().atMost(Duration.ofSeconds(8)).until(() -> seen.done.containsAll(ids));
				System.out.println("GroupsMatrixReviewTests stop while gathering: handled by the other "
						+ (System.nanoTime() - stopAt) / 1_000_000 + " ms after the stop, hand-back reply lost "
						+ lost.hasFired());
				await().atMost(Duration.ofSeconds(3))
					.untilAsserted(() -> assertThat(redis.hasKey(keys.groupSlots())).as("slots left").isFalse());
			}
			finally {
				gathering.close();
				if (other != null) {
					other.close();
				}
			}
		}
	}

	/**
	 * A graceful stop whose batch handler outlives the shutdown timeout (it gives up 300
	 * ms after being interrupted, and returns), group concurrency 1, lease 30 s: the
	 * batch's messages keep their leases and slots until the handler settles them, so the
	 * other application never runs a second message of those groups meanwhile, and goes
	 * on with them once the handler has returned, not at the lease's end.
	 */
	@Test
	void aStopWhoseBatchOutlivesItsTimeoutKeepsItsGroupsSlotsUntilItReturns() {
		stopOutlivingItsTimeout(true);
	}

	/**
	 * The same with a single-message listener (three handlers).
	 */
	@Test
	void aStopWhoseHandlersOutliveTheTimeoutKeepTheirGroupsSlotsUntilTheyReturn() {
		stopOutlivingItsTimeout(false);
	}

	private void stopOutlivingItsTimeout(boolean batches) {
		Seen seen = new Seen();
		CountDownLatch hold = new CountDownLatch(1);
		Map<String, Long> startedAt = new ConcurrentHashMap<>();
		BiConsumer<App, List<Delivery<String>>> handler = (app, batch) -> {
			seen.enter(batch);
			batch.forEach((d) -> startedAt.putIfAbsent(d.id(), System.nanoTime()));
			try {
				if (app.blocking) {
					Interruptibly.await(hold);
					if (Thread.interrupted()) {
						Interruptibly.sleep(300);
					}
				}
				batch.forEach((d) -> seen.done.add(d.id()));
			}
			finally {
				seen.leave(batch);
			}
		};
		ListenerSettings stoppingSettings = settings(1, batches ? 1 : 3, Duration.ofMillis(200), Duration.ofMillis(50));
		ListenerSettings goingSettings = settings(1, batches ? 1 : 3);
		if (batches) {
			stoppingSettings = stoppingSettings.withMaxBatchSize(10).withBatchTimeout(Duration.ofMillis(30));
			goingSettings = goingSettings.withMaxBatchSize(10).withBatchTimeout(Duration.ofMillis(30));
		}
		try (TestStore sender = TestStore.create()) {
			App stopping = new App(sender, null, stoppingSettings, batches, false, handler);
			stopping.blocking = true;
			App going = null;
			try {
				List<DelayMessage> first = new ArrayList<>();
				for (int g = 0; g < 3; g++) {
					first.add(DelayMessage.builder(TOPIC, "body").id("g" + g + "-0").group("g" + g).build());
				}
				sender.template().sendAll(first);
				await().atMost(Duration.ofSeconds(5)).until(() -> seen.entered.size() == 3);
				for (int g = 0; g < 3; g++) {
					send(sender, "g" + g + "-1", "g" + g);
				}
				going = new App(sender, null, goingSettings, batches, false, handler);
				long stopAt = System.nanoTime();
				stopping.runtime.stop();
				long stopped = System.nanoTime();
				await().atMost(Duration.ofSeconds(40)).until(() -> seen.done.size() >= 6);
				List<Long> after = new ArrayList<>();
				for (int g = 0; g < 3; g++) {
					after.add((startedAt.get("g" + g + "-1") - stopAt) / 1_000_000);
				}
				System.out.println("GroupsMatrixReviewTests stop outliving its timeout (batches " + batches
						+ "): stop took " + (stopped - stopAt) / 1_000_000
						+ " ms, the groups' next messages started (ms after the stop) " + after + ", most per group "
						+ seen.most);
				assertThat(seen.most.values()).as("most of a group in handlers at once").containsOnly(1);
				assertThat(after).as("ms after the stop, lease 30 s").allMatch((ms) -> ms < 5000);
			}
			finally {
				hold.countDown();
				stopping.close();
				if (going != null) {
					going.close();
				}
			}
		}
	}

	/**
	 * Redis comes back empty (FLUSHALL) while groups hold slots (a handler blocked), a
	 * group is paused until resumed and another waits for a strict-order retry; two
	 * applications with group concurrency 1 and strict order. Nothing stays stuck: new
	 * messages of those groups, and of no group, are handled within seconds, the old
	 * handler's settle changes nothing, and no count is left below zero or behind.
	 */
	@Test
	void redisComingBackEmptyLeavesNoGroupStuck() {
		Assumptions.assumeTrue(TestRedis.canStartPrivateServer(), "needs a redis-server binary");
		try (RedisServerProcess server = TestRedis.startPrivateServer()) {
			redisComingBackEmpty(server, false, 1);
		}
	}

	/**
	 * The same on a topic of 3 partitions: its count is agreed again, and the groups of
	 * every partition go on.
	 */
	@Test
	void redisComingBackEmptyLeavesNoGroupOfAPartitionedTopicStuck() {
		Assumptions.assumeTrue(TestRedis.canStartPrivateServer(), "needs a redis-server binary");
		try (RedisServerProcess server = TestRedis.startPrivateServer()) {
			redisComingBackEmpty(server, false, 3);
		}
	}

	/**
	 * The same with a restart without persistence instead of FLUSHALL: connections cut,
	 * scripts gone from the script cache.
	 */
	@Test
	void aRestartWithoutPersistenceLeavesNoGroupStuck() {
		Assumptions.assumeTrue(TestRedis.canStartPrivateServer(), "needs a redis-server binary");
		try (RedisServerProcess server = TestRedis.startPrivateServer()) {
			redisComingBackEmpty(server, true, 1);
		}
	}

	private void redisComingBackEmpty(RedisServerProcess server, boolean restart, int partitions) {
		Seen seen = new Seen();
		CountDownLatch hold = new CountDownLatch(1);
		Map<String, AtomicInteger> attempts = new ConcurrentHashMap<>();
		BiConsumer<App, List<Delivery<String>>> handler = (app, batch) -> {
			seen.enter(batch);
			try {
				for (Delivery<String> delivery : batch) {
					if (delivery.id().equals("held-0")) {
						Interruptibly.await(hold);
					}
					if (delivery.id().equals("strict-0")
							&& attempts.computeIfAbsent(delivery.id(), (k) -> new AtomicInteger())
								.incrementAndGet() == 1) {
						throw new IllegalStateException("first attempt fails");
					}
					seen.done.add(delivery.id());
				}
			}
			finally {
				seen.leave(batch);
			}
		};
		ListenerSettings settings = settings(1, 2, Duration.ofSeconds(2), Duration.ofMinutes(10))
			.withStrictGroupOrder(true);
		Map<String, Integer> counts = Map.of(TOPIC, partitions);
		try (TestStore sender = TestStore.builder().on(server.host(), server.port()).partitions(counts).build();
				App one = new App(sender, server, counts, settings, false, false, handler);
				App two = new App(sender, server, counts, settings, false, false, handler)) {
			TopicPartitions names = TopicPartitions.of(counts);
			TopicKeys keys = sender.store().keys(names.nameForGroup(TOPIC, "strict"));
			StringRedisTemplate redis = sender.redis();
			sender.store().pauseGroup(TOPIC, "paused", null);
			send(sender, "paused-0", "paused");
			send(sender, "held-0", "held");
			send(sender, "held-1", "held");
			send(sender, "strict-0", "strict");
			send(sender, "strict-1", "strict");
			await().atMost(Duration.ofSeconds(5))
				.until(() -> seen.entered.contains("held-0") && attempts.containsKey("strict-0"));
			await().atMost(Duration.ofSeconds(2))
				.until(() -> redis.opsForZSet().score(keys.groupPauses(), "strict") != null);
			if (restart) {
				server.stop();
				server.start();
			}
			else {
				server.command("FLUSHALL");
			}
			long lostAt = System.nanoTime();
			List<String> after = List.of("paused-1", "held-2", "strict-2", "other-0");
			await().atMost(Duration.ofSeconds(10)).ignoreExceptions().until(() -> {
				for (String id : after) {
					if (!id.startsWith("other")) {
						send(sender, id, id.substring(0, id.indexOf('-')));
					}
					else {
						sender.template().send(DelayMessage.builder(TOPIC, "body").id(id).build());
					}
				}
				return true;
			});
			await().atMost(Duration.ofSeconds(10)).until(() -> seen.done.containsAll(after));
			long handled = (System.nanoTime() - lostAt) / 1_000_000;
			hold.countDown();
			await().atMost(Duration.ofSeconds(5)).until(() -> seen.done.contains("held-0"));
			System.out
				.println("GroupsMatrixReviewTests Redis back empty (restart " + restart + ", partitions " + partitions
						+ "): new messages handled " + handled + " ms after the loss, most per group " + seen.most);
			for (String partition : TopicPartitions.names(TOPIC, partitions)) {
				TopicKeys partitionKeys = sender.store().keys(partition);
				await().atMost(Duration.ofSeconds(5))
					.untilAsserted(() -> assertThat(redis.opsForZSet().zCard(partitionKeys.inFlight())).isZero());
				assertThat(redis.opsForHash().entries(partitionKeys.groupSlots())).as("slots left").isEmpty();
				assertThat(redis.opsForZSet().zCard(partitionKeys.groupRotation())).as("rotation left").isZero();
			}
		}
	}

	/**
	 * Three applications, group concurrency 1 and strict order, on one topic: a single
	 * listener on Redis directly, a batch listener 5 ms away (every reply), a single
	 * listener whose script replies (claims, acks, retries, hand-backs, in full or by
	 * digest) are dropped after Redis ran them every 120 ms; one first attempt in four
	 * fails (batches name it); halfway the batch application stops gracefully and a new
	 * one starts. Each group's messages succeed one at a time and in the order sent,
	 * every message is handled, and nothing is left in the group keys.
	 */
	@Test
	void strictGroupsStayInOrderAcrossBatchesSlowAndLostRepliesAndAStop() throws Exception {
		Seen seen = new Seen();
		Map<String, List<String>> succeeded = new ConcurrentHashMap<>();
		Map<String, AtomicInteger> attempts = new ConcurrentHashMap<>();
		BiConsumer<App, List<Delivery<String>>> handler = (app, batch) -> {
			seen.enter(batch);
			try {
				Interruptibly.sleep(3);
				List<String> failed = new ArrayList<>();
				for (Delivery<String> delivery : batch) {
					int attempt = attempts.computeIfAbsent(delivery.id(), (k) -> new AtomicInteger()).incrementAndGet();
					if (attempt == 1 && Math.floorMod(delivery.id().hashCode(), 4) == 0) {
						failed.add(delivery.id());
					}
					else {
						succeeded.computeIfAbsent(delivery.group(), (g) -> new CopyOnWriteArrayList<>())
							.add(delivery.id());
						seen.done.add(delivery.id());
					}
				}
				if (!failed.isEmpty()) {
					throw new BatchListenerFailedException("first attempt", failed, null);
				}
			}
			finally {
				seen.leave(batch);
			}
		};
		ListenerSettings single = settings(1, 3, Duration.ofSeconds(2), Duration.ofMillis(30))
			.withStrictGroupOrder(true)
			.withMaxAttempts(10);
		ListenerSettings batches = single.withMaxBatchSize(4).withBatchTimeout(Duration.ofMillis(20));
		try (TestStore sender = TestStore.create();
				App direct = new App(sender, single, false, handler);
				App lossy = new App(sender, single, true, handler)) {
			App slow = new App(sender, null, batches, true, true, handler);
			App late = null;
			try {
				slow.store.proxy().latency(Duration.ofMillis(5));
				List<String> ids = new ArrayList<>();
				for (int i = 0; i < 10; i++) {
					List<DelayMessage> round = new ArrayList<>();
					for (int g = 0; g < 6; g++) {
						String id = "g" + g + "-" + i;
						round.add(DelayMessage.builder(TOPIC, "body").id(id).group("g" + g).build());
						ids.add(id);
					}
					sender.template().sendAll(round);
				}
				AtomicInteger dropped = new AtomicInteger();
				long end = System.nanoTime() + Duration.ofSeconds(25).toNanos();
				boolean stopped = false;
				while (!seen.done.containsAll(ids) && System.nanoTime() < end) {
					FaultyRedisProxy.Fault fault = lossy.store.proxy()
						.dropNextReplyTo((name) -> name.startsWith("EVAL"));
					Thread.sleep(120);
					if (!fault.cancel()) {
						dropped.incrementAndGet();
					}
					if (!stopped && seen.done.size() >= ids.size() / 2) {
						stopped = true;
						slow.runtime.stop();
						late = new App(sender, null, batches, true, false, handler);
					}
				}
				TopicKeys keys = sender.store().keys(TOPIC);
				StringRedisTemplate redis = sender.redis();
				System.out.println("GroupsMatrixReviewTests strict chaos: " + seen.done.size() + " of " + ids.size()
						+ " handled, " + dropped.get() + " replies dropped, most per group " + seen.most
						+ ", largest batch " + seen.largest);
				assertThat(seen.done).containsAll(ids);
				assertThat(seen.most.values()).as("most of a group in handlers at once").containsOnly(1);
				for (int g = 0; g < 6; g++) {
					List<String> order = new ArrayList<>(new LinkedHashSet<>(succeeded.get("g" + g)));
					String group = "g" + g;
					assertThat(order).as("group %s in the order sent", group)
						.containsExactlyElementsOf(ids.stream().filter((id) -> groupOf(id).equals(group)).toList());
				}
				await().atMost(Duration.ofSeconds(5))
					.untilAsserted(() -> assertThat(redis.opsForZSet().zCard(keys.inFlight())).isZero());
				assertThat(redis.hasKey(keys.groupSlots())).as("slots left").isFalse();
				assertThat(redis.hasKey(keys.groupRotation())).as("rotation left").isFalse();
				assertThat(redis.hasKey(keys.groupReady())).as("ready left").isFalse();
			}
			finally {
				slow.close();
				if (late != null) {
					late.close();
				}
			}
		}
	}

	/**
	 * A batch listener with a group concurrency (concurrency 1, batches of up to 4) whose
	 * only handler runs a batch of 2 for 1.5 s counts the 2 messages its batch does not
	 * fill as free handlers: it claims 2 more messages of other groups, which wait in it
	 * for its handler, their groups' slots taken, while another application's idle
	 * handlers could run them at once (2 of 6 started 1,134 ms after the idle application
	 * had started, the other 4 at 332 ms; its start included). groups.md promises that a
	 * listener with a group concurrency claims only for its free handlers ("a message
	 * waiting in memory for a handler would hold its group's slot").
	 */
	@Test
	void aBusyBatchListenerWithAGroupConcurrencyClaimsNothingItCannotStart() {
		Map<String, Long> startedAt = new ConcurrentHashMap<>();
		Map<String, App> startedBy = new ConcurrentHashMap<>();
		BiConsumer<App, List<Delivery<String>>> handler = (app, batch) -> {
			batch.forEach((d) -> {
				startedAt.putIfAbsent(d.id(), System.nanoTime());
				startedBy.putIfAbsent(d.id(), app);
			});
			boolean first = batch.stream().anyMatch((d) -> d.id().equals("a-0"));
			Interruptibly.sleep(first ? 1500 : 10);
		};
		try (TestStore sender = TestStore.create();
				App busy = new App(sender, null,
						settings(1, 1).withMaxBatchSize(4).withBatchTimeout(Duration.ofMillis(10)), true, false,
						handler)) {
			sender.template()
				.sendAll(List.of(DelayMessage.builder(TOPIC, "body").id("a-0").group("a").build(),
						DelayMessage.builder(TOPIC, "body").id("b-0").group("b").build()));
			await().atMost(Duration.ofSeconds(5)).until(() -> startedAt.size() == 2);
			List<String> later = new ArrayList<>();
			for (int g = 0; g < 6; g++) {
				send(sender, "g" + g + "-0", "g" + g);
				later.add("g" + g + "-0");
			}
			await().pollDelay(Duration.ofMillis(200)).until(() -> true);
			long idleFrom = System.nanoTime();
			try (App idle = new App(sender, settings(1, 4), false, handler)) {
				await().atMost(Duration.ofSeconds(5)).until(() -> startedAt.keySet().containsAll(later));
				List<Long> waited = later.stream().map((id) -> (startedAt.get(id) - idleFrom) / 1_000_000).toList();
				long inBusy = later.stream().filter((id) -> startedBy.get(id) == busy).count();
				System.out.println("GroupsMatrixReviewTests busy batch listener: ms from the idle application's start"
						+ " to each start " + waited + ", " + inBusy + " of 6 started by the busy application");
				assertThat(waited).as("ms from the idle application's start to each start").allMatch((ms) -> ms < 1000);
			}
		}
	}

	/**
	 * A listener of the topic's dead letters, in the application whose listener (group
	 * concurrency 1, strict order, one attempt) buried a message of a group: the dead
	 * letter's delivery names its group; replayed while the group is paused, it waits for
	 * the resume and then runs in its group, one at a time; no slot is left.
	 */
	@Test
	void aDeadLetterListenerSeesTheGroupAndItsReplayWaitsForThePausedGroup() {
		Seen seen = new Seen();
		Map<String, String> deadGroups = new ConcurrentHashMap<>();
		Set<String> fixed = ConcurrentHashMap.newKeySet();
		String deadTopic = TopicPartitions.deadLettersOf(TOPIC);
		BiConsumer<App, List<Delivery<String>>> handler = (app, batch) -> {
			for (Delivery<String> delivery : batch) {
				if (delivery.topic().equals(deadTopic)) {
					deadGroups.put(delivery.id(), String.valueOf(delivery.group()));
					fixed.add(delivery.id());
					continue;
				}
				seen.enter(List.of(delivery));
				try {
					Interruptibly.sleep(5);
					if (delivery.id().contains("bad") && !fixed.contains(delivery.id())) {
						throw new IllegalStateException("bad");
					}
					seen.done.add(delivery.id());
				}
				finally {
					seen.leave(List.of(delivery));
				}
			}
		};
		ListenerSettings settings = settings(1, 3).withStrictGroupOrder(true).withMaxAttempts(1);
		try (TestStore sender = TestStore.create();
				App app = new App(sender, null, Map.of(), settings, false, false, handler, List.of(TOPIC, deadTopic),
						null)) {
			sender.template()
				.sendAll(List.of(DelayMessage.builder(TOPIC, "body").id("g-0").group("g").build(),
						DelayMessage.builder(TOPIC, "body").id("g-bad1").group("g").build(),
						DelayMessage.builder(TOPIC, "body").id("g-2").group("g").build(),
						DelayMessage.builder(TOPIC, "body").id("h-0").group("h").build()));
			await().atMost(Duration.ofSeconds(10)).until(() -> deadGroups.containsKey("g-bad1"));
			await().atMost(Duration.ofSeconds(5)).until(() -> seen.done.containsAll(List.of("g-0", "g-2", "h-0")));
			assertThat(deadGroups).containsEntry("g-bad1", "g");
			sender.store().pauseGroup(TOPIC, "g", null);
			assertThat(sender.store().replayDead(TOPIC, List.of("g-bad1")).replayed()).containsExactly("g-bad1");
			send(sender, "h-1", "h");
			await().atMost(Duration.ofSeconds(5)).until(() -> seen.done.contains("h-1"));
			await().pollDelay(Duration.ofMillis(300)).until(() -> true);
			assertThat(seen.done).as("g is paused").doesNotContain("g-bad1");
			assertThat(sender.store().resumeGroup(TOPIC, "g")).isTrue();
			await().atMost(Duration.ofSeconds(5)).until(() -> seen.done.contains("g-bad1"));
			TopicKeys keys = sender.store().keys(TOPIC);
			await().atMost(Duration.ofSeconds(5))
				.untilAsserted(() -> assertThat(sender.redis().hasKey(keys.groupSlots())).isFalse());
			assertThat(seen.most.values()).containsOnly(1);
		}
	}

	/**
	 * Two applications with group concurrency 1, one of them behind a proxy that holds a
	 * script's reply past its 300 ms timeout every 250 ms (claims sent again with their
	 * token, acknowledgements and retries sent again or left to the lease); one first
	 * attempt in five fails. Never two of a group in handlers, every message handled,
	 * nothing left in the group keys once the leases are settled.
	 */
	@Test
	void groupsHoldWhenRepliesComeAfterTheTimeout() throws Exception {
		Seen seen = new Seen();
		Map<String, AtomicInteger> attempts = new ConcurrentHashMap<>();
		BiConsumer<App, List<Delivery<String>>> handler = (app, batch) -> {
			seen.enter(batch);
			try {
				Interruptibly.sleep(5);
				for (Delivery<String> delivery : batch) {
					int attempt = attempts.computeIfAbsent(delivery.id(), (k) -> new AtomicInteger()).incrementAndGet();
					if (attempt == 1 && Math.floorMod(delivery.id().hashCode(), 5) == 0) {
						throw new IllegalStateException("first attempt");
					}
					seen.done.add(delivery.id());
				}
			}
			finally {
				seen.leave(batch);
			}
		};
		ListenerSettings settings = new ListenerSettings(3, 4, 10, Duration.ofSeconds(3),
				new RetryBackoff(Duration.ofMillis(30), 1.0, Duration.ofMillis(30)), Duration.ofSeconds(1),
				Duration.ofSeconds(2), Duration.ofMinutes(5), LatePolicy.DELIVER, Duration.ofHours(1))
			.withGroupConcurrency(1);
		try (TestStore sender = TestStore.create();
				App direct = new App(sender, settings, false, handler);
				App late = new App(sender, null, Map.of(), settings, false, true, handler, List.of(TOPIC),
						Duration.ofMillis(300))) {
			List<String> ids = new ArrayList<>();
			for (int i = 0; i < 8; i++) {
				List<DelayMessage> round = new ArrayList<>();
				for (int g = 0; g < 4; g++) {
					String id = "g" + g + "-" + i;
					round.add(DelayMessage.builder(TOPIC, "body").id(id).group("g" + g).build());
					ids.add(id);
				}
				sender.template().sendAll(round);
			}
			AtomicInteger held = new AtomicInteger();
			long end = System.nanoTime() + Duration.ofSeconds(20).toNanos();
			while (!seen.done.containsAll(ids) && System.nanoTime() < end) {
				FaultyRedisProxy.Fault fault = late.store.proxy()
					.delayNextReplyTo((name) -> name.startsWith("EVAL"), Duration.ofMillis(600));
				Thread.sleep(250);
				if (!fault.cancel()) {
					held.incrementAndGet();
				}
			}
			TopicKeys keys = sender.store().keys(TOPIC);
			StringRedisTemplate redis = sender.redis();
			System.out.println("GroupsMatrixReviewTests late replies: " + seen.done.size() + " of " + ids.size()
					+ " handled, " + held.get() + " replies held past the timeout, most per group " + seen.most);
			assertThat(seen.done).containsAll(ids);
			assertThat(seen.most.values()).as("most of a group in handlers at once").containsOnly(1);
			await().atMost(Duration.ofSeconds(8))
				.untilAsserted(() -> assertThat(redis.opsForZSet().zCard(keys.inFlight())).isZero());
			assertThat(redis.hasKey(keys.groupSlots())).as("slots left").isFalse();
			assertThat(redis.hasKey(keys.groupRotation())).as("rotation left").isFalse();
		}
	}

	// ---------------------------------------------------------------- helpers

	private static void send(TestStore sender, String id, String group) {
		sender.template().send(DelayMessage.builder(TOPIC, "body").id(id).group(group).build());
	}

	private static NewMessage grouped(String id, long due, String group) {
		byte[] body = MessageFormat.encodeBody(Map.of(MessageFormat.GROUP_HEADER, group),
				"x".getBytes(StandardCharsets.UTF_8));
		return new NewMessage(id, false, due, body).inGroup(group);
	}

	private static List<String> partitions(TestStore test, int count) {
		return TopicPartitions.names(TOPIC, count);
	}

	static List<ClaimedMessage> claim(RedisMessageStore store, int limit, int groupConcurrency) {
		String consumer = LeaseTokens.newToken();
		ClaimResult result = Transitions.claim(store, TOPIC, consumer, consumer + ".1", limit, 0, MINUTE, null,
				groupConcurrency);
		return result.messages();
	}

	private static ListenerSettings settings(int groupConcurrency, int concurrency) {
		return settings(groupConcurrency, concurrency, Duration.ofSeconds(2), Duration.ofMillis(50));
	}

	private static ListenerSettings settings(int groupConcurrency, int concurrency, Duration shutdownTimeout,
			Duration backoff) {
		return new ListenerSettings(concurrency, 4, 2, Duration.ofSeconds(30), new RetryBackoff(backoff, 1.0, backoff),
				Duration.ofSeconds(2), shutdownTimeout, Duration.ofMinutes(5), LatePolicy.DELIVER, Duration.ofHours(1))
			.withGroupConcurrency(groupConcurrency);
	}

	private static String groupOf(String id) {
		int dash = id.indexOf('-');
		return (dash < 0) ? id : id.substring(0, dash);
	}

	/** What every application's handlers saw: groups in handlers at once, ids handled. */
	static final class Seen {

		final Map<String, AtomicInteger> running = new ConcurrentHashMap<>();

		final Map<String, Integer> most = new ConcurrentHashMap<>();

		final Set<String> done = ConcurrentHashMap.newKeySet();

		final List<String> entered = new CopyOnWriteArrayList<>();

		volatile int largest;

		void enter(List<Delivery<String>> batch) {
			this.largest = Math.max(this.largest, batch.size());
			for (Delivery<String> delivery : batch) {
				this.entered.add(delivery.id());
				if (delivery.group() != null) {
					int now = this.running.computeIfAbsent(delivery.group(), (g) -> new AtomicInteger())
						.incrementAndGet();
					this.most.merge(delivery.group(), now, Math::max);
				}
			}
		}

		void leave(List<Delivery<String>> batch) {
			for (Delivery<String> delivery : batch) {
				if (delivery.group() != null) {
					this.running.get(delivery.group()).decrementAndGet();
				}
			}
		}

	}

	/** One application: a runtime with one listener, on a store of its own. */
	static final class App implements AutoCloseable {

		final TestStore store;

		final DelayQueueRuntime runtime;

		private final BiConsumer<App, List<Delivery<String>>> handler;

		volatile boolean blocking;

		App(TestStore sender, ListenerSettings settings, boolean behindProxy,
				BiConsumer<App, List<Delivery<String>>> handler) {
			this(sender, null, settings, behindProxy, handler);
		}

		App(TestStore sender, @Nullable RedisServerProcess server, ListenerSettings settings, boolean behindProxy,
				BiConsumer<App, List<Delivery<String>>> handler) {
			this(sender, server, settings, false, behindProxy, handler);
		}

		/** A batch listener's application. */
		static App batch(TestStore sender, ListenerSettings settings, boolean behindProxy,
				BiConsumer<App, List<Delivery<String>>> handler) {
			return new App(sender, null, settings, true, behindProxy, handler);
		}

		App(TestStore sender, @Nullable RedisServerProcess server, ListenerSettings settings, boolean batch,
				boolean behindProxy, BiConsumer<App, List<Delivery<String>>> handler) {
			this(sender, server, Map.of(), settings, batch, behindProxy, handler);
		}

		App(TestStore sender, @Nullable RedisServerProcess server, Map<String, Integer> partitions,
				ListenerSettings settings, boolean batch, boolean behindProxy,
				BiConsumer<App, List<Delivery<String>>> handler) {
			this(sender, server, partitions, settings, batch, behindProxy, handler, List.of(TOPIC), null);
		}

		App(TestStore sender, @Nullable RedisServerProcess server, Map<String, Integer> partitions,
				ListenerSettings settings, boolean batch, boolean behindProxy,
				BiConsumer<App, List<Delivery<String>>> handler, List<String> topics, @Nullable Duration timeout) {
			this.handler = handler;
			TestStore.Builder builder = TestStore.builder().prefix(sender.prefix()).partitions(partitions);
			if (timeout != null) {
				builder = builder.sendTimeout(timeout);
			}
			if (server != null) {
				builder = builder.on(server.host(), server.port());
			}
			this.store = (behindProxy ? builder.behindProxy() : builder).build();
			JsonPayloadConverter converter = new JsonPayloadConverter(new JsonMapper());
			DelayListenerEndpointRegistry registry = new DelayListenerEndpointRegistry(converter);
			Method method = batch ? ReflectionUtils.findMethod(App.class, "onBatch", List.class)
					: ReflectionUtils.findMethod(App.class, "on", Delivery.class);
			for (String topic : topics) {
				registry.register(new DelayListenerEndpoint(topic, this, method, settings));
			}
			this.runtime = new DelayQueueRuntime(this.store.store(), converter,
					new BrokerSettings(100, Duration.ofSeconds(1), Duration.ZERO), registry);
			this.runtime.start();
		}

		void on(Delivery<String> delivery) {
			this.handler.accept(this, List.of(delivery));
		}

		void onBatch(List<Delivery<String>> batch) {
			this.handler.accept(this, batch);
		}

		@Override
		public void close() {
			this.runtime.stop();
			this.store.close();
		}

	}

}

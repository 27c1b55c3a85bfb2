package io.github.delayqueue.review;

import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Predicate;
import java.util.stream.IntStream;

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
import io.github.delayqueue.store.ClaimedMessage;
import io.github.delayqueue.store.GroupView;
import io.github.delayqueue.store.GroupWait;
import io.github.delayqueue.store.LeaseTokens;
import io.github.delayqueue.store.MessageFormat;
import io.github.delayqueue.store.NewMessage;
import io.github.delayqueue.store.RateLimit;
import io.github.delayqueue.store.redis.RedisMessageStore;
import io.github.delayqueue.store.redis.TopicKeys;
import io.github.delayqueue.test.redis.FaultyRedisProxy;
import io.github.delayqueue.testsupport.Interruptibly;
import io.github.delayqueue.testsupport.OnOneServerVersion;
import io.github.delayqueue.testsupport.TestStore;
import io.github.delayqueue.testsupport.Transitions;
import io.github.delayqueue.time.RetryBackoff;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.data.redis.connection.DataType;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.util.ReflectionUtils;

import static io.github.delayqueue.review.GroupsReviewTests.body;
import static io.github.delayqueue.review.GroupsReviewTests.due;
import static io.github.delayqueue.review.GroupsReviewTests.ids;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * Adversarial review of pausing and resuming one group (issue 38) on a real Redis: is a
 * paused group's message ever claimed while it is paused, and is a group ever stranded
 * once its pause ends or it is resumed.
 */
@OnOneServerVersion
class GroupPauseReviewTests {

	private static final String TOPIC = "jobs";

	private static final Duration MINUTE = Duration.ofMinutes(1);

	/**
	 * Whatever puts a paused group back in the rotation or makes its messages ready again
	 * (an ack, a retry, a dead letter and its replay, an expired lease, a hand-back, a
	 * claim handed back, a cancel, a reschedule, a replacing send, a promote, a rebuilt
	 * rotation, a slot recount), claims of any limit (none, 1, 2), with priorities and
	 * messages of no group in the topic, pass its messages over; once it is resumed,
	 * every one of them is claimed.
	 */
	@Test
	void aPausedGroupsMessagesAreNeverClaimedWhateverPutsItBackInTheRotation() {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			TopicKeys keys = store.keys(TOPIC);
			StringRedisTemplate redis = test.redis();
			DelayQueueGroups groups = new DelayQueueGroups(store);
			List<NewMessage> first = new ArrayList<>();
			// The bodies carry their group's header, as the template writes it: a replay
			// reads the group from it.
			byte[] inG = MessageFormat.encodeBody(Map.of(MessageFormat.GROUP_HEADER, "g"),
					"x".getBytes(StandardCharsets.UTF_8));
			IntStream.range(0, 6).forEach((i) -> first.add(new NewMessage("g-" + i, false, 10 + i, inG).inGroup("g")));
			store.send(TOPIC, first);
			String consumer = LeaseTokens.newToken();
			ClaimResult six = Transitions.claim(store, TOPIC, consumer, consumer + ".1", 5, 0, MINUTE, null, 0);
			ClaimResult shortLease = Transitions.claim(store, TOPIC, consumer, consumer + ".2", 1, 0,
					Duration.ofMillis(50), null, 0);
			assertThat(ids(six.messages())).containsExactly("g-0", "g-1", "g-2", "g-3", "g-4");
			assertThat(ids(shortLease.messages())).containsExactly("g-5");
			store.send(TOPIC, List.of(due("g-6", 20).inGroup("g"), due("g-7", 21).withPriority(9).inGroup("g"),
					due("g-8", 22).inGroup("g"), due("g-9", 23).inGroup("g"), due("h-0", 24).inGroup("h"),
					due("h-1", 25).withPriority(3).inGroup("h"), due("n-0", 26), due("n-1", 27).withPriority(9)));
			groups.pause(TOPIC, "g");
			Predicate<String> ofG = (id) -> id.startsWith("g-");
			List<String> claimedWhilePaused = new ArrayList<>();
			Runnable claimAll = () -> {
				Transitions.promote(store, TOPIC, 1000);
				for (int limit : new int[] { 0, 1, 2 }) {
					for (int i = 0; i < 3; i++) {
						newClaim(store, 10, 10, MINUTE, limit).messages()
							.stream()
							.map(ClaimedMessage::id)
							.filter(ofG)
							.forEach(claimedWhilePaused::add);
					}
				}
			};
			claimAll.run();
			Map<String, ClaimedMessage> held = new HashMap<>();
			six.messages().forEach((m) -> held.put(m.id(), m));
			assertThat(Transitions.ack(store, TOPIC, "g-0", held.get("g-0").leaseToken())).isTrue();
			claimAll.run();
			assertThat(Transitions.retry(store, TOPIC, "g-1", held.get("g-1").leaseToken(), Duration.ofMillis(1), "x"))
				.isPositive();
			letPass(Duration.ofMillis(5));
			claimAll.run();
			assertThat(Transitions.deadLetter(store, TOPIC, "g-2", held.get("g-2").leaseToken(), "boom")).isTrue();
			assertThat(store.replayDead(TOPIC, List.of("g-2")).replayed()).containsExactly("g-2");
			claimAll.run();
			assertThat(Transitions.release(store, TOPIC, "g-3", held.get("g-3").leaseToken())).isTrue();
			claimAll.run();
			await().atMost(Duration.ofSeconds(2)).until(() -> {
				Transitions.expireLeases(store, TOPIC, 100, 10);
				return redis.opsForZSet().score(keys.inFlight(), "g-5") == null;
			});
			claimAll.run();
			assertThat(store.cancel(TOPIC, "g-6")).isTrue();
			assertThat(store.reschedule(TOPIC, "g-8", Duration.ofMillis(1))).isPositive();
			store.send(TOPIC, List.of(new NewMessage("g-9", false, 30, body(), true).inGroup("g")));
			letPass(Duration.ofMillis(5));
			claimAll.run();
			store.topic(TOPIC).recountGroupSlots().join();
			redis.delete(keys.groupRotation());
			claimAll.run();
			assertThat(claimedWhilePaused).as("messages of g claimed while it was paused").isEmpty();
			assertThat(groups.group(TOPIC, "g").paused()).isTrue();
			assertThat(groups.resume(TOPIC, "g")).isTrue();
			Set<String> after = new HashSet<>();
			for (int i = 0; i < 5; i++) {
				Transitions.promote(store, TOPIC, 1000);
				after.addAll(ids(claim(store, 20, 0)).stream().filter(ofG).toList());
			}
			assertThat(after).as("g's messages once resumed")
				.containsExactlyInAnyOrder("g-1", "g-2", "g-3", "g-5", "g-7", "g-8", "g-9");
			assertThat(Transitions.ack(store, TOPIC, "g-4", held.get("g-4").leaseToken()))
				.as("a message in flight through the pause settles as usual")
				.isTrue();
		}
	}

	/**
	 * A lost pauses key (deleted, or moved aside by the wrong-type repair): the group was
	 * parked in the rotation at +inf by its pause, and nothing else puts it back: no
	 * pause ends, no slot is freed, a later send to it finds it in the rotation already
	 * (finding, fixed: a claim without a group concurrency that finds no pause puts back
	 * the parked groups).
	 */
	@Test
	void aPausedGroupIsClaimedAgainOnceItsPauseIsLost() {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			TopicKeys keys = store.keys(TOPIC);
			StringRedisTemplate redis = test.redis();
			DelayQueueGroups groups = new DelayQueueGroups(store);
			pauseGAndLoseThePausesKey(test, groups);
			store.send(TOPIC, List.of(due("g-1", 7).inGroup("g")));
			List<String> claimed = ids(claims(5, store, 10, 0));
			GroupView view = groups.group(TOPIC, "g");
			assertThat(claimed)
				.as("g: paused %s, waiting at its limit %s, rotation %s", view.paused(), view.waitingAtLimit(),
						redis.opsForZSet().rangeWithScores(keys.groupRotation(), 0, -1).size())
				.containsExactly("g-0", "g-1");
		}
	}

	/**
	 * The same lost pauses key with the group parked past the rotation's head (40 groups
	 * ahead of it, claims of one, which read the first 17): the claim reads the parked
	 * groups past the head, puts them back and says more may be waiting.
	 */
	@Test
	void aPausedGroupParkedPastTheRotationsHeadIsClaimedAgainOnceItsPauseIsLost() {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			DelayQueueGroups groups = new DelayQueueGroups(store);
			store.send(TOPIC, List.of(due("g-0", 5).inGroup("g")));
			groups.pause(TOPIC, "g");
			sendOneToEachGroup(store, "x", 40, 0, 10);
			test.redis().delete(store.keys(TOPIC).groupPauses());
			ClaimResult first = newClaim(store, 1, 0, MINUTE, 0);
			assertThat(first.messages()).hasSize(1);
			assertThat(first.more()).isTrue();
			assertThat(ids(claims(2, store, 1, 0))).contains("g-0");
		}
	}

	/**
	 * 1,200 paused groups parked, their pauses lost: claims without a group concurrency
	 * put them back (those of the head, then up to 1000 past it, a claim) and serve them
	 * all in few claims.
	 */
	@Test
	void twelveHundredGroupsParkedWhenThePausesWereLostAreServedInFewClaims() {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			DelayQueueGroups groups = new DelayQueueGroups(store);
			sendOneToEachGroup(store, "p", 1200, 0, 5);
			for (int i = 0; i < 1200; i++) {
				groups.pause(TOPIC, "p" + i);
			}
			assertThat(claim(store, 100, 0)).isEmpty();
			test.redis().delete(store.keys(TOPIC).groupPauses());
			int claims = 0;
			Set<String> claimed = new HashSet<>();
			boolean more = true;
			while (more && claims < 100) {
				ClaimResult result = newClaim(store, 100, 0, MINUTE, 0);
				claims++;
				claimed.addAll(ids(result.messages()));
				more = result.more() || !result.messages().isEmpty();
			}
			System.out.println("GroupPauseReviewTests 1200 groups parked when the pauses were lost: " + claimed.size()
					+ " claimed in " + claims + " claims of 100");
			assertThat(claimed).hasSize(1200);
			assertThat(claims).isLessThanOrEqualTo(20);
		}
	}

	/**
	 * The same lost pauses key, with a claim of a group concurrency: it leaves the parked
	 * group to the slots recount (a group parked at its limit waits for a slot), which
	 * lets it back.
	 */
	@Test
	void aClaimWithAGroupConcurrencyLeavesAGroupWhosePauseIsLostToTheRecount() {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			DelayQueueGroups groups = new DelayQueueGroups(store);
			pauseGAndLoseThePausesKey(test, groups);
			assertThat(claims(2, store, 10, 1)).isEmpty();
			store.topic(TOPIC).recountGroupSlots().join();
			assertThat(ids(claim(store, 10, 1))).containsExactly("g-0");
		}
	}

	/**
	 * The same lost pauses key, with the slot recount that every application runs (since
	 * fb6e6ca it lets back a parked group with nothing in flight and no pause): the group
	 * is let back by the recount.
	 */
	@Test
	void aPausedGroupWhosePauseIsLostIsLetBackByTheRecount() {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			DelayQueueGroups groups = new DelayQueueGroups(store);
			pauseGAndLoseThePausesKey(test, groups);
			store.topic(TOPIC).recountGroupSlots().join();
			assertThat(ids(claim(store, 10, 0))).containsExactly("g-0");
		}
	}

	/**
	 * The same lost pauses key: resuming the group, the operator's way out, puts it back
	 * (finding, fixed: resume_group returned at once for a group it did not find paused).
	 */
	@Test
	void resumingAGroupWhosePauseIsLostMakesItsMessagesClaimable() {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			DelayQueueGroups groups = new DelayQueueGroups(store);
			pauseGAndLoseThePausesKey(test, groups);
			groups.resume(TOPIC, "g");
			List<String> claimed = ids(claims(3, store, 10, 0));
			assertThat(claimed).containsExactly("g-0");
		}
	}

	/**
	 * A pause that ended, before any claim found it ended: the group is still parked at
	 * +inf in the rotation, and the group's view, no longer paused, says it waits at its
	 * concurrency limit, in a topic with no limit and no message in flight (finding,
	 * fixed in group.lua).
	 */
	@Test
	void aGroupWhosePauseEndedIsNotSaidToWaitAtItsLimit() {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			DelayQueueGroups groups = new DelayQueueGroups(store);
			store.send(TOPIC, List.of(due("g-0", 5).inGroup("g")));
			groups.pause(TOPIC, "g", Duration.ofMillis(50));
			await().atMost(Duration.ofSeconds(2)).until(() -> !groups.group(TOPIC, "g").paused());
			GroupView view = groups.group(TOPIC, "g");
			assertThat(view.inFlight()).isZero();
			assertThat(view.waitingAtLimit()).as("waiting at its limit, with no limit and none in flight").isFalse();
		}
	}

	/**
	 * 150 pauses ending at once (a claim ends 100 a call): the claims that put groups
	 * back say more may be waiting, and few claims serve them all.
	 */
	@Test
	void oneHundredFiftyPausesEndingAtOnceAreServedInFewClaims() {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			DelayQueueGroups groups = new DelayQueueGroups(store);
			sendOneToEachGroup(store, "e", 150, 0, 5);
			for (int i = 0; i < 150; i++) {
				groups.pause(TOPIC, "e" + i, Duration.ofMillis(200));
			}
			assertThat(claim(store, 10, 0)).isEmpty();
			letPass(Duration.ofMillis(250));
			int claims = 0;
			Set<String> claimed = new HashSet<>();
			boolean more = true;
			while (more && claims < 40) {
				ClaimResult result = newClaim(store, 10, 10, MINUTE, 0);
				claims++;
				claimed.addAll(ids(result.messages()));
				more = result.more() || !result.messages().isEmpty();
			}
			System.out.println("GroupPauseReviewTests 150 pauses ending at once: " + claimed.size() + " claimed in "
					+ claims + " claims of 10");
			assertThat(claimed).hasSize(150);
			assertThat(claims).isLessThanOrEqualTo(18);
		}
	}

	/**
	 * 200 paused groups, put back in the rotation by their freed slots, ahead of the one
	 * group that is not: each claim parks the paused groups of the rotation's head and
	 * must say more may be waiting, or the consumers go idle with z ready (finding,
	 * fixed: claim.lua's return for a claim that looked at no message dropped "more").
	 */
	@Test
	void pausedGroupsPutBackAheadOfAnotherAreParkedByClaimsThatSayMoreIsWaiting() {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			DelayQueueGroups groups = new DelayQueueGroups(store);
			sendOneToEachGroup(store, "p", 200, 0, 5);
			List<ClaimedMessage> inFlight = claims(4, store, 200, 0);
			assertThat(inFlight).hasSize(200);
			sendOneToEachGroup(store, "p", 200, 1, 500);
			for (int i = 0; i < 4; i++) {
				assertThat(claim(store, 200, 1)).as("every group at its limit of 1").isEmpty();
			}
			for (int i = 0; i < 200; i++) {
				groups.pause(TOPIC, "p" + i);
			}
			for (ClaimedMessage message : inFlight) {
				assertThat(Transitions.ack(store, TOPIC, message.id(), message.leaseToken())).isTrue();
			}
			store.send(TOPIC, List.of(due("z-0", 900).inGroup("z")));
			int claims = 0;
			List<String> claimed = new ArrayList<>();
			boolean saidMore = true;
			while (claimed.isEmpty() && saidMore && claims < 40) {
				ClaimResult result = newClaim(store, 1, 0, MINUTE, 1);
				claims++;
				claimed.addAll(ids(result.messages()));
				saidMore = result.more();
			}
			System.out.println("GroupPauseReviewTests 200 paused groups put back ahead of z: z claimed after " + claims
					+ " claims of 1, the last said more " + saidMore);
			assertThat(claimed).containsExactly("z-0");
		}
	}

	/**
	 * A group at its limit and paused, whose pause ends while its message is still in
	 * flight: the claim that ends the pause puts it back, the next parks it at its limit,
	 * and the ack of its message brings it back for good.
	 */
	@Test
	void aGroupAtItsLimitWhosePauseEndsIsServedOnceItsSlotIsFreed() {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			DelayQueueGroups groups = new DelayQueueGroups(store);
			store.send(TOPIC, List.of(due("g-0", 5).inGroup("g"), due("g-1", 6).inGroup("g")));
			ClaimedMessage g0 = claim(store, 10, 1).get(0);
			groups.pause(TOPIC, "g", Duration.ofMillis(100));
			letPass(Duration.ofMillis(150));
			assertThat(claim(store, 10, 1)).isEmpty();
			assertThat(claim(store, 10, 1)).isEmpty();
			assertThat(groups.group(TOPIC, "g").waitingAtLimit()).isTrue();
			assertThat(Transitions.ack(store, TOPIC, g0.id(), g0.leaseToken())).isTrue();
			assertThat(ids(claim(store, 10, 1))).containsExactly("g-1");
		}
	}

	/**
	 * A rate-limited topic whose window is full while a pause ends: the claims that find
	 * no room return before reading the pauses; the first claim with room serves the
	 * group.
	 */
	@Test
	void aPauseThatEndsWhileTheRateLimitIsUsedUpIsServedWhenThereIsRoom() {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			DelayQueueGroups groups = new DelayQueueGroups(store);
			store.send(TOPIC, List.of(due("g-0", 5).inGroup("g"), due("h-0", 6).inGroup("h")));
			groups.pause(TOPIC, "g", Duration.ofMillis(100));
			RateLimit rate = new RateLimit(1, Duration.ofMillis(300));
			String consumer = LeaseTokens.newToken();
			assertThat(
					ids(Transitions.claim(store, TOPIC, consumer, consumer + ".1", 10, 0, MINUTE, rate, 0).messages()))
				.containsExactly("h-0");
			letPass(Duration.ofMillis(150));
			assertThat(Transitions.claim(store, TOPIC, consumer, consumer + ".2", 10, 0, MINUTE, rate, 0).messages())
				.isEmpty();
			await().atMost(Duration.ofSeconds(2))
				.until(() -> ids(
						Transitions.claim(store, TOPIC, consumer, LeaseTokens.newToken(), 10, 0, MINUTE, rate, 0)
							.messages())
					.contains("g-0"));
		}
	}

	/**
	 * A resume whose reply is lost after Redis ran it: the client sends it again, the
	 * second run finds the group not paused, and the caller (the endpoint: "group was not
	 * paused") was told it was not (finding, fixed: the request's token is kept a minute
	 * once it resumed a group, and the same request again answers {@code true}).
	 */
	@Test
	void aResumeWhoseReplyIsLostSaysTheGroupWasPaused() {
		try (TestStore test = TestStore.builder().behindProxy().build()) {
			RedisMessageStore store = test.store();
			DelayQueueGroups groups = new DelayQueueGroups(store);
			store.send(TOPIC, List.of(due("lost-0", 5).inGroup("lost-resume")));
			groups.pause(TOPIC, "lost-resume");
			FaultyRedisProxy.Fault lost = test.proxy()
				.dropNextReplyToCommand(FaultyRedisProxy.withArgumentContaining("EVALSHA", "lost-resume"));
			boolean resumed = groups.resume(TOPIC, "lost-resume");
			assertThat(lost.hasFired()).isTrue();
			assertThat(groups.group(TOPIC, "lost-resume").paused()).isFalse();
			assertThat(resumed).as("resume's answer after its reply was lost and it ran again").isTrue();
		}
	}

	/**
	 * Pauses twice, the second reply lost: the group is paused, once; a pause with a
	 * length sent again ends that length after the replay.
	 */
	@Test
	void aPauseWhoseReplyIsLostPausesTheGroupOnce() {
		try (TestStore test = TestStore.builder().behindProxy().build()) {
			RedisMessageStore store = test.store();
			DelayQueueGroups groups = new DelayQueueGroups(store);
			store.send(TOPIC, List.of(due("twice-0", 5).inGroup("twice"), due("other-0", 6).inGroup("other")));
			FaultyRedisProxy.Fault lost = test.proxy()
				.dropNextReplyToCommand(FaultyRedisProxy.withArgumentContaining("EVALSHA", "twice"));
			Instant until = groups.pause(TOPIC, "twice", Duration.ofMinutes(5));
			assertThat(lost.hasFired()).isTrue();
			assertThat(groups.group(TOPIC, "twice").pausedUntil()).isEqualTo(until);
			assertThat(ids(claim(store, 10, 0))).containsExactly("other-0");
			assertThat(test.redis().opsForZSet().size(store.keys(TOPIC).groupPauses())).isEqualTo(1);
			assertThat(groups.resume(TOPIC, "twice")).isTrue();
			assertThat(ids(claim(store, 10, 0))).containsExactly("twice-0");
		}
	}

	/**
	 * A claim whose reply is lost, sent again with the same token, when the first run
	 * only put back a group whose pause had ended: it leased nothing (and dropped its
	 * record), so the second run is a new claim and leases the group's message. Harmless
	 * (the consumer gets what the second run leased, each message once), but the model
	 * test's "the same claim again returns what the first leased" does not hold here
	 * (seed 3615455846022, step 282, on fb6e6ca).
	 */
	@Test
	void aClaimSentAgainAfterItPutBackAGroupWhosePauseEndedLeasesItsMessageOnce() {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			DelayQueueGroups groups = new DelayQueueGroups(store);
			store.send(TOPIC, List.of(due("g-0", 5).inGroup("g")));
			groups.pause(TOPIC, "g", Duration.ofMillis(20));
			letPass(Duration.ofMillis(40));
			String consumer = LeaseTokens.newToken();
			ClaimResult first = Transitions.claim(store, TOPIC, consumer, consumer + ".1", 4, 0, MINUTE, null, 1);
			ClaimResult again = Transitions.claim(store, TOPIC, consumer, consumer + ".1", 4, 0, MINUTE, null, 1);
			System.out.println("GroupPauseReviewTests claim sent again: first " + ids(first.messages()) + " (more "
					+ first.more() + "), again " + ids(again.messages()));
			assertThat(first.messages()).isEmpty();
			assertThat(first.more()).isTrue();
			assertThat(ids(again.messages())).containsExactly("g-0");
			assertThat(claim(store, 4, 1)).isEmpty();
		}
	}

	/**
	 * Bad input: names that cannot be a group's, lengths at the edges; a topic of several
	 * partitions pauses its group in the group's partition.
	 */
	@Test
	void badInputIsRefusedAndEdgeLengthsHold() {
		try (TestStore test = TestStore.builder().partitions(Map.of("spread", 2)).build()) {
			RedisMessageStore store = test.store();
			DelayQueueGroups groups = new DelayQueueGroups(store);
			assertThatExceptionOfType(IllegalArgumentException.class).isThrownBy(() -> groups.pause(TOPIC, "a\0b"));
			assertThatExceptionOfType(IllegalArgumentException.class).isThrownBy(() -> groups.pause(TOPIC, "a\u0001"));
			assertThatExceptionOfType(IllegalArgumentException.class).isThrownBy(() -> groups.pause(TOPIC, ""));
			assertThatExceptionOfType(IllegalArgumentException.class)
				.isThrownBy(() -> groups.pause(TOPIC, "g", Duration.ofNanos(999_999)));
			assertThatExceptionOfType(IllegalArgumentException.class)
				.isThrownBy(() -> groups.pause(TOPIC, "g", Duration.ofMillis(-5)));
			assertThatExceptionOfType(IllegalArgumentException.class)
				.isThrownBy(() -> groups.pause(TOPIC, "g", DelayQueueGroups.MAX_PAUSE.plusMillis(1)));
			// A send takes the topic to its two partitions: a pause never changes the
			// count.
			store.send("spread", List.of(NewMessage.afterDelay("s-1", Duration.ofHours(1), new byte[0])));
			groups.pause("spread", "g");
			assertThat(groups.group("spread", "g").paused()).isTrue();
			assertThat(groups.resume("spread", "g")).isTrue();
			Instant longest = groups.pause(TOPIC, "g", DelayQueueGroups.MAX_PAUSE);
			assertThat(groups.group(TOPIC, "g").pausedUntil()).isEqualTo(longest);
			Instant shortest = groups.pause(TOPIC, "g", Duration.ofMillis(1));
			assertThat(Duration.between(Instant.now(), shortest)).isLessThan(Duration.ofSeconds(1));
			assertThat(groups.pause(TOPIC, "gé\uD83D\uDE00", Duration.ofSeconds(5))).isNotNull();
			assertThat(groups.group(TOPIC, "gé\uD83D\uDE00").paused()).isTrue();
		}
	}

	/**
	 * A pauses key of the wrong type: every claim of the topic that finds grouped ready
	 * messages fails; the consumers' repair moves it aside like the other keys, and the
	 * topic's messages are delivered again.
	 */
	@Test
	void aPausesKeyOfTheWrongTypeIsMovedAsideAndTheTopicGoesOn() {
		String prefix = TestStore.uniquePrefix();
		Starts starts = new Starts();
		try (TestStore sender = TestStore.builder().prefix(prefix).build()) {
			sender.redis().opsForValue().set(sender.store().keys(TOPIC).groupPauses(), "x");
			try (App app = new App(prefix, false, 0, Duration.ofMillis(500), Duration.ofMillis(500), starts)) {
				long sentAt = System.currentTimeMillis();
				sendToGroup(sender, "h-0", "h");
				sender.template().send(DelayMessage.builder(TOPIC, "body").id("n-0").build());
				await().atMost(Duration.ofSeconds(5))
					.until(() -> starts.at.keySet().containsAll(List.of("h-0", "n-0")));
				System.out.println("GroupPauseReviewTests wrong-type pauses key: h-0 started "
						+ (starts.at.get("h-0") - sentAt) + " ms, n-0 " + (starts.at.get("n-0") - sentAt)
						+ " ms after the send (idle check 500 ms)");
				assertThat(sender.redis().type(sender.store().keys(TOPIC).groupPauses()))
					.as("moved aside by the repair")
					.isEqualTo(DataType.NONE);
			}
		}
	}

	/**
	 * A pause with a length that ends while the consumers are idle, with the default idle
	 * check interval (5 s) and broker max sleep (5 s): how long until its messages start
	 * (groups.md said "within about 2.5 s of the end": 3,502-3,589 ms measured, a finding
	 * fixed in the docs, which now say about one interval); and a resume while they are
	 * idle (its signal).
	 */
	@Test
	void aPauseThatEndsWhileTheConsumersAreIdleIsDeliveredWithinAboutOneIdleCheck() {
		long late = pauseEndToStart(0);
		assertThat(late).as("ms from the pause's end to the start, idle check 5 s").isLessThan(5500);
	}

	/**
	 * The same with a group concurrency of 1: the claim that puts the group back takes
	 * nothing and says more may be waiting; a listener with a group concurrency claims
	 * nothing early, and until fb6e6ca ClaimLoop.mayHaveMore read that as "the held
	 * messages are full" and waited for the next idle claim (8,504-8,517 ms at 268e661;
	 * 3,504 ms since). Not two idle claims: at most one idle check and a bit.
	 */
	@Test
	void aPauseThatEndsWhileConsumersWithAGroupLimitAreIdleIsDeliveredByTheNextIdleClaim() {
		long late = pauseEndToStart(1);
		assertThat(late).as("ms from the pause's end to the start, idle check 5 s, group concurrency 1")
			.isLessThan(5500);
	}

	private static long pauseEndToStart(int groupConcurrency) {
		String prefix = TestStore.uniquePrefix();
		Starts starts = new Starts();
		try (TestStore sender = TestStore.builder().prefix(prefix).build();
				App app = new App(prefix, false, groupConcurrency, Duration.ofSeconds(5), Duration.ofSeconds(5),
						starts)) {
			DelayQueueGroups groups = new DelayQueueGroups(sender.store());
			groups.pause(TOPIC, "r");
			Instant until = groups.pause(TOPIC, "e", Duration.ofMillis(500));
			sendToGroup(sender, "e-0", "e");
			sendToGroup(sender, "r-0", "r");
			await().atMost(Duration.ofSeconds(15)).until(() -> starts.at.containsKey("e-0"));
			long late = starts.at.get("e-0") - until.toEpochMilli();
			long resumedAt = System.currentTimeMillis();
			assertThat(groups.resume(TOPIC, "r")).isTrue();
			await().atMost(Duration.ofSeconds(6)).until(() -> starts.at.containsKey("r-0"));
			long resumeLate = starts.at.get("r-0") - resumedAt;
			System.out.println("GroupPauseReviewTests idle, group concurrency " + groupConcurrency + ": started " + late
					+ " ms after the pause's end, " + resumeLate + " ms after the resume");
			assertThat(resumeLate).isLessThan(1000);
			return late;
		}
	}

	/**
	 * Two instances with a group concurrency of 1, one behind a proxy that delays every
	 * reply by 3 ms: g is paused while its messages flow; once the pause returned (and
	 * the claims sent before it had their replies), no message of g starts until it is
	 * resumed, the other groups go on, and after the resume every message is handled.
	 */
	@Test
	void noMessageOfAPausedGroupStartsAcrossTwoInstancesWhileOthersGoOn() {
		String prefix = TestStore.uniquePrefix();
		Starts starts = new Starts();
		starts.workMillis = 20;
		try (TestStore sender = TestStore.builder().prefix(prefix).build();
				App slow = new App(prefix, true, 1, Duration.ofSeconds(2), Duration.ofSeconds(1), starts);
				App plain = new App(prefix, false, 1, Duration.ofSeconds(2), Duration.ofSeconds(1), starts)) {
			slow.store.proxy().latency(Duration.ofMillis(3));
			DelayQueueGroups groups = new DelayQueueGroups(sender.store());
			List<String> ids = new ArrayList<>();
			for (int i = 0; i < 30; i++) {
				for (String group : List.of("g", "h", "k")) {
					String id = group + "-" + i;
					sendToGroup(sender, id, group);
					ids.add(id);
				}
			}
			await().atMost(Duration.ofSeconds(5)).until(() -> starts.at.containsKey("g-3"));
			groups.pause(TOPIC, "g");
			long pausedAt = System.currentTimeMillis() + 100;
			await().atMost(Duration.ofSeconds(10))
				.until(() -> starts.done.keySet()
					.containsAll(ids.stream().filter((id) -> !id.startsWith("g-")).toList()));
			long resumedAt = System.currentTimeMillis();
			List<String> startedWhilePaused = starts.at.entrySet()
				.stream()
				.filter((e) -> e.getKey().startsWith("g-") && e.getValue() > pausedAt && e.getValue() < resumedAt)
				.map(Map.Entry::getKey)
				.toList();
			long gBefore = starts.at.keySet().stream().filter((id) -> id.startsWith("g-")).count();
			long inGrace = starts.at.entrySet()
				.stream()
				.filter((e) -> e.getKey().startsWith("g-") && e.getValue() > pausedAt - 100 && e.getValue() <= pausedAt)
				.count();
			assertThat(groups.resume(TOPIC, "g")).isTrue();
			await().atMost(Duration.ofSeconds(10)).until(() -> starts.done.keySet().containsAll(ids));
			System.out.println("GroupPauseReviewTests two instances: g started before the pause " + gBefore
					+ ", in the 100 ms after the pause returned " + inGrace + ", later while paused "
					+ startedWhilePaused + ", paused for " + (resumedAt - pausedAt) + " ms");
			assertThat(startedWhilePaused).isEmpty();
		}
	}

	/**
	 * A listener without a group concurrency claims for its free handlers plus a
	 * prefetch: messages of a group claimed before its pause and waiting in the
	 * application for a handler start after the pause returned, one by one as handlers
	 * free up.
	 */
	@Test
	void noMessageOfAPausedGroupStartsAfterThePauseReturnedFromAListenersPrefetch() {
		String prefix = TestStore.uniquePrefix();
		Starts starts = new Starts();
		starts.workMillis = 150;
		try (TestStore sender = TestStore.builder().prefix(prefix).build();
				App app = new App(prefix, false, 0, Duration.ofSeconds(2), Duration.ofSeconds(1), starts, 1)) {
			DelayQueueGroups groups = new DelayQueueGroups(sender.store());
			for (int i = 0; i < 10; i++) {
				sendToGroup(sender, "g-" + i, "g");
			}
			await().atMost(Duration.ofSeconds(5)).until(() -> starts.at.containsKey("g-1"));
			groups.pause(TOPIC, "g");
			long pausedAt = System.currentTimeMillis();
			letPass(Duration.ofMillis(1200));
			List<String> after = starts.at.entrySet()
				.stream()
				.filter((e) -> e.getValue() > pausedAt + 100)
				.map(Map.Entry::getKey)
				.sorted()
				.toList();
			System.out
				.println("GroupPauseReviewTests prefetch: started more than 100 ms after the pause returned " + after
						+ ", in flight " + sender.redis().opsForZSet().zCard(sender.store().keys(TOPIC).inFlight()));
			assertThat(after).as("messages of g started after its pause returned").isEmpty();
		}
	}

	/**
	 * A message of a group made ready in a ready list (by a promote of a version without
	 * groups, during a rolling upgrade), while its group is paused: it joins its group
	 * and waits for the resume (finding, fixed: claim.lua took ids from the lists
	 * whatever their group's limit, and whatever its pause).
	 */
	@Test
	void aPausedGroupsMessageInAReadyListIsNotClaimed() {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			TopicKeys keys = store.keys(TOPIC);
			StringRedisTemplate redis = test.redis();
			store.send(TOPIC, List.of(due("x", 5).inGroup("g"), due("h-0", 6).inGroup("h")));
			new DelayQueueGroups(store).pause(TOPIC, "g");
			// As a promote of a version without groups leaves it: in the ready list.
			Set<String> members = redis.opsForZSet().range(keys.groupReady(), 0, -1);
			members.stream()
				.filter((m) -> m.startsWith("g\0"))
				.forEach((m) -> redis.opsForZSet().remove(keys.groupReady(), m));
			redis.opsForHash().delete(keys.groupCounts(), "g");
			redis.opsForList().rightPush(keys.ready(), "x");
			assertThat(ids(claim(store, 10, 0))).containsExactly("h-0");
			assertThat(ids(claim(store, 10, 0))).isEmpty();
			assertThat(redis.opsForList().size(keys.ready())).isZero();
			new DelayQueueGroups(store).resume(TOPIC, "g");
			assertThat(ids(claim(store, 10, 0))).containsExactly("x");
		}
	}

	/**
	 * The same during a rolling upgrade with a group concurrency of 1: a message of a
	 * group whose slot is taken, made ready in a ready list, joins its group and is
	 * claimed once the slot is freed, after the group's earlier message.
	 */
	@Test
	void aMessageOfAGroupAtItsLimitInAReadyListWaitsForTheSlot() {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			TopicKeys keys = store.keys(TOPIC);
			StringRedisTemplate redis = test.redis();
			store.send(TOPIC, List.of(due("g-0", 5).inGroup("g"), due("x", 6).inGroup("g")));
			ClaimedMessage first = claim(store, 10, 1).get(0);
			assertThat(first.id()).isEqualTo("g-0");
			// As a promote of a version without groups leaves it: in the ready list.
			Set<String> members = redis.opsForZSet().range(keys.groupReady(), 0, -1);
			members.forEach((m) -> redis.opsForZSet().remove(keys.groupReady(), m));
			redis.opsForHash().delete(keys.groupCounts(), "g");
			redis.opsForList().rightPush(keys.ready(), "x");
			assertThat(ids(claim(store, 10, 1))).isEmpty();
			assertThat(ids(claim(store, 10, 1))).isEmpty();
			Transitions.ack(store, TOPIC, "g-0", first.leaseToken());
			assertThat(ids(claim(store, 10, 1))).containsExactly("x");
			assertThat(redis.opsForHash().get(keys.groupSlots(), "g")).isEqualTo("1");
		}
	}

	/**
	 * A slow-down of a message of a group (retry.lua pausing its group until the next
	 * attempt) meets an operator's pause: a pause until resumed, or one that ends later,
	 * is kept; the slow-down's own pause ends by itself; a resume lifts either.
	 */
	@Test
	void aSlowDownsPauseKeepsAnOperatorsLongerPauseAndEndsByItself() {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			DelayQueueGroups groups = new DelayQueueGroups(store);
			store.send(TOPIC,
					List.of(due("g-0", 5).inGroup("g"), due("g-1", 6).inGroup("g"), due("g-2", 7).inGroup("g")));
			Map<String, ClaimedMessage> held = new HashMap<>();
			claim(store, 2, 0).forEach((m) -> held.put(m.id(), m));
			assertThat(held).containsOnlyKeys("g-0", "g-1");
			groups.pause(TOPIC, "g");
			assertThat(store.topic(TOPIC)
				.postpone("g-0", held.get("g-0").leaseToken(), Duration.ofMillis(20), GroupWait.GROUP)).isPositive();
			assertThat(groups.group(TOPIC, "g").pausedUntil()).as("the operator's pause until resumed is kept")
				.isNull();
			assertThat(groups.group(TOPIC, "g").paused()).isTrue();
			letPass(Duration.ofMillis(50));
			Transitions.promote(store, TOPIC, 1000);
			assertThat(claim(store, 10, 0)).isEmpty();
			assertThat(groups.resume(TOPIC, "g")).isTrue();
			assertThat(ids(claim(store, 10, 0))).containsExactlyInAnyOrder("g-0", "g-2");
			Instant longer = groups.pause(TOPIC, "g", Duration.ofMinutes(10));
			store.send(TOPIC, List.of(due("g-3", 9).inGroup("g")));
			assertThat(store.topic(TOPIC)
				.postpone("g-1", held.get("g-1").leaseToken(), Duration.ofMillis(20), GroupWait.GROUP)).isPositive();
			assertThat(groups.group(TOPIC, "g").pausedUntil()).as("a pause that ends later is kept").isEqualTo(longer);
			assertThat(groups.resume(TOPIC, "g")).isTrue();
			ClaimedMessage g3 = claim(store, 10, 0).get(0);
			assertThat(g3.id()).isEqualTo("g-3");
			assertThat(store.topic(TOPIC).postpone("g-3", g3.leaseToken(), Duration.ofMillis(100), GroupWait.GROUP))
				.isPositive();
			Instant slowedUntil = groups.group(TOPIC, "g").pausedUntil();
			assertThat(slowedUntil).as("paused by the slow-down until its next attempt").isNotNull();
			List<ClaimedMessage> after = new ArrayList<>();
			await().atMost(Duration.ofSeconds(3)).until(() -> {
				Transitions.promote(store, TOPIC, 1000);
				after.addAll(claim(store, 10, 0));
				return after.size() == 2;
			});
			assertThat(ids(after)).containsExactlyInAnyOrder("g-1", "g-3");
			assertThat(after).as("claimed once the slow-down's pause ended")
				.allMatch((m) -> !m.claimedAt().isBefore(slowedUntil));
		}
	}

	/**
	 * Strict group order: a failed message waits in its group, and only its group's pause
	 * holds it until its next attempt. An operator's shorter pause of the group
	 * (pause_group set a new end, where retry.lua keeps a later one) ended that wait
	 * early: the message was retried 20 ms later instead of 10 minutes (finding, fixed:
	 * retry.lua keeps the wait's end apart, in the group waits key, and neither a pause
	 * nor a resume ends the group's pause before it).
	 */
	@Test
	void anOperatorsShorterPauseDoesNotCutAStrictOrderBackoff() {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			DelayQueueGroups groups = new DelayQueueGroups(store);
			store.send(TOPIC, List.of(due("g-0", 5).inGroup("g"), due("g-1", 6).inGroup("g")));
			ClaimedMessage g0 = claim(store, 1, 1).get(0);
			assertThat(
					store.topic(TOPIC).retry("g-0", g0.leaseToken(), MINUTE.multipliedBy(10), "x", GroupWait.IN_GROUP))
				.isPositive();
			Instant backoffEnd = groups.group(TOPIC, "g").pausedUntil();
			groups.pause(TOPIC, "g", Duration.ofMillis(20));
			letPass(Duration.ofMillis(50));
			List<ClaimedMessage> claimed = claims(3, store, 4, 1);
			assertThat(claimed).as("claimed before the backoff's end %s", backoffEnd)
				.allMatch((m) -> !m.claimedAt().isBefore(backoffEnd));
		}
	}

	/**
	 * A seeded run of random steps on one topic (sends in four groups and none, with
	 * priorities and short delays; claims of limits 0, 1 and 2, some with short leases;
	 * acks, retries, hand-backs, dead letters replayed, cancels, reschedules, expired
	 * leases, slot recounts, a lost rotation; pauses until resumed or for ten minutes,
	 * and resumes): no claim ever takes a message of a group paused at that moment, and
	 * once every group is resumed every message is claimed. Seed: {@code
	 * -Ddelay-queue.pause-review.seed}.
	 */
	@Test
	void seededRunsOfRandomStepsNeverClaimAPausedGroupsMessageAndLoseNone() {
		Long fixed = Long.getLong("delay-queue.pause-review.seed");
		long first = (fixed != null) ? fixed : System.nanoTime();
		int steps = Integer.getInteger("delay-queue.pause-review.steps", 700);
		for (int run = 0; run < Integer.getInteger("delay-queue.pause-review.seeds", 1); run++) {
			seededRun(first + run, steps);
		}
	}

	private static void seededRun(long seed, int steps) {
		Random random = new Random(seed);
		String[] names = { "a", "b", "c", "d" };
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			DelayQueueGroups groups = new DelayQueueGroups(store);
			Map<String, Instant> paused = new HashMap<>();
			Map<String, String> groupOf = new HashMap<>();
			Map<String, ClaimedMessage> inFlight = new HashMap<>();
			Set<String> pending = new HashSet<>();
			int next = 0;
			int claimedCount = 0;
			for (int step = 0; step < steps; step++) {
				String context = "seed " + seed + " step " + step;
				int op = random.nextInt(100);
				if (op < 22) {
					String id = "m" + next++;
					String group = (random.nextInt(5) == 0) ? "" : names[random.nextInt(names.length)];
					byte[] bytes = group.isEmpty() ? body() : MessageFormat
						.encodeBody(Map.of(MessageFormat.GROUP_HEADER, group), "x".getBytes(StandardCharsets.UTF_8));
					NewMessage message = random.nextBoolean() ? new NewMessage(id, false, 1 + step, bytes)
							: new NewMessage(id, true, 1 + random.nextInt(3), bytes);
					if (random.nextInt(4) == 0) {
						message = message.withPriority(1 + random.nextInt(9));
					}
					store.send(TOPIC, List.of(group.isEmpty() ? message : message.inGroup(group)));
					groupOf.put(id, group);
					pending.add(id);
				}
				else if (op < 45) {
					int limit = random.nextInt(3);
					Duration lease = (random.nextInt(4) == 0) ? Duration.ofMillis(20) : MINUTE;
					if (random.nextBoolean()) {
						Transitions.promote(store, TOPIC, 1000);
					}
					List<ClaimedMessage> claimed = newClaim(store, 1 + random.nextInt(8), random.nextInt(3), lease,
							limit)
						.messages();
					for (ClaimedMessage message : claimed) {
						String group = groupOf.get(message.id());
						Instant until = paused.get(group);
						assertThat(until == null || !message.claimedAt().isBefore(until))
							.as("%s: %s of group %s claimed at %s, paused until %s", context, message.id(), group,
									message.claimedAt(), until)
							.isTrue();
						inFlight.put(message.id(), message);
						claimedCount++;
					}
				}
				else if (op < 62 && !inFlight.isEmpty()) {
					List<String> held = new ArrayList<>(inFlight.keySet());
					held.sort(null);
					ClaimedMessage message = inFlight.remove(held.get(random.nextInt(held.size())));
					int how = random.nextInt(4);
					if (how == 0 && Transitions.ack(store, TOPIC, message.id(), message.leaseToken())) {
						pending.remove(message.id());
					}
					else if (how == 1) {
						Transitions.retry(store, TOPIC, message.id(), message.leaseToken(), Duration.ofMillis(1), "x");
					}
					else if (how == 2) {
						Transitions.release(store, TOPIC, message.id(), message.leaseToken());
					}
					else if (how == 3
							&& Transitions.deadLetter(store, TOPIC, message.id(), message.leaseToken(), "x")) {
						store.replayDead(TOPIC, List.of(message.id()));
					}
				}
				else if (op < 72) {
					String group = names[random.nextInt(names.length)];
					int how = random.nextInt(3);
					if (how == 0) {
						groups.pause(TOPIC, group);
						paused.put(group, Instant.MAX);
					}
					else {
						paused.put(group, groups.pause(TOPIC, group,
								(how == 1) ? Duration.ofMinutes(10) : Duration.ofMillis(1 + random.nextInt(30))));
					}
				}
				else if (op < 80) {
					String group = names[random.nextInt(names.length)];
					Instant until = paused.remove(group);
					boolean resumed = groups.resume(TOPIC, group);
					if (until == null || until.isAfter(Instant.now().plusSeconds(60))) {
						assertThat(resumed).as(context).isEqualTo(until != null);
					}
				}
				else if (op < 86) {
					List<String> ready = pending.stream().filter((id) -> !inFlight.containsKey(id)).sorted().toList();
					if (!ready.isEmpty()) {
						String id = ready.get(random.nextInt(ready.size()));
						if (random.nextBoolean()) {
							if (store.cancel(TOPIC, id)) {
								pending.remove(id);
							}
						}
						else {
							store.reschedule(TOPIC, id, Duration.ofMillis(1));
						}
					}
				}
				else if (op < 94) {
					Transitions.expireLeases(store, TOPIC, 100, 1000);
				}
				else if (op < 97) {
					store.topic(TOPIC).recountGroupSlots().join();
				}
				else if (op < 98) {
					test.redis().delete(store.keys(TOPIC).groupRotation());
				}
			}
			for (String group : names) {
				groups.resume(TOPIC, group);
			}
			for (ClaimedMessage message : inFlight.values()) {
				if (Transitions.ack(store, TOPIC, message.id(), message.leaseToken())) {
					pending.remove(message.id());
				}
			}
			for (int round = 0; round < 60 && !pending.isEmpty(); round++) {
				letPass(Duration.ofMillis(5));
				Transitions.promote(store, TOPIC, 1000);
				Transitions.expireLeases(store, TOPIC, 1000, 1000);
				for (ClaimedMessage message : claim(store, 200, 0)) {
					if (Transitions.ack(store, TOPIC, message.id(), message.leaseToken())) {
						pending.remove(message.id());
					}
				}
			}
			System.out.println("GroupPauseReviewTests seeded run: seed " + seed + ", " + next + " sent, " + claimedCount
					+ " claims of a message in the run, left " + pending);
			assertThat(pending).as("seed %d: messages never claimed once every group was resumed", seed).isEmpty();
		}
	}

	/**
	 * Claims as a new consumer, leasing for a minute, none early.
	 * @param store the store
	 * @param limit how many at most
	 * @param groupConcurrency the group concurrency, 0 for none
	 * @return what it leased
	 */
	private static List<ClaimedMessage> claim(RedisMessageStore store, int limit, int groupConcurrency) {
		return newClaim(store, limit, 0, MINUTE, groupConcurrency).messages();
	}

	/**
	 * Claims so many times, each as a new consumer, leasing for a minute, none early.
	 * @param times how many claims
	 * @param store the store
	 * @param limit how many at most each
	 * @param groupConcurrency the group concurrency, 0 for none
	 * @return what they leased, in order
	 */
	private static List<ClaimedMessage> claims(int times, RedisMessageStore store, int limit, int groupConcurrency) {
		List<ClaimedMessage> claimed = new ArrayList<>();
		for (int i = 0; i < times; i++) {
			claimed.addAll(claim(store, limit, groupConcurrency));
		}
		return claimed;
	}

	/**
	 * One claim as a new consumer.
	 * @param store the store
	 * @param limit how many at most
	 * @param earlyLimit how many early at most
	 * @param lease the lease
	 * @param groupConcurrency the group concurrency, 0 for none
	 * @return its result
	 */
	private static ClaimResult newClaim(RedisMessageStore store, int limit, int earlyLimit, Duration lease,
			int groupConcurrency) {
		String consumer = LeaseTokens.newToken();
		return Transitions.claim(store, TOPIC, consumer, consumer + ".1", limit, earlyLimit, lease, null,
				groupConcurrency);
	}

	/**
	 * Sends one message to each of so many groups: {@code <prefix><i>-<index>} in group
	 * {@code <prefix><i>}, due at {@code firstDue + i} ms.
	 * @param store the store
	 * @param prefix the groups' prefix
	 * @param groups how many groups
	 * @param index the messages' index in their group
	 * @param firstDue when the first is due (epoch ms)
	 */
	private static void sendOneToEachGroup(RedisMessageStore store, String prefix, int groups, int index,
			long firstDue) {
		List<NewMessage> messages = new ArrayList<>();
		IntStream.range(0, groups)
			.forEach((i) -> messages.add(due(prefix + i + "-" + index, firstDue + i).inGroup(prefix + i)));
		store.send(TOPIC, messages);
	}

	/**
	 * Sends g-0 and h-0, pauses g (a claim then takes h-0 alone), and loses the topic's
	 * pauses key.
	 * @param test the store
	 * @param groups its groups
	 */
	private static void pauseGAndLoseThePausesKey(TestStore test, DelayQueueGroups groups) {
		RedisMessageStore store = test.store();
		store.send(TOPIC, List.of(due("g-0", 5).inGroup("g"), due("h-0", 6).inGroup("h")));
		groups.pause(TOPIC, "g");
		assertThat(ids(claim(store, 10, 0))).containsExactly("h-0");
		test.redis().delete(store.keys(TOPIC).groupPauses());
	}

	/**
	 * Sends a message of a group with the template.
	 * @param sender the sending store
	 * @param id the message's id
	 * @param group its group
	 */
	private static void sendToGroup(TestStore sender, String id, String group) {
		sender.template().send(DelayMessage.builder(TOPIC, "body").id(id).group(group).build());
	}

	/**
	 * Lets time pass, the test doing nothing meanwhile.
	 * @param time how long
	 */
	private static void letPass(Duration time) {
		await().pollDelay(time).until(() -> true);
	}

	/** When each message started (epoch ms), and which were handled. */
	static final class Starts {

		final Map<String, Long> at = new ConcurrentHashMap<>();

		final Map<String, Boolean> done = new ConcurrentHashMap<>();

		volatile long workMillis;

		void handle(String id) {
			this.at.putIfAbsent(id, System.currentTimeMillis());
			if (this.workMillis > 0) {
				Interruptibly.sleep(this.workMillis);
			}
			this.done.put(id, true);
		}

	}

	/** One application: a runtime with one listener of the topic. */
	static final class App implements AutoCloseable {

		final TestStore store;

		final DelayQueueRuntime runtime;

		private final Starts starts;

		App(String prefix, boolean behindProxy, int groupConcurrency, Duration idleCheck, Duration maxSleep,
				Starts starts) {
			this(prefix, behindProxy, groupConcurrency, idleCheck, maxSleep, starts, 3);
		}

		App(String prefix, boolean behindProxy, int groupConcurrency, Duration idleCheck, Duration maxSleep,
				Starts starts, int concurrency) {
			this.starts = starts;
			TestStore.Builder builder = TestStore.builder().prefix(prefix);
			this.store = (behindProxy ? builder.behindProxy() : builder).build();
			JsonPayloadConverter converter = new JsonPayloadConverter(new JsonMapper());
			DelayListenerEndpointRegistry registry = new DelayListenerEndpointRegistry(converter);
			Method method = ReflectionUtils.findMethod(App.class, "on", Delivery.class);
			ListenerSettings settings = new ListenerSettings(concurrency, 4, 5, Duration.ofSeconds(30),
					new RetryBackoff(Duration.ofMillis(100), 1.0, Duration.ofMillis(100)), idleCheck,
					Duration.ofSeconds(2), Duration.ofMinutes(5), LatePolicy.DELIVER, Duration.ofHours(1));
			if (groupConcurrency > 0) {
				settings = settings.withGroupConcurrency(groupConcurrency);
			}
			registry.register(new DelayListenerEndpoint(TOPIC, this, method, settings));
			this.runtime = new DelayQueueRuntime(this.store.store(), converter,
					new BrokerSettings(100, maxSleep, Duration.ZERO), registry);
			this.runtime.start();
		}

		void on(Delivery<String> delivery) {
			this.starts.handle(delivery.id());
		}

		@Override
		public void close() {
			this.runtime.stop();
			this.store.close();
		}

	}

}

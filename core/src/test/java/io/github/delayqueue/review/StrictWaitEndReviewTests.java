package io.github.delayqueue.review;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;

import io.github.delayqueue.store.ClaimedMessage;
import io.github.delayqueue.store.GroupWait;
import io.github.delayqueue.store.GroupWeights;
import io.github.delayqueue.store.LeaseTokens;
import io.github.delayqueue.store.MessageFormat;
import io.github.delayqueue.store.NewMessage;
import io.github.delayqueue.store.RateLimit;
import io.github.delayqueue.store.WriteGate;
import io.github.delayqueue.store.redis.RedisMessageStore;
import io.github.delayqueue.store.redis.TopicKeys;
import io.github.delayqueue.test.redis.FaultyRedisProxy;
import io.github.delayqueue.testsupport.OnOneServerVersion;
import io.github.delayqueue.testsupport.TestStore;
import io.github.delayqueue.testsupport.Transitions;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Adversarial review of commit 6227973 (strict-order waits): {@code wait_to_end} /
 * {@code end_wait}, which leave a group waiting until the latest of its other messages'
 * waits when the message whose wait was the group's is cancelled, rescheduled or replaced
 * (found among the 100 waits of the partition that end last before it, the group keeping
 * its end past them), and the claim's trim of the group waits key ({@code gw}) when it
 * finds pauses that ended. Attacks, on a real Redis: three waits of a group ended in
 * every order and by every means, equal ends, more than 100 waits of other groups between
 * a group's two waits, a waiting message whose groups hash entry is lost, the trim beside
 * operator pauses, paces of a per-group rate limit and a lost pauses key, replies dropped
 * after Redis ran the call (the call replayed), partitioned topics, group concurrency 0,
 * 1 and 2, and a seeded walk with short and long backoffs whose invariant is that no
 * claim takes a message of a group while a wait of it, not ended by a call, goes on.
 */
@OnOneServerVersion
class StrictWaitEndReviewTests {

	private static final String TOPIC = "jobs";

	private static final Duration MINUTE = Duration.ofMinutes(1);

	private static final Duration HOUR = Duration.ofHours(1);

	private static final String[] HOW = { "cancel", "reschedule", "replace" };

	/**
	 * Three messages of a group wait in it (10 min, 1 h, 30 min) beside a fourth, ready:
	 * ended one by one in each of the 6 orders, each by a cancel, a reschedule or a
	 * replacing send (rotated): after each end the group's entry in {@code gw} is the
	 * latest end left (exactly: no other group waits), a resume leaves the group paused
	 * until it and no claim takes a message of the group; after the last end the resume
	 * lets the fourth message be claimed.
	 */
	@Test
	void threeWaitsOfAGroupEndedInEveryOrderHoldItUntilTheLatestOneLeft() {
		List<String> failures = new ArrayList<>();
		Duration[] backoffs = { Duration.ofMinutes(10), HOUR, Duration.ofMinutes(30) };
		int cases = 0;
		for (int[] order : permutations()) {
			for (int rotate = 0; rotate < 3; rotate++) {
				try (TestStore test = TestStore.create()) {
					RedisMessageStore store = test.store();
					TopicKeys keys = store.keys(TOPIC);
					store.send(TOPIC,
							List.of(msg("m0", 1, "g"), msg("m1", 2, "g"), msg("m2", 3, "g"), msg("m3", 4, "g")));
					List<ClaimedMessage> claimed = claim(store, TOPIC, 3, 0);
					assertThat(ids(claimed)).containsExactly("m0", "m1", "m2");
					Map<String, Long> live = new HashMap<>();
					for (int i = 0; i < 3; i++) {
						ClaimedMessage message = claimed.get(i);
						live.put(message.id(), strictRetry(store, TOPIC, message, backoffs[i]));
					}
					for (int k = 0; k < 3; k++) {
						String id = "m" + order[k];
						int how = (rotate + k) % 3;
						String context = "order " + List.of(order[0], order[1], order[2]) + ", " + HOW[how] + " " + id;
						endWait(store, TOPIC, id, "g", how);
						live.remove(id);
						Long expected = live.values().stream().max(Long::compare).orElse(null);
						Double groupEnd = test.redis().opsForZSet().score(keys.groupWaits(), "g");
						if (!equal(groupEnd, expected)) {
							failures.add(context + ": gw g " + groupEnd + ", expected " + expected);
						}
						store.resumeGroup(TOPIC, "g");
						List<String> got = ids(claim(store, TOPIC, 10, 0));
						if (expected != null) {
							Double pause = test.redis().opsForZSet().score(keys.groupPauses(), "g");
							if (!equal(pause, expected)) {
								failures
									.add(context + ": paused until " + pause + " after a resume, expected " + expected);
							}
							if (!got.isEmpty()) {
								failures.add(context + ": claimed " + got + " while " + live + " wait");
							}
						}
						else if (!got.equals(List.of("m3"))) {
							failures.add(context + ": claimed " + got + " after the last wait ended and a resume");
						}
					}
					cases++;
				}
			}
		}
		System.out.println("StrictWaitEndReviewTests: " + cases + " cases of three waits ended");
		assertThat(failures).isEmpty();
	}

	/**
	 * Equal ends (two strict retries in the same millisecond; set here in {@code gw} as
	 * they would be): m1 and m2 end together, later than m0. Ending m1 keeps the group's
	 * end (m2 waits until it); ending m2 then leaves it waiting until m0's end; ending m0
	 * lets it go. And the same with m2 ended first.
	 */
	@Test
	void twoWaitsWithTheSameEndKeepTheGroupUntilBothEnded() {
		for (String first : new String[] { "m1", "m2" }) {
			String second = first.equals("m1") ? "m2" : "m1";
			try (TestStore test = TestStore.create()) {
				RedisMessageStore store = test.store();
				TopicKeys keys = store.keys(TOPIC);
				StringRedisTemplate redis = test.redis();
				store.send(TOPIC, List.of(msg("m0", 1, "g"), msg("m1", 2, "g"), msg("m2", 3, "g"), msg("m3", 4, "g")));
				List<ClaimedMessage> claimed = claim(store, TOPIC, 3, 0);
				long early = strictRetry(store, TOPIC, claimed.get(0), Duration.ofMinutes(10));
				long late = strictRetry(store, TOPIC, claimed.get(1), HOUR);
				strictRetry(store, TOPIC, claimed.get(2), Duration.ofMinutes(30));
				redis.opsForZSet().add(keys.groupWaits(), "\u0001m2", late);
				assertThat(redis.opsForZSet().score(keys.groupWaits(), "g")).isEqualTo((double) late);

				assertThat(store.cancel(TOPIC, first)).isTrue();
				assertThat(redis.opsForZSet().score(keys.groupWaits(), "g")).as("%s ended, %s waits", first, second)
					.isEqualTo((double) late);
				store.resumeGroup(TOPIC, "g");
				assertThat(ids(claim(store, TOPIC, 10, 0))).isEmpty();

				assertThat(store.reschedule(TOPIC, second, Duration.ofHours(2))).isPositive();
				assertThat(redis.opsForZSet().score(keys.groupWaits(), "g")).as("m0 waits").isEqualTo((double) early);
				store.resumeGroup(TOPIC, "g");
				assertThat(redis.opsForZSet().score(keys.groupPauses(), "g")).isEqualTo((double) early);
				assertThat(ids(claim(store, TOPIC, 10, 0))).isEmpty();

				assertThat(store.cancel(TOPIC, "m0")).isTrue();
				assertThat(redis.opsForZSet().score(keys.groupWaits(), "g")).isNull();
				store.resumeGroup(TOPIC, "g");
				assertThat(ids(claim(store, TOPIC, 10, 0))).containsExactly("m3");
			}
		}
	}

	/**
	 * Waits of other groups (each one message: its entry and its group's, two entries)
	 * end between the group's two waits (10 min and 1 h): 40 of them (82 entries down to
	 * the earlier wait: found), 49 (exactly 100 entries before it: not found) and 150.
	 * Whatever ends the later wait, the group's end never falls below the earlier wait's
	 * end, a resume never lets a message of the group be claimed, and with 40 the group's
	 * end is the earlier wait's exactly; with 49 and 150 the group keeps the later end
	 * (the documented longer hold), also once the earlier wait is ended too.
	 */
	@Test
	void waitsOfManyOtherGroupsBetweenAGroupsTwoWaitsNeverLetItGoEarly() {
		List<String> outcomes = new ArrayList<>();
		for (int others : new int[] { 40, 49, 150 }) {
			for (int how = 0; how < 3; how++) {
				try (TestStore test = TestStore.create()) {
					RedisMessageStore store = test.store();
					TopicKeys keys = store.keys(TOPIC);
					StringRedisTemplate redis = test.redis();
					List<NewMessage> messages = new ArrayList<>(
							List.of(msg("m0", 1, "g"), msg("m1", 2, "g"), msg("m3", 3, "g")));
					for (int i = 0; i < others; i++) {
						messages.add(msg("o-" + i, 1, "o" + i));
					}
					store.send(TOPIC, messages);
					List<ClaimedMessage> claimed = new ArrayList<>();
					for (int round = 0; round < 5; round++) {
						claimed.addAll(claim(store, TOPIC, 1000, 2));
					}
					assertThat(claimed).hasSize(others + 2);
					long early = 0;
					long late = 0;
					for (ClaimedMessage message : claimed) {
						switch (message.id()) {
							case "m0" -> early = strictRetry(store, TOPIC, message, Duration.ofMinutes(10));
							case "m1" -> late = strictRetry(store, TOPIC, message, HOUR);
							default -> strictRetry(store, TOPIC, message,
									Duration.ofMinutes(20 + Integer.parseInt(message.id().substring(2)) % 30));
						}
					}
					assertThat(redis.opsForZSet().size(keys.groupWaits())).isEqualTo(2L * others + 3);
					endWait(store, TOPIC, "m1", "g", how);
					Double groupEnd = redis.opsForZSet().score(keys.groupWaits(), "g");
					String context = others + " other groups, " + HOW[how] + " m1";
					assertThat(groupEnd).as(context).isNotNull();
					assertThat(groupEnd.longValue()).as(context).isGreaterThanOrEqualTo(early);
					if (others == 40) {
						assertThat(groupEnd.longValue()).as(context).isEqualTo(early);
					}
					else {
						assertThat(groupEnd.longValue()).as(context + ": the group keeps its end").isEqualTo(late);
					}
					store.resumeGroup(TOPIC, "g");
					assertThat(redis.opsForZSet().score(keys.groupPauses(), "g").longValue()).as(context)
						.isGreaterThanOrEqualTo(early);
					assertThat(ids(claim(store, TOPIC, 10, 2))).as(context).isEmpty();
					assertThat(store.cancel(TOPIC, "m0")).isTrue();
					store.resumeGroup(TOPIC, "g");
					boolean released = ids(claim(store, TOPIC, 10, 2)).contains("m3");
					outcomes.add(context + ": gw g " + (groupEnd.longValue() == early ? "= m0's end" : "= m1's end")
							+ ", m3 " + (released ? "claimed" : "held") + " once m0 ended too");
					assertThat(released).as(context).isEqualTo(others == 40);
				}
			}
		}
		outcomes.forEach((outcome) -> System.out.println("StrictWaitEndReviewTests: " + outcome));
	}

	/**
	 * What held: the ended message's own groups hash entry lost (the group unknown): the
	 * group keeps its end, and the other wait holds it.
	 */
	@Test
	void aWaitEndedWhoseGroupEntryIsLostLeavesTheGroupsEndAlone() {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			TopicKeys keys = store.keys(TOPIC);
			store.send(TOPIC, List.of(msg("m0", 1, "g"), msg("m1", 2, "g"), msg("m3", 3, "g")));
			List<ClaimedMessage> claimed = claim(store, TOPIC, 2, 0);
			strictRetry(store, TOPIC, claimed.get(0), Duration.ofMinutes(10));
			long late = strictRetry(store, TOPIC, claimed.get(1), HOUR);
			test.redis().opsForHash().delete(keys.groups(), "m1");
			assertThat(store.cancel(TOPIC, "m1")).isTrue();
			assertThat(test.redis().opsForZSet().score(keys.groupWaits(), "g")).isEqualTo((double) late);
			store.resumeGroup(TOPIC, "g");
			assertThat(ids(claim(store, TOPIC, 10, 0))).isEmpty();
		}
	}

	/**
	 * The groups hash lost (deleted, evicted) after m0's strict retry (10 min) and before
	 * m1's (1 h), which restores m1's entry from its body (retry.lua) but not m0's: m0
	 * still waits (the claim counts a member without an entry as its group's). A cancel
	 * of m1 leaves the group waiting until m0's end (finding, fixed: wait_to_end looked
	 * for the group's other waits by their groups hash entries, found none, and dropped
	 * the group's wait, so a resume let m0 be claimed 10 minutes before its backoff; a
	 * {@code \1<id>} entry without a groups hash entry now counts as the group's).
	 */
	@Test
	void anOtherWaitWhoseGroupEntryIsLostStillHoldsTheGroupWhenTheLaterEnds() {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			TopicKeys keys = store.keys(TOPIC);
			store.send(TOPIC, List.of(msg("m0", 1, "g"), msg("m1", 2, "g"), msg("m3", 3, "g")));
			List<ClaimedMessage> claimed = claim(store, TOPIC, 2, 0);
			assertThat(ids(claimed)).containsExactly("m0", "m1");
			strictRetry(store, TOPIC, claimed.get(0), Duration.ofMinutes(10));
			test.redis().delete(keys.groups());
			strictRetry(store, TOPIC, claimed.get(1), HOUR);
			assertThat(test.redis().opsForHash().get(keys.groups(), "m1")).as("restored by the retry").isEqualTo("g");
			assertThat(store.cancel(TOPIC, "m1")).isTrue();
			store.resumeGroup(TOPIC, "g");
			assertThat(ids(claim(store, TOPIC, 10, 0))).as("m0 waits 10 minutes more").doesNotContain("m0");
		}
	}

	/**
	 * The claim's trim beside a live wait: group g has two waits (10 min, 1 h) and a
	 * ready message; group h waits 50 ms in strict order, group k is paused 30 ms by an
	 * operator. Once a claim has found their pauses ended (h0 claimed), the ended entries
	 * are gone and g's are all there; then a 1 ms pause of g ends at g's wait, a resume
	 * keeps g paused until it, a cancel of the later wait leaves g waiting until the
	 * earlier one, a replacing send of that one lets the resume release g.
	 */
	@Test
	void aClaimThatTrimsEndedWaitsKeepsALiveWaitAndItsHold() {
		for (int concurrency : new int[] { 0, 2 }) {
			try (TestStore test = TestStore.create()) {
				RedisMessageStore store = test.store();
				TopicKeys keys = store.keys(TOPIC);
				StringRedisTemplate redis = test.redis();
				store.send(TOPIC, List.of(msg("m0", 1, "g"), msg("m1", 2, "g"), msg("m3", 3, "g"), msg("h0", 1, "h"),
						msg("k0", 1, "k")));
				store.pauseGroup(TOPIC, "k", Duration.ofMillis(30));
				List<ClaimedMessage> claimed = claim(store, TOPIC, 10, 2);
				assertThat(ids(claimed)).containsExactlyInAnyOrder("m0", "m1", "h0");
				long early = 0;
				long late = 0;
				for (ClaimedMessage message : claimed) {
					switch (message.id()) {
						case "m0" -> early = strictRetry(store, TOPIC, message, Duration.ofMinutes(10));
						case "m1" -> late = strictRetry(store, TOPIC, message, HOUR);
						default -> strictRetry(store, TOPIC, message, Duration.ofMillis(50));
					}
				}
				List<String> got = new ArrayList<>();
				await().atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(20)).until(() -> {
					got.addAll(ids(claim(store, TOPIC, 10, concurrency)));
					return got.contains("h0") && got.contains("k0");
				});
				assertThat(got).containsExactlyInAnyOrder("h0", "k0");
				assertThat(redis.opsForZSet().rangeWithScores(keys.groupWaits(), 0, -1)).as("after the trim")
					.extracting((t) -> t.getValue() + "=" + t.getScore().longValue())
					.containsExactlyInAnyOrder("g=" + late, "\u0001m0=" + early, "\u0001m1=" + late);
				assertThat(store.pauseGroup(TOPIC, "g", Duration.ofMillis(1)).toEpochMilli()).isEqualTo(late);
				store.resumeGroup(TOPIC, "g");
				assertThat(redis.opsForZSet().score(keys.groupPauses(), "g")).isEqualTo((double) late);
				assertThat(ids(claim(store, TOPIC, 10, concurrency))).isEmpty();
				assertThat(store.cancel(TOPIC, "m1")).isTrue();
				store.resumeGroup(TOPIC, "g");
				assertThat(redis.opsForZSet().score(keys.groupPauses(), "g")).isEqualTo((double) early);
				assertThat(ids(claim(store, TOPIC, 10, concurrency))).isEmpty();
				assertThat(store
					.send(TOPIC, List.of(msg("m0", System.currentTimeMillis() + 7_200_000, "g").replacingPending()))
					.get(0)
					.replaced()).isTrue();
				store.resumeGroup(TOPIC, "g");
				assertThat(ids(claim(store, TOPIC, 10, concurrency))).containsExactly("m3");
			}
		}
	}

	/**
	 * The trim beside a per-group rate limit (1 per 200 ms): g0 and p0 are claimed, both
	 * groups paced; g0 is retried in strict order for an hour. The claims that find p's
	 * paces ended (and trim) take p's messages one by one, never g's; the wait's entries
	 * stay, and a resume of g keeps it paused until the wait's end.
	 */
	@Test
	void pacesOfAGroupRateLimitEndingBesideAStrictWaitNeverReleaseItsGroup() {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			TopicKeys keys = store.keys(TOPIC);
			StringRedisTemplate redis = test.redis();
			List<NewMessage> messages = new ArrayList<>();
			for (int i = 0; i < 4; i++) {
				messages.add(msg("g" + i, 1 + i, "g"));
				messages.add(msg("p" + i, 1 + i, "p"));
			}
			store.send(TOPIC, messages);
			RateLimit pace = new RateLimit(1, Duration.ofMillis(200));
			List<ClaimedMessage> first = paced(store, pace);
			assertThat(ids(first)).containsExactlyInAnyOrder("g0", "p0");
			long end = 0;
			for (ClaimedMessage message : first) {
				if (message.id().equals("g0")) {
					end = strictRetry(store, TOPIC, message, HOUR);
				}
				else {
					Transitions.ack(store, TOPIC, message.id(), message.leaseToken());
				}
			}
			List<String> got = new ArrayList<>();
			await().atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(20)).until(() -> {
				for (ClaimedMessage message : paced(store, pace)) {
					got.add(message.id());
					Transitions.ack(store, TOPIC, message.id(), message.leaseToken());
				}
				return got.size() >= 3;
			});
			assertThat(got).containsExactly("p1", "p2", "p3");
			assertThat(redis.opsForZSet().score(keys.groupWaits(), "g")).isEqualTo((double) end);
			assertThat(redis.opsForZSet().score(keys.groupWaits(), "\u0001g0")).isEqualTo((double) end);
			store.resumeGroup(TOPIC, "g");
			assertThat(redis.opsForZSet().score(keys.groupPauses(), "g")).isEqualTo((double) end);
			assertThat(paced(store, pace)).isEmpty();
		}
	}

	/**
	 * The pauses key lost while g waits an hour (two waits, the later one then
	 * cancelled): the claim that finds no pause gives g its pause back until the earlier
	 * wait; then h's 50 ms strict wait ends and the claim that finds it trims; g stays
	 * held throughout, by claims with and without a group concurrency.
	 */
	@Test
	void aLostPausesKeyAndATrimLeaveTheEarlierWaitHoldingItsGroup() {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			TopicKeys keys = store.keys(TOPIC);
			StringRedisTemplate redis = test.redis();
			store.send(TOPIC, List.of(msg("m0", 1, "g"), msg("m1", 2, "g"), msg("m3", 3, "g"), msg("h0", 1, "h")));
			List<ClaimedMessage> claimed = claim(store, TOPIC, 10, 2);
			long early = 0;
			for (ClaimedMessage message : claimed) {
				switch (message.id()) {
					case "m0" -> early = strictRetry(store, TOPIC, message, Duration.ofMinutes(10));
					case "m1" -> strictRetry(store, TOPIC, message, HOUR);
					default -> strictRetry(store, TOPIC, message, Duration.ofMillis(50));
				}
			}
			assertThat(store.cancel(TOPIC, "m1")).isTrue();
			redis.delete(keys.groupPauses());
			assertThat(ids(claim(store, TOPIC, 10, 0))).doesNotContain("m0", "m3");
			assertThat(redis.opsForZSet().score(keys.groupPauses(), "g")).as("given back").isEqualTo((double) early);
			List<String> got = new ArrayList<>();
			await().atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(20)).until(() -> {
				got.addAll(ids(claim(store, TOPIC, 10, got.size() % 2)));
				return got.contains("h0");
			});
			assertThat(got).containsExactly("h0");
			assertThat(redis.opsForZSet().score(keys.groupWaits(), "g")).isEqualTo((double) early);
			store.resumeGroup(TOPIC, "g");
			assertThat(ids(claim(store, TOPIC, 10, 0))).isEmpty();
			assertThat(ids(claim(store, TOPIC, 10, 1))).isEmpty();
		}
	}

	/**
	 * A strict wait of 50 ms that has ended before its group is resumed: the resume
	 * removes the group's pause (its wait ended), so no claim finds a pause that ended;
	 * the resume removes the waits that ended from {@code gw} (finding, fixed: the wait's
	 * two entries stayed once the message was handled, until a claim found some other
	 * pause ended or a strict retry of the partition trimmed).
	 */
	@Test
	void aWaitEndedBeforeAResumeLeavesGroupWaitsOnceItsMessageIsHandled() {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			TopicKeys keys = store.keys(TOPIC);
			store.send(TOPIC, List.of(msg("m0", 1, "g")));
			long end = strictRetry(store, TOPIC, claim(store, TOPIC, 1, 0).get(0), Duration.ofMillis(50));
			await().atMost(Duration.ofSeconds(5)).until(() -> redisMillis(test.redis()) > end);
			store.resumeGroup(TOPIC, "g");
			List<ClaimedMessage> again = claim(store, TOPIC, 10, 0);
			assertThat(ids(again)).containsExactly("m0");
			Transitions.ack(store, TOPIC, "m0", again.get(0).leaseToken());
			assertThat(claim(store, TOPIC, 10, 0)).isEmpty();
			assertThat(test.redis().opsForHash().size(keys.messages())).isZero();
			assertThat(test.redis().opsForZSet().size(keys.groupWaits())).as("waits left in gw").isZero();
		}
	}

	/**
	 * The reply to the call that ends the later wait (cancel, reschedule, replacing send)
	 * is dropped after Redis ran it; Lettuce sends it again: the replayed call leaves the
	 * group waiting until the earlier wait, and a resume does not release it; then the
	 * same with the earlier wait ended second (reply dropped too): the group goes.
	 */
	@Test
	void aReplayedEndOfTheLaterWaitLeavesTheEarlierOneHoldingItsGroup() {
		for (int how = 0; how < 3; how++) {
			try (TestStore test = TestStore.builder().behindProxy().sendTimeout(Duration.ofSeconds(3)).build()) {
				RedisMessageStore store = test.store();
				TopicKeys keys = store.keys(TOPIC);
				StringRedisTemplate redis = test.redis();
				store.send(TOPIC, List.of(msg("m0", 1, "g"), msg("m1", 2, "g"), msg("m3", 3, "g")));
				List<ClaimedMessage> claimed = claim(store, TOPIC, 2, 0);
				long early = strictRetry(store, TOPIC, claimed.get(0), Duration.ofMinutes(10));
				strictRetry(store, TOPIC, claimed.get(1), HOUR);
				FaultyRedisProxy.Fault fault = test.proxy()
					.dropNextReplyToCommand(FaultyRedisProxy.withArgumentContaining("EVALSHA", keys.groupWaits()));
				endWait(store, TOPIC, "m1", "g", how);
				assertThat(fault.hasFired()).as(HOW[how]).isTrue();
				assertThat(redis.opsForZSet().score(keys.groupWaits(), "g")).as(HOW[how]).isEqualTo((double) early);
				assertThat(redis.opsForZSet().score(keys.groupWaits(), "\1m1")).as(HOW[how]).isNull();
				store.resumeGroup(TOPIC, "g");
				assertThat(ids(claim(store, TOPIC, 10, 0))).as(HOW[how]).isEmpty();
				fault = test.proxy()
					.dropNextReplyToCommand(FaultyRedisProxy.withArgumentContaining("EVALSHA", keys.groupWaits()));
				endWait(store, TOPIC, "m0", "g", (how + 1) % 3);
				assertThat(fault.hasFired()).isTrue();
				assertThat(redis.opsForZSet().score(keys.groupWaits(), "g")).as(HOW[how]).isNull();
				store.resumeGroup(TOPIC, "g");
				assertThat(ids(claim(store, TOPIC, 10, 0))).as(HOW[how]).containsExactly("m3");
			}
		}
	}

	/**
	 * A topic of 3 partitions (each its own {@code gw}): groups a and b in different
	 * partitions, 60 more groups waiting between their two waits, spread over the
	 * partitions. With group concurrency 0 and 2: the later wait of a and of b ended
	 * (cancel and reschedule, through the topic's fan-out by id): each group waits until
	 * its earlier wait in its own partition, and no claim of any partition takes their
	 * messages after a resume. With 1: one wait at a time; its cancel lets the group go.
	 */
	@Test
	void eachPartitionsWaitsHoldTheirGroupsWithGroupConcurrency0And1And2() {
		for (int concurrency : new int[] { 0, 1, 2 }) {
			try (TestStore test = TestStore.builder().partitions(Map.of(TOPIC, 3)).build()) {
				RedisMessageStore store = test.store();
				StringRedisTemplate redis = test.redis();
				List<String> names = store.partitions().names(TOPIC);
				String a = "a";
				String b = null;
				for (int i = 0; b == null; i++) {
					if (!store.partitions()
						.nameForGroup(TOPIC, "b" + i)
						.equals(store.partitions().nameForGroup(TOPIC, a))) {
						b = "b" + i;
					}
				}
				List<NewMessage> messages = new ArrayList<>();
				for (String group : List.of(a, b)) {
					for (int i = 0; i < 3; i++) {
						messages.add(msg(group + "-" + i, 1 + i, group));
					}
				}
				for (int i = 0; i < 60; i++) {
					messages.add(msg("o-" + i, 1, "o" + i));
				}
				store.send(TOPIC, messages);
				Map<String, Long> ends = new HashMap<>();
				Map<String, String> partitionOf = new HashMap<>();
				for (String name : names) {
					for (ClaimedMessage message : claimAllOf(store, name, (concurrency == 0) ? 2 : concurrency)) {
						partitionOf.put(message.id(), name);
						String id = message.id();
						Duration backoff = id.endsWith("-0") ? Duration.ofMinutes(10)
								: id.endsWith("-1") ? HOUR : Duration.ofMinutes(20 + id.length());
						ends.put(id, strictRetry(store, name, message, backoff));
					}
				}
				String context = "group concurrency " + concurrency;
				if (concurrency == 1) {
					assertThat(ends).as(context)
						.containsKeys(a + "-0", b + "-0")
						.doesNotContainKeys(a + "-1", b + "-1");
					assertThat(store.cancel(TOPIC, a + "-0")).isTrue();
					store.resumeGroup(TOPIC, a);
					store.resumeGroup(TOPIC, b);
					List<String> got = claimAll(store, names, concurrency);
					assertThat(got).as(context).containsExactly(a + "-1");
					continue;
				}
				assertThat(store.cancel(TOPIC, a + "-1")).isTrue();
				assertThat(store.reschedule(TOPIC, b + "-1", Duration.ofHours(2))).isPositive();
				for (String group : List.of(a, b)) {
					TopicKeys keys = store.keys(store.partitions().nameForGroup(TOPIC, group));
					assertThat(redis.opsForZSet().score(keys.groupWaits(), group)).as("%s: %s", context, group)
						.isEqualTo((double) ends.get(group + "-0"));
					store.resumeGroup(TOPIC, group);
				}
				List<String> got = claimAll(store, names, concurrency);
				assertThat(got).as(context).isEmpty();
				assertThat(store.cancel(TOPIC, a + "-0")).isTrue();
				store.resumeGroup(TOPIC, a);
				store.resumeGroup(TOPIC, b);
				assertThat(claimAll(store, names, concurrency)).as(context).containsExactly(a + "-2");
			}
		}
	}

	/**
	 * A seeded walk over three groups: sends, claims with group concurrency 0, 1 and 2,
	 * strict retries of 50 to 500 ms (so that waits end and claims trim) or an hour,
	 * relaxed retries, hand-backs, acks, operator pauses and resumes, and cancels,
	 * reschedules and replacing sends of waiting messages. Invariant: no claim takes a
	 * message of a group before the end of any wait of it that no call ended (by the
	 * claim's Redis time against the retry's end), and once the waits are ended and the
	 * groups resumed every message is claimed. Seed:
	 * {@code -Ddelay-queue.wait-end-review.seed}.
	 */
	@Test
	void seededStepsWithShortAndLongWaitsNeverClaimAGroupWhileAWaitOfItGoesOn() {
		Long fixed = Long.getLong("delay-queue.wait-end-review.seed");
		long first = (fixed != null) ? fixed : System.nanoTime();
		for (int run = 0; run < Integer.getInteger("delay-queue.wait-end-review.seeds", 2); run++) {
			seededRun(first + run, Integer.getInteger("delay-queue.wait-end-review.steps", 400));
		}
	}

	private static void seededRun(long seed, int steps) {
		Random random = new Random(seed);
		String[] names = { "a", "b", "c" };
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			TopicKeys keys = store.keys(TOPIC);
			// Waits no call ended: id -> end (Redis ms); the message is ready in its
			// group.
			Map<String, Long> waits = new HashMap<>();
			Map<String, String> groupOf = new HashMap<>();
			Map<String, ClaimedMessage> inFlight = new TreeMap<>();
			Set<String> pending = new TreeSet<>();
			Deque<String> history = new ArrayDeque<>();
			int next = 0;
			int shortWaits = 0;
			int longWaits = 0;
			int checked = 0;
			int afterAWait = 0;
			int cameBack = 0;
			int whileAWaitGoesOn = 0;
			long started = System.nanoTime();
			int trims = 0;
			long gwBefore = 0;
			for (int step = 0; step < steps; step++) {
				String context = "seed " + seed + " step " + step + ", last steps " + history;
				if (history.size() >= 30) {
					history.removeFirst();
				}
				int op = random.nextInt(100);
				if (op < 14) {
					String group = names[random.nextInt(names.length)];
					String id = group + "-" + (next++);
					store.send(TOPIC, List.of(msg(id, 10 + random.nextInt(3), group)));
					history.addLast(step + " send " + id);
					groupOf.put(id, group);
					pending.add(id);
				}
				else if (op < 42) {
					int concurrency = random.nextInt(3);
					Transitions.promote(store, TOPIC, 1000);
					List<ClaimedMessage> claimed = claim(store, TOPIC, 1 + random.nextInt(4), concurrency);
					long claimNow = redisMillis(test.redis());
					if (waits.values().stream().anyMatch((end) -> end > claimNow)) {
						whileAWaitGoesOn++;
					}
					history.addLast(step + " claim(" + concurrency + ") " + ids(claimed));
					for (ClaimedMessage message : claimed) {
						String group = groupOf.get(message.id());
						long at = TimeUnit.MICROSECONDS.toMillis(message.claimedAt().getEpochSecond() * 1_000_000L
								+ message.claimedAt().getNano() / 1000);
						for (Map.Entry<String, Long> wait : waits.entrySet()) {
							if (groupOf.get(wait.getKey()).equals(group)) {
								assertThat(at)
									.as("%s: %s claimed at %d while %s waits until %d", context, message.id(), at,
											wait.getKey(), wait.getValue())
									.isGreaterThanOrEqualTo(wait.getValue());
								afterAWait++;
							}
						}
						assertThat(inFlight).as(context).doesNotContainKey(message.id());
						if (waits.remove(message.id()) != null) {
							cameBack++;
						}
						inFlight.put(message.id(), message);
						checked++;
					}
					long gwNow = test.redis().opsForZSet().size(keys.groupWaits());
					if (gwNow < gwBefore) {
						trims++;
					}
					gwBefore = gwNow;
				}
				else if (op < 64 && !inFlight.isEmpty()) {
					List<String> held = new ArrayList<>(inFlight.keySet());
					ClaimedMessage message = inFlight.remove(held.get(random.nextInt(held.size())));
					int how = random.nextInt(8);
					history.addLast(step + " "
							+ List
								.of("ack", "short strict retry", "short strict retry", "short strict retry",
										"strict retry 1 h", "retry", "hand back", "ack")
								.get(how)
							+ " " + message.id());
					switch (how) {
						case 0, 7 -> {
							Transitions.ack(store, TOPIC, message.id(), message.leaseToken());
							pending.remove(message.id());
						}
						case 1, 2, 3 -> {
							waits.put(message.id(),
									strictRetry(store, TOPIC, message, Duration.ofMillis(50 + random.nextInt(451))));
							shortWaits++;
						}
						case 4 -> {
							waits.put(message.id(), strictRetry(store, TOPIC, message, HOUR));
							longWaits++;
						}
						case 5 -> store.topic(TOPIC)
							.retry(message.id(), message.leaseToken(), Duration.ofMillis(1), "x", GroupWait.NONE);
						default -> Transitions.release(store, TOPIC, message.id(), message.leaseToken());
					}
					gwBefore = test.redis().opsForZSet().size(keys.groupWaits());
				}
				else if (op < 78) {
					String group = names[random.nextInt(names.length)];
					int weighed = random.nextInt(20);
					int how = (weighed < 8) ? 0 : (weighed < 12) ? 1 : (weighed < 17) ? 2 : 3;
					history.addLast(step + " " + List.of("resume", "pause 1 ms", "pause 200 ms", "pause").get(how) + " "
							+ group);
					if (how == 0) {
						store.resumeGroup(TOPIC, group);
					}
					else {
						store.pauseGroup(TOPIC, group, switch (how) {
							case 1 -> Duration.ofMillis(1);
							case 2 -> Duration.ofMillis(200);
							default -> null;
						});
					}
				}
				else if (op < 90 && !waits.isEmpty()) {
					List<String> waiting = new ArrayList<>(new TreeSet<>(waits.keySet()));
					// Mostly an hour-long wait, else the latest wait of a group (the one
					// whose end is
					// the group's) or any.
					String id = waiting.get(random.nextInt(waiting.size()));
					long soon = System.currentTimeMillis() + 60_000;
					List<String> hourLong = waiting.stream().filter((other) -> waits.get(other) > soon).toList();
					int pick = random.nextInt(10);
					if (hourLong.isEmpty() && pick < 7) {
						// Short waits mostly end by themselves.
						continue;
					}
					if (pick < 8 && !hourLong.isEmpty()) {
						id = hourLong.get(random.nextInt(hourLong.size()));
					}
					else if (pick < 9) {
						String group = groupOf.get(id);
						id = waiting.stream()
							.filter((other) -> groupOf.get(other).equals(group))
							.max(Comparator.comparing(waits::get))
							.orElseThrow();
					}
					int how = random.nextInt(3);
					history.addLast(step + " " + HOW[how] + " " + id);
					if (how == 0) {
						assertThat(store.cancel(TOPIC, id)).as(context).isTrue();
						pending.remove(id);
						waits.remove(id);
					}
					else if (how == 1) {
						assertThat(store.reschedule(TOPIC, id, Duration.ofMillis(1))).as(context).isPositive();
						waits.remove(id);
					}
					else if (store.send(TOPIC, List.of(msg(id, 10, groupOf.get(id)).replacingPending()))
						.get(0)
						.replaced()) {
						waits.remove(id);
					}
					else {
						// Refused as a duplicate: its wait had ended, it is ready in its
						// group.
						assertThat(redisMillis(test.redis())).as(context).isGreaterThanOrEqualTo(waits.get(id));
						history.addLast(step + " (not replaced)");
					}
				}
				else if (op < 93) {
					history.addLast(step + " expire leases");
					Transitions.expireLeases(store, TOPIC, 100, 1000);
				}
				else if (op < 96) {
					history.addLast(step + " 50 ms pass");
					long until = redisMillis(test.redis()) + 50;
					await().atMost(Duration.ofSeconds(5))
						.pollInterval(Duration.ofMillis(10))
						.until(() -> redisMillis(test.redis()) >= until);
				}
			}
			if (Boolean.getBoolean("delay-queue.wait-end-review.debug")) {
				long nowMs = redisMillis(test.redis());
				for (String group : names) {
					System.out.println("DEBUG " + group + " now " + nowMs + " gp "
							+ test.redis().opsForZSet().score(keys.groupPauses(), group) + " gw "
							+ test.redis().opsForZSet().score(keys.groupWaits(), group) + " rot "
							+ test.redis().opsForZSet().score(keys.groupRotation(), group) + " slots "
							+ test.redis().opsForHash().get(keys.groupSlots(), group) + " waits "
							+ waits.entrySet().stream().filter((e) -> groupOf.get(e.getKey()).equals(group)).toList()
							+ " inflight " + inFlight.keySet());
				}
				System.out.println("DEBUG history " + history);
			}
			for (ClaimedMessage message : inFlight.values()) {
				Transitions.ack(store, TOPIC, message.id(), message.leaseToken());
				pending.remove(message.id());
			}
			for (String id : new ArrayList<>(waits.keySet())) {
				assertThat(store.reschedule(TOPIC, id, Duration.ofMillis(1))).isPositive();
			}
			for (String group : names) {
				store.resumeGroup(TOPIC, group);
			}
			await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(20)).until(() -> {
				Transitions.promote(store, TOPIC, 1000);
				for (ClaimedMessage message : claim(store, TOPIC, 100, 0)) {
					Transitions.ack(store, TOPIC, message.id(), message.leaseToken());
					pending.remove(message.id());
				}
				return pending.isEmpty();
			});
			System.out.println("StrictWaitEndReviewTests seeded run: seed " + seed + ", " + next + " sent, "
					+ shortWaits + " short and " + longWaits + " hour-long strict retries, " + trims
					+ " claims that shrank gw, " + checked + " claims checked (" + whileAWaitGoesOn
					+ " calls while a wait went on, " + afterAWait + " against a wait of their group, " + cameBack
					+ " of a message back from its wait), " + (System.nanoTime() - started) / 1_000_000 + " ms");
			assertThat(pending).as("seed %d: never claimed", seed).isEmpty();
		}
	}

	// ---- Support

	private static int[][] permutations() {
		return new int[][] { { 0, 1, 2 }, { 0, 2, 1 }, { 1, 0, 2 }, { 1, 2, 0 }, { 2, 0, 1 }, { 2, 1, 0 } };
	}

	private static boolean equal(Double score, Long expected) {
		return (score == null) ? expected == null : expected != null && score.longValue() == expected;
	}

	/** A message of a group due at an absolute time (epoch ms), its body naming it. */
	private static NewMessage msg(String id, long dueMillis, String group) {
		return new NewMessage(id, false, dueMillis, MessageFormat.encodeBody(Map.of(MessageFormat.GROUP_HEADER, group),
				"x".getBytes(StandardCharsets.UTF_8)))
			.inGroup(group);
	}

	private static long strictRetry(RedisMessageStore store, String topic, ClaimedMessage message, Duration backoff) {
		long end = store.topic(topic).retry(message.id(), message.leaseToken(), backoff, "boom", GroupWait.IN_GROUP);
		assertThat(end).isPositive();
		return end;
	}

	/** Ends the wait of a waiting message: 0 cancel, 1 reschedule, 2 replacing send. */
	private static void endWait(RedisMessageStore store, String topic, String id, String group, int how) {
		switch (how) {
			case 0 -> assertThat(store.cancel(topic, id)).as("cancel %s", id).isTrue();
			case 1 -> assertThat(store.reschedule(topic, id, Duration.ofHours(2))).as("reschedule %s", id).isPositive();
			default -> assertThat(store
				.send(topic, List.of(msg(id, System.currentTimeMillis() + 7_200_000, group).replacingPending()))
				.get(0)
				.replaced()).as("replace %s", id).isTrue();
		}
	}

	private static List<String> ids(List<ClaimedMessage> claimed) {
		return claimed.stream().map(ClaimedMessage::id).toList();
	}

	private static List<ClaimedMessage> claim(RedisMessageStore store, String topic, int limit, int groupConcurrency) {
		String consumer = LeaseTokens.newToken();
		return Transitions.claim(store, topic, consumer, consumer + ".1", limit, 0, MINUTE, null, groupConcurrency)
			.messages();
	}

	private static List<String> claimAll(RedisMessageStore store, List<String> partitions, int groupConcurrency) {
		List<String> got = new ArrayList<>();
		for (int round = 0; round < 2; round++) {
			for (String name : partitions) {
				got.addAll(ids(claim(store, name, 100, groupConcurrency)));
			}
		}
		got.sort(Comparator.naturalOrder());
		return got;
	}

	private static List<ClaimedMessage> claimAllOf(RedisMessageStore store, String topic, int groupConcurrency) {
		List<ClaimedMessage> got = new ArrayList<>();
		for (int round = 0; round < 3; round++) {
			got.addAll(claim(store, topic, 1000, groupConcurrency));
		}
		return got;
	}

	private static List<ClaimedMessage> paced(RedisMessageStore store, RateLimit pace) {
		String consumer = LeaseTokens.newToken();
		return store.topic(TOPIC)
			.claim(consumer, consumer + ".1", 10, 0, MINUTE, null, 0, GroupWeights.NONE, pace, WriteGate.OPEN)
			.join()
			.messages();
	}

	private static long redisMillis(StringRedisTemplate redis) {
		Long now = redis.execute((RedisCallback<Long>) (connection) -> connection.serverCommands().time());
		return (now != null) ? now : 0;
	}

}

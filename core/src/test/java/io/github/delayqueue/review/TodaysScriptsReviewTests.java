package io.github.delayqueue.review;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.delayqueue.store.ClaimResult;
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

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Adversarial review of the day's script changes: the group waits key ({@code gw}) of
 * strict group order as cancel, reschedule, resume and a later strict retry see it, the 5
 * ms allowance of a per-group rate limit above about 200 a second, the put-back of groups
 * parked with the pauses key lost, and resume tokens kept in the cancels key; on a real
 * Redis.
 */
@OnOneServerVersion
class TodaysScriptsReviewTests {

	private static final String TOPIC = "jobs";

	private static final Duration MINUTE = Duration.ofMinutes(1);

	private static final AtomicInteger TOKENS = new AtomicInteger();

	/**
	 * Two messages of one group (no group concurrency, or 2) wait in it, until ten
	 * minutes and an hour from now: the group's entry in {@code gw} holds the later end.
	 * Cancelling (or rescheduling) the later one leaves the group waiting until the
	 * other's end (it removed the group's entry, as it equals that message's, and a
	 * resume then let the other message be claimed before its backoff).
	 */
	@Test
	void endingTheLaterOfTwoWaitsLeavesTheOtherWaitHoldingItsGroup() {
		List<String> claimedEarly = new ArrayList<>();
		for (int concurrency : new int[] { 0, 2 }) {
			for (boolean cancel : new boolean[] { true, false }) {
				try (TestStore test = TestStore.create()) {
					RedisMessageStore store = test.store();
					TopicKeys keys = store.keys(TOPIC);
					store.send(TOPIC, List.of(grouped("g-0", 1), grouped("g-1", 2)));
					List<ClaimedMessage> both = claim(store, 10, concurrency);
					assertThat(ids(both)).containsExactlyInAnyOrder("g-0", "g-1");
					ClaimedMessage first = both.stream().filter((m) -> m.id().equals("g-0")).findFirst().orElseThrow();
					ClaimedMessage second = both.stream().filter((m) -> m.id().equals("g-1")).findFirst().orElseThrow();
					store.topic(TOPIC)
						.retry("g-0", first.leaseToken(), Duration.ofMinutes(10), "boom", GroupWait.IN_GROUP);
					store.topic(TOPIC)
						.retry("g-1", second.leaseToken(), Duration.ofHours(1), "boom", GroupWait.IN_GROUP);
					assertThat(test.redis().opsForZSet().size(keys.groupWaits())).isEqualTo(3);
					if (cancel) {
						assertThat(store.cancel(TOPIC, "g-1")).isTrue();
					}
					else {
						assertThat(store.reschedule(TOPIC, "g-1", Duration.ofHours(2))).isPositive();
					}
					store.resumeGroup(TOPIC, "g");
					if (ids(claim(store, 10, concurrency)).contains("g-0")) {
						claimedEarly.add((cancel ? "after a cancel of g-1" : "after a reschedule of g-1")
								+ ", group concurrency " + concurrency);
					}
				}
			}
		}
		assertThat(claimedEarly).as("g-0 claimed before its backoff of ten minutes").isEmpty();
	}

	/**
	 * The same two waits, the later one taken first: a replacing send of the later one
	 * ends it; the earlier one's wait must still hold the group against a resume.
	 */
	@Test
	void replacingTheLaterOfTwoWaitingMessagesLeavesTheOtherWaitHoldingItsGroup() {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			store.send(TOPIC, List.of(grouped("g-0", 1), grouped("g-1", 2)));
			List<ClaimedMessage> both = claim(store, 10, 0);
			assertThat(both).hasSize(2);
			for (ClaimedMessage message : both) {
				Duration backoff = message.id().equals("g-0") ? Duration.ofMinutes(10) : Duration.ofHours(1);
				store.topic(TOPIC).retry(message.id(), message.leaseToken(), backoff, "boom", GroupWait.IN_GROUP);
			}
			assertThat(store.send(TOPIC, List.of(grouped("g-1", 3).replacingPending())).get(0).replaced()).isTrue();
			store.resumeGroup(TOPIC, "g");
			assertThat(ids(claim(store, 10, 0))).as("g-0 waits ten minutes more").doesNotContain("g-0");
		}
	}

	/**
	 * What held: with one message waiting, a pause shorter than the wait ends at the
	 * wait's end, and a resume leaves the group paused until it; the same resume sent
	 * again (its token) answers as the first did and changes nothing, also after a new
	 * pause of the group; a cancel with a token equal to nothing cancels nothing.
	 */
	@Test
	void aPauseAndAResumeOfAWaitingGroupKeepItsWaitAndAReplayedResumeChangesNothing() {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			TopicKeys keys = store.keys(TOPIC);
			store.send(TOPIC, List.of(grouped("g-0", 1), grouped("g-1", 2)));
			ClaimedMessage first = claim(store, 1, 1).get(0);
			store.topic(TOPIC).retry("g-0", first.leaseToken(), Duration.ofMinutes(10), "boom", GroupWait.IN_GROUP);
			Double waitEnd = test.redis().opsForZSet().score(keys.groupWaits(), "g");
			assertThat(waitEnd).isNotNull();
			store.pauseGroup(TOPIC, "g", Duration.ofMillis(5));
			assertThat(test.redis().opsForZSet().score(keys.groupPauses(), "g")).isEqualTo(waitEnd);
			assertThat(store.resumeGroup(TOPIC, "g")).isTrue();
			assertThat(test.redis().opsForZSet().score(keys.groupPauses(), "g")).isEqualTo(waitEnd);
			assertThat(ids(claim(store, 10, 1))).isEmpty();
			assertThat(ids(claim(store, 10, 0))).isEmpty();
		}
	}

	/**
	 * Entries of waits that ended leave {@code gw} when a claim finds their group's pause
	 * ended: after a burst of strict retries whose messages were then handled, with no
	 * strict retry since, the key is empty (it kept two entries a group, with no expiry).
	 */
	@Test
	void groupWaitsThatEndedLeaveOnceTheirMessagesAreHandled() {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			TopicKeys keys = store.keys(TOPIC);
			List<NewMessage> messages = new ArrayList<>();
			for (int i = 0; i < 50; i++) {
				messages.add(inGroup("m-" + i, 1, "g" + i));
			}
			store.send(TOPIC, messages);
			List<ClaimedMessage> claimed = claim(store, 100, 1);
			assertThat(claimed).hasSize(50);
			for (ClaimedMessage message : claimed) {
				store.topic(TOPIC)
					.retry(message.id(), message.leaseToken(), Duration.ofMillis(50), "boom", GroupWait.IN_GROUP);
			}
			List<String> handled = new ArrayList<>();
			await().atMost(Duration.ofSeconds(10)).until(() -> {
				for (ClaimedMessage message : claim(store, 100, 1)) {
					handled.add(message.id());
					Transitions.ack(store, TOPIC, message.id(), message.leaseToken());
				}
				return handled.size() == 50;
			});
			assertThat(test.redis().opsForHash().size(keys.messages())).isZero();
			assertThat(test.redis().opsForZSet().size(keys.groupWaits())).as("waits left in gw").isZero();
		}
	}

	/**
	 * Three claimers (no group concurrency) claim one busy group at 300 a second, 1,000
	 * per 2 s and 50 per 100 ms, while a fourth deletes the pauses key ({@code gp}) now
	 * and then (a lost key: a claim puts back the groups parked at their pace): no window
	 * of the period holds more than the limit, by the claims' Redis times.
	 */
	@Test
	void threeClaimersAndLostPausesKeepEveryWindowWithinTheLimit() throws Exception {
		int[][] cases = { { 300, 1000 }, { 1000, 2000 }, { 50, 100 } };
		for (boolean losePauses : new boolean[] { false, true }) {
			for (int[] rate : cases) {
				int limit = rate[0];
				Duration period = Duration.ofMillis(rate[1]);
				try (TestStore test = TestStore.create()) {
					RedisMessageStore store = test.store();
					TopicKeys keys = store.keys(TOPIC);
					List<NewMessage> messages = new ArrayList<>();
					for (int i = 0; i < limit * 2 + 200; i++) {
						messages.add(inGroup("a-" + i, 1 + i, "a"));
					}
					for (int from = 0; from < messages.size(); from += 500) {
						store.send(TOPIC, messages.subList(from, Math.min(messages.size(), from + 500)));
					}
					while (Transitions.promote(store, TOPIC, 1000).moved() > 0) {
						// all ready
					}
					RateLimit groupRate = new RateLimit(limit, period);
					List<Long> times = Collections.synchronizedList(new ArrayList<>());
					List<Throwable> failures = Collections.synchronizedList(new ArrayList<>());
					long runFor = (2L * rate[1] + 300) * 1_000_000L;
					AtomicBoolean running = new AtomicBoolean(true);
					List<Thread> threads = new ArrayList<>();
					for (int t = 0; t < 3; t++) {
						Thread thread = new Thread(() -> {
							try {
								long start = System.nanoTime();
								while (System.nanoTime() - start < runFor) {
									String consumer = "c" + TOKENS.incrementAndGet();
									for (ClaimedMessage message : store.topic(TOPIC)
										.claim(consumer, consumer + ".1", 50, 0, MINUTE, null, 0, GroupWeights.NONE,
												groupRate, WriteGate.OPEN)
										.join()
										.messages()) {
										times.add(micros(message.claimedAt()));
										Transitions.ack(store, TOPIC, message.id(), message.leaseToken());
									}
								}
							}
							catch (Throwable ex) {
								failures.add(ex);
							}
						});
						thread.start();
						threads.add(thread);
					}
					Thread loser = new Thread(() -> {
						while (running.get() && losePauses) {
							test.redis().delete(keys.groupPauses());
							Thread.onSpinWait();
						}
					});
					loser.start();
					for (Thread thread : threads) {
						thread.join();
					}
					running.set(false);
					loser.join();
					assertThat(failures).isEmpty();
					List<Long> sorted = times.stream().sorted().toList();
					System.out.printf("limit %d per %s, pauses lost %s: %d claimed%n", limit, period, losePauses,
							sorted.size());
					assertThat(sorted).hasSizeGreaterThan(limit);
					for (int i = 0; i + limit < sorted.size(); i++) {
						assertThat(sorted.get(i + limit) - sorted.get(i))
							.as("limit %d per %s, pauses lost %s: claims %d and %d", limit, period, losePauses, i,
									i + limit)
							.isGreaterThanOrEqualTo(period.toNanos() / 1000);
					}
				}
			}
		}
	}

	/**
	 * What held: a resume whose reply is lost (dropped after Redis ran it) is sent again
	 * with its token and answers {@code true}, as the first run did: of a group paused
	 * until resumed (it is claimed again) and of a group waiting in strict order (it
	 * stays paused until the wait's end).
	 */
	@Test
	void aResumeWhoseReplyIsLostAnswersTrueWhenSentAgain() {
		try (TestStore test = TestStore.builder().behindProxy().sendTimeout(Duration.ofSeconds(3)).build()) {
			RedisMessageStore store = test.store();
			TopicKeys keys = store.keys(TOPIC);
			store.send(TOPIC,
					List.of(grouped("g-0", 1), grouped("g-1", 2), inGroup("h-0", 1, "h"), inGroup("h-1", 2, "h")));
			store.pauseGroup(TOPIC, "g", null);
			FaultyRedisProxy.Fault fault = test.proxy()
				.dropNextReplyToCommand(FaultyRedisProxy.withArgumentContaining("EVALSHA", ":gw"));
			assertThat(store.resumeGroup(TOPIC, "g")).as("paused until resumed").isTrue();
			assertThat(fault.hasFired()).isTrue();
			ClaimedMessage waiting = claim(store, 10, 1).stream()
				.filter((m) -> m.id().equals("h-0"))
				.findFirst()
				.orElseThrow();
			store.topic(TOPIC).retry("h-0", waiting.leaseToken(), Duration.ofMinutes(10), "boom", GroupWait.IN_GROUP);
			Double waitEnd = test.redis().opsForZSet().score(keys.groupWaits(), "h");
			fault = test.proxy().dropNextReplyToCommand(FaultyRedisProxy.withArgumentContaining("EVALSHA", ":gw"));
			assertThat(store.resumeGroup(TOPIC, "h")).as("waiting in strict order").isTrue();
			assertThat(fault.hasFired()).isTrue();
			assertThat(test.redis().opsForZSet().score(keys.groupPauses(), "h")).isEqualTo(waitEnd);
			assertThat(ids(claim(store, 10, 0))).doesNotContain("h-0", "h-1");
		}
	}

	// ---- Support

	private static long micros(Instant instant) {
		return instant.getEpochSecond() * 1_000_000L + instant.getNano() / 1000;
	}

	private static NewMessage grouped(String id, long dueMillis) {
		return inGroup(id, dueMillis, "g");
	}

	private static NewMessage inGroup(String id, long dueMillis, String group) {
		return new NewMessage(id, false, dueMillis, MessageFormat.encodeBody(Map.of(MessageFormat.GROUP_HEADER, group),
				"x".getBytes(StandardCharsets.UTF_8)))
			.inGroup(group);
	}

	private static List<String> ids(List<ClaimedMessage> claimed) {
		return claimed.stream().map(ClaimedMessage::id).toList();
	}

	private static List<ClaimedMessage> claim(RedisMessageStore store, int limit, int groupConcurrency) {
		String consumer = LeaseTokens.newToken();
		ClaimResult result = Transitions.claim(store, TOPIC, consumer, consumer + ".1", limit, 0, MINUTE, null,
				groupConcurrency);
		return result.messages();
	}

}

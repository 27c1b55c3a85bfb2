package io.github.delayqueue.review;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import io.github.delayqueue.testsupport.CommandStats;
import io.github.delayqueue.convert.JsonPayloadConverter;
import io.github.delayqueue.listener.DelayListenerEndpoint;
import io.github.delayqueue.listener.DelayListenerEndpointRegistry;
import io.github.delayqueue.listener.Delivery;
import io.github.delayqueue.listener.LatePolicy;
import io.github.delayqueue.listener.ListenerSettings;
import io.github.delayqueue.runtime.DelayQueueRuntime;
import io.github.delayqueue.runtime.broker.BrokerSettings;
import io.github.delayqueue.store.ClaimResult;
import io.github.delayqueue.store.ClaimedMessage;
import io.github.delayqueue.store.MessageFormat;
import io.github.delayqueue.store.NewMessage;
import io.github.delayqueue.store.redis.RedisMessageStore;
import io.github.delayqueue.store.redis.TopicKeys;
import io.github.delayqueue.testsupport.OnOneServerVersion;
import io.github.delayqueue.testsupport.TestStore;
import io.github.delayqueue.testsupport.Transitions;
import io.github.delayqueue.time.RetryBackoff;
import org.junit.jupiter.api.Test;

import tools.jackson.databind.json.JsonMapper;

import org.springframework.data.redis.core.StringRedisTemplate;

import static io.github.delayqueue.review.GroupsReviewTests.drain;
import static io.github.delayqueue.review.GroupsReviewTests.due;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Adversarial review of groups, third round, on a real Redis: the changes after the
 * second review (send reads the groups hash only in a call with a grouped or replacing
 * message; claim's two budgets; the whole member checked; collect_member).
 */
@OnOneServerVersion
class GroupsThirdReviewTests {

	private static final String TOPIC = "jobs";

	private static final Duration MINUTE = Duration.ofMinutes(1);

	private static final long LATER = System.currentTimeMillis() + Duration.ofHours(1).toMillis();

	/**
	 * The wedge above in a running application: a listener with a prefetch claims again
	 * at once whenever a claim says more may be waiting, so the consumer spins on claims
	 * that each look at the same 1,000 dropped members and take nothing, and the due
	 * message behind them is never delivered. Measured: the EVALSHA calls Redis served in
	 * the two seconds after the start (a wait of at most three for the delivery).
	 */
	@Test
	void aListenerGetsTheMessageOfAGroupBehindAThousandCancelledOnesWithoutSpinning() throws Exception {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			byte[] body = MessageFormat.encodeBody(Map.of(MessageFormat.GROUP_HEADER, "g"),
					"\"body\"".getBytes(StandardCharsets.UTF_8));
			List<NewMessage> messages = new ArrayList<>();
			for (int i = 0; i < 1000; i++) {
				messages.add(new NewMessage("s-" + i, false, 1 + i, body).inGroup("g"));
			}
			messages.add(new NewMessage("last", false, 5000, body).inGroup("g"));
			store.send(TOPIC, messages);
			Transitions.promote(store, TOPIC, 5000);
			for (int i = 0; i < 1000; i++) {
				store.cancel(TOPIC, "s-" + i);
			}
			List<String> delivered = new java.util.concurrent.CopyOnWriteArrayList<>();
			Listener listener = new Listener(delivered);
			JsonPayloadConverter converter = new JsonPayloadConverter(new JsonMapper());
			DelayListenerEndpointRegistry registry = new DelayListenerEndpointRegistry(converter);
			registry.register(
					new DelayListenerEndpoint(TOPIC, listener, Listener.class.getDeclaredMethod("on", Delivery.class),
							new ListenerSettings(2, 4, 3, MINUTE, new RetryBackoff(Duration.ofSeconds(1), 2.0, MINUTE),
									Duration.ofSeconds(1), Duration.ofSeconds(1), Duration.ofMinutes(5),
									LatePolicy.DELIVER, Duration.ofHours(1))));
			long before = CommandStats.of(test.redis()).scriptCalls();
			DelayQueueRuntime runtime = new DelayQueueRuntime(store, converter,
					new BrokerSettings(100, Duration.ofSeconds(1), Duration.ZERO), registry);
			runtime.start();
			try {
				long start = System.nanoTime();
				try {
					await().atMost(Duration.ofSeconds(3)).until(() -> delivered.contains("last"));
				}
				catch (org.awaitility.core.ConditionTimeoutException ex) {
					// measured and reported below
				}
				long calls = CommandStats.of(test.redis()).scriptCalls() - before;
				long millis = (System.nanoTime() - start) / 1_000_000;
				assertThat(delivered).as("delivered in %d ms, with %d EVALSHA calls", millis, calls)
					.containsExactly("last");
			}
			finally {
				runtime.stop();
			}
		}
	}

	/** Records the ids delivered. */
	static final class Listener {

		private final List<String> delivered;

		Listener(List<String> delivered) {
			this.delivered = delivered;
		}

		void on(Delivery<String> delivery) {
			this.delivered.add(delivery.id());
		}

	}

	@Test
	void aReplacingSendMovesMessagesBetweenGroupsAndNoGroupInOneCallWithOtherIds() {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			TopicKeys keys = store.keys(TOPIC);
			StringRedisTemplate redis = test.redis();
			store.send(TOPIC, List.of(due("a", LATER).inGroup("g"), due("b", LATER).inGroup("g"), due("c", LATER),
					due("f", LATER)));
			store.send(TOPIC,
					List.of(due("d", 5), due("a", 6).replacingPending().inGroup("h"), due("b", 7).replacingPending(),
							due("c", 8).replacingPending().inGroup("g"), due("e", 9).inGroup("g"),
							due("f", 10).replacingPending()));
			assertThat(redis.opsForHash().entries(keys.groups())).isEqualTo(Map.of("a", "h", "c", "g", "e", "g"));
			Transitions.promote(store, TOPIC, 1000);
			assertThat(groupOf(redis, keys)).isEqualTo(Map.of("a", "h", "c", "g", "e", "g"));
			assertThat(redis.opsForList().range(keys.ready(), 0, -1)).containsExactlyInAnyOrder("b", "d", "f");
			assertThat(drain(store, 1)).containsExactlyInAnyOrder("a", "b", "c", "d", "e", "f");
			assertThat(redis.opsForHash().size(keys.groups())).isZero();
		}
	}

	@Test
	void theSameIdTwiceInOneCallEndsWithTheGroupOfTheLastSendThatTookEffect() {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			TopicKeys keys = store.keys(TOPIC);
			StringRedisTemplate redis = test.redis();
			store.send(TOPIC,
					List.of(due("z", LATER), due("z", LATER).replacingPending().inGroup("g"),
							due("w", LATER).inGroup("g"), due("w", LATER).replacingPending(),
							due("v", LATER).inGroup("g"), due("v", LATER).replacingPending().inGroup("h")));
			assertThat(redis.opsForHash().entries(keys.groups())).isEqualTo(Map.of("z", "g", "v", "h"));
		}
	}

	@Test
	void aMessageCancelledWhileReadyAndSentAgainWithoutAGroupIsNotRoutedToItsOldGroup() {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			TopicKeys keys = store.keys(TOPIC);
			StringRedisTemplate redis = test.redis();
			store.send(TOPIC, List.of(due("y", 5).inGroup("g"), due("other", 6).inGroup("k")));
			Transitions.promote(store, TOPIC, 1000);
			assertThat(store.cancel(TOPIC, "y")).isTrue();
			store.send(TOPIC, List.of(due("y", 5)));
			assertThat(redis.opsForHash().entries(keys.groups())).isEqualTo(Map.of("other", "k"));
			Transitions.promote(store, TOPIC, 1000);
			assertThat(redis.opsForList().range(keys.ready(), 0, -1)).containsExactly("y");
			assertThat(drain(store, 1)).containsExactlyInAnyOrder("y", "other");
		}
	}

	@Test
	void aMessageCancelledWhileReadyWithoutAGroupAndSentAgainInOneIsDeliveredOnce() {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			TopicKeys keys = store.keys(TOPIC);
			StringRedisTemplate redis = test.redis();
			store.send(TOPIC, List.of(due("x", 5), due("o", 6).inGroup("k")));
			Transitions.promote(store, TOPIC, 1000);
			assertThat(store.cancel(TOPIC, "x")).isTrue();
			store.send(TOPIC, List.of(due("x", 7).inGroup("g")));
			assertThat(redis.opsForHash().entries(keys.groups())).isEqualTo(Map.of("x", "g", "o", "k"));
			assertThat(drain(store, 1)).containsExactlyInAnyOrder("x", "o");
		}
	}

	@Test
	void aClaimSentAgainWithTheSameTokenReturnsTheSameGroupedMessagesAndTakesNoMore() {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			TopicKeys keys = store.keys(TOPIC);
			List<NewMessage> messages = new ArrayList<>();
			for (int i = 0; i < 40; i++) {
				messages.add(due("m-" + i, 1 + i).inGroup("g" + (i % 3)).withPriority(i % 10));
				messages.add(due("n-" + i, 1 + i).withPriority(i % 7));
			}
			store.send(TOPIC, messages);
			Transitions.promote(store, TOPIC, 1000);
			ClaimResult first = Transitions.claim(store, TOPIC, "c1", "t1", 25, 0, MINUTE);
			Map<Object, Object> gn = test.redis().opsForHash().entries(keys.groupCounts());
			Set<String> ga = test.redis().opsForZSet().range(keys.groupRotation(), 0, -1);
			ClaimResult again = Transitions.claim(store, TOPIC, "c1", "t1", 25, 0, MINUTE);
			assertThat(ids(again)).isEqualTo(ids(first));
			assertThat(test.redis().opsForHash().entries(keys.groupCounts())).isEqualTo(gn);
			assertThat(test.redis().opsForZSet().range(keys.groupRotation(), 0, -1)).isEqualTo(ga);
			List<String> rest = drain(store, 7);
			assertThat(rest).doesNotContainAnyElementsOf(ids(first)).hasSize(80 - 25);
		}
	}

	// ---- Holes found
	// --------------------------------------------------------------------

	/**
	 * A group whose first 1,000 members are dropped (their messages cancelled while
	 * ready) is wedged: the claim stops at the groups' budget with {@code more} set, but
	 * skips marking the group served, so the members it looked at stay in the set and
	 * every later claim looks at the same 1,000 again. The due message behind them is
	 * never claimed, and each claim tells the consumer that more may be waiting.
	 */
	@Test
	void aDueMessageOfAGroupBehindAThousandDroppedMembersIsClaimedByTheNextClaims() {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			TopicKeys keys = store.keys(TOPIC);
			List<NewMessage> messages = new ArrayList<>();
			for (int i = 0; i < 1000; i++) {
				messages.add(due("s-" + i, 1 + i).inGroup("g"));
			}
			messages.add(due("last", 5000).inGroup("g"));
			store.send(TOPIC, messages);
			Transitions.promote(store, TOPIC, 5000);
			for (int i = 0; i < 1000; i++) {
				store.cancel(TOPIC, "s-" + i);
			}
			List<String> claimed = new ArrayList<>();
			List<Boolean> more = new ArrayList<>();
			for (int i = 0; i < 10 && claimed.isEmpty(); i++) {
				ClaimResult result = Transitions.claim(store, TOPIC, "c1", "t" + i, 10, 0, MINUTE);
				claimed.addAll(ids(result));
				more.add(result.more());
			}
			assertThat(claimed)
				.as("claimed by ten claims of 10 (more: %s), with %d members left in gq", more,
						test.redis().opsForZSet().size(keys.groupReady()))
				.containsExactly("last");
		}
	}

	/**
	 * The same stop at the groups' budget in a claim of 1,000 that takes all it looks at
	 * (70 groups of 20: 62 turns of 16, then 8 from the 63rd group): the group whose
	 * first turn ends at the budget is not marked served, so the members of the messages
	 * it took stay in the set and its count and finish tag are not moved on (it took its
	 * turn for free).
	 */
	@Test
	void theMembersOfMessagesTakenByAClaimOfAThousandLeaveTheGroupReadySet() {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			TopicKeys keys = store.keys(TOPIC);
			List<NewMessage> messages = new ArrayList<>();
			for (int i = 0; i < 1400; i++) {
				messages.add(due("m-" + i, 1 + i).inGroup("g" + (i % 70)));
			}
			store.send(TOPIC, messages);
			Transitions.promote(store, TOPIC, 5000);
			ClaimResult result = Transitions.claim(store, TOPIC, "c1", "t1", 1000, 0, MINUTE);
			assertThat(result.messages()).hasSize(1000);
			Map<String, String> left = groupOf(test.redis(), keys);
			assertThat(left.keySet())
				.as("members left: %d; gn %s", left.size(), test.redis().opsForHash().entries(keys.groupCounts()))
				.doesNotContainAnyElementsOf(ids(result));
		}
	}

	@Test
	void aDeadLetterOfAGroupWithAPriorityIsReplayedIntoItsGroupAndAnIdSentAgainWithoutOneStaysOutOfIt() {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			TopicKeys keys = store.keys(TOPIC);
			StringRedisTemplate redis = test.redis();
			byte[] body = MessageFormat.encodeBody(Map.of("delay-queue-group", "g"),
					"x".getBytes(StandardCharsets.UTF_8));
			store.send(TOPIC, List.of(new NewMessage("p", false, 5, body).inGroup("g").withPriority(5),
					new NewMessage("q", false, 6, body).inGroup("g")));
			Transitions.promote(store, TOPIC, 1000);
			for (ClaimedMessage message : Transitions.claim(store, TOPIC, 10, MINUTE)) {
				assertThat(Transitions.deadLetter(store, TOPIC, message.id(), message.leaseToken(), "boom")).isTrue();
			}
			assertThat(redis.opsForHash().size(keys.groups())).isZero();
			store.send(TOPIC, List.of(due("q", 7)));
			assertThat(store.replayDead(TOPIC, List.of("p", "q")).replayed()).containsExactly("p");
			assertThat(redis.opsForHash().entries(keys.groups())).isEqualTo(Map.of("p", "g"));
			Transitions.promote(store, TOPIC, 1000);
			assertThat(groupOf(redis, keys)).isEqualTo(Map.of("p", "g"));
			assertThat(redis.opsForZSet().range(keys.groupReady(), 0, -1)).allMatch((m) -> m.startsWith("g\0" + 4));
			assertThat(redis.opsForList().range(keys.ready(), 0, -1)).containsExactly("q");
			assertThat(drain(store, 1)).containsExactlyInAnyOrder("p", "q");
		}
	}

	private static List<String> ids(ClaimResult result) {
		return result.messages().stream().map(ClaimedMessage::id).toList();
	}

	private static Map<String, String> groupOf(StringRedisTemplate redis, TopicKeys keys) {
		Map<String, String> groups = new HashMap<>();
		for (String member : redis.opsForZSet().range(keys.groupReady(), 0, -1)) {
			int nul = member.indexOf('\0');
			groups.put(member.substring(member.lastIndexOf('\0') + 1), member.substring(0, nul));
		}
		return groups;
	}

}

package io.github.delayqueue.review;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;

import io.github.delayqueue.producer.DelayMessage;
import io.github.delayqueue.producer.DelayQueueTemplate;
import io.github.delayqueue.store.ClaimResult;
import io.github.delayqueue.store.ClaimedMessage;
import io.github.delayqueue.store.LeaseTokens;
import io.github.delayqueue.store.MessageFormat;
import io.github.delayqueue.store.NewMessage;
import io.github.delayqueue.store.RateLimit;
import io.github.delayqueue.store.TopicPartitions;
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
import org.springframework.data.redis.core.script.DefaultRedisScript;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Review of commit 46cb8105 (claim takes an id without a priorities-hash entry from the
 * list of the priority its body's {@code delay-queue-priority} header names, and a claim
 * that found the plain ready list and the priorities hash empty reads the lists of 9 to
 * 1): attacks it on real Redis for messages delivered twice or stranded (stale copies of
 * cancelled, re-sent and replaced messages with and without the hash, hand-backs, lease
 * expiry, dead letters and replays, groups, lookahead ids kept at the plain list's head,
 * claims sent twice, bodies with no or a bogus priority header) and for its cost on a
 * topic without priorities.
 */
@OnOneServerVersion
class LostPrioritiesReviewTests {

	private static final String TOPIC = "orders";

	private static final Duration LEASE = Duration.ofMinutes(1);

	private static final Duration WAIT = Duration.ofSeconds(10);

	/**
	 * Moves a stored message to the list KEYS[3], due now, and deletes the priorities
	 * hash KEYS[4], without any signal.
	 */
	private static final DefaultRedisScript<Long> MAKE_READY_WITHOUT_PRIORITY = new DefaultRedisScript<>("""
			local v = redis.call('HGET', KEYS[1], ARGV[1])
			local a, d, body = string.match(v, '^(%d+):(%d+):(.*)$')
			local t = redis.call('TIME')
			local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
			redis.call('HSET', KEYS[1], ARGV[1], a .. ':' .. now .. ':' .. body)
			redis.call('ZREM', KEYS[2], ARGV[1])
			redis.call('DEL', KEYS[4])
			return redis.call('RPUSH', KEYS[3], ARGV[1])
			""", Long.class);

	@Test
	void aMessageCancelledWhileReadyOnNineAndSentAgainWithZeroOrFiveIsClaimedOnceWithOrWithoutTheHash() {
		try (TestStore fixture = TestStore.create()) {
			RedisMessageStore store = fixture.store();
			for (int again : new int[] { 0, 5 }) {
				for (boolean lost : new boolean[] { false, true }) {
					String topic = "t" + again + lost;
					send(fixture.template(), topic, "x", 9, Duration.ZERO);
					send(fixture.template(), topic, "other", 3, Duration.ZERO);
					Transitions.promote(store, topic, 10);
					assertThat(store.cancel(topic, "x")).isTrue();
					send(fixture.template(), topic, "x", again, Duration.ZERO);
					Transitions.promote(store, topic, 10);
					if (lost) {
						fixture.redis().delete(store.keys(topic).priorities());
					}
					assertThat(drain(store, topic)).as("again %d, hash lost %s", again, lost)
						.containsExactlyInAnyOrder("x", "other");
					assertStrandsNothing(fixture, topic);
				}
			}
		}
	}

	@Test
	void aReplacingSendThatChangesThePriorityOfAMessageWithAStaleCopyDeliversItOnce() {
		try (TestStore fixture = TestStore.create()) {
			RedisMessageStore store = fixture.store();
			for (boolean lost : new boolean[] { false, true }) {
				String topic = "replace" + lost;
				send(fixture.template(), topic, "x", 9, Duration.ZERO);
				Transitions.promote(store, topic, 10);
				// Cancelled while ready (a stale copy on the list of 9), sent again
				// scheduled, then replaced with another priority and due now.
				assertThat(store.cancel(topic, "x")).isTrue();
				send(fixture.template(), topic, "x", 9, Duration.ofHours(1));
				fixture.template()
					.send(DelayMessage.builder(topic, "new body").id("x").priority(2).replaceIfPending().build());
				Transitions.promote(store, topic, 10);
				if (lost) {
					fixture.redis().delete(store.keys(topic).priorities());
				}
				List<String> first = drain(store, topic);
				assertThat(first).as("hash lost %s", lost).containsExactly("x");
				assertStrandsNothing(fixture, topic);
			}
		}
	}

	@Test
	void aMessageClaimedThroughTheStrayListReadThenHandedBackOrExpiredIsClaimedOnceMore() {
		try (TestStore fixture = TestStore.create()) {
			RedisMessageStore store = fixture.store();
			TopicKeys keys = store.keys(TOPIC);
			send(fixture.template(), TOPIC, "released", 9, Duration.ZERO);
			send(fixture.template(), TOPIC, "expired", 7, Duration.ZERO);
			Transitions.promote(store, TOPIC, 10);
			fixture.redis().delete(keys.priorities());
			List<ClaimedMessage> claimed = Transitions.claim(store, TOPIC, 10, Duration.ofSeconds(1));
			assertThat(claimed).extracting(ClaimedMessage::id).containsExactly("released", "expired");
			// Stale copies of both in the lists they came from, as well as in the plain
			// list.
			fixture.redis().opsForList().rightPushAll(keys.ready(9), "released", "expired");
			fixture.redis().opsForList().rightPushAll(keys.ready(7), "expired", "released");
			assertThat(Transitions.release(store, TOPIC, "released", claimed.get(0).leaseToken())).isTrue();
			await().atMost(WAIT).untilAsserted(() -> {
				Transitions.expireLeases(store, TOPIC, 10, 10);
				assertThat(store.inspect(TOPIC, "expired", 10).state().name()).isEqualTo("READY");
			});
			assertThat(drain(store, TOPIC)).containsExactlyInAnyOrder("released", "expired");
			assertStrandsNothing(fixture, TOPIC);
		}
	}

	@Test
	void aClaimSentAgainAfterTheStrayListReadReturnsWhatItLeasedAndClaimsNothingNew() {
		try (TestStore fixture = TestStore.create()) {
			RedisMessageStore store = fixture.store();
			send(fixture.template(), TOPIC, "a", 9, Duration.ZERO);
			send(fixture.template(), TOPIC, "b", 4, Duration.ZERO);
			Transitions.promote(store, TOPIC, 10);
			fixture.redis().delete(store.keys(TOPIC).priorities());
			String consumer = LeaseTokens.newToken();
			ClaimResult first = Transitions.claim(store, TOPIC, consumer, consumer + ".1", 1, 0, LEASE);
			assertThat(first.messages()).extracting(ClaimedMessage::id).containsExactly("a");
			ClaimResult again = Transitions.claim(store, TOPIC, consumer, consumer + ".1", 1, 0, LEASE);
			assertThat(again.messages()).extracting(ClaimedMessage::id).containsExactly("a");
			assertThat(Transitions.claim(store, TOPIC, 10, LEASE)).extracting(ClaimedMessage::id).containsExactly("b");
		}
	}

	@Test
	void aClaimWhoseReplyIsDroppedAfterTheStrayListReadLeasesEachMessageOnce() {
		try (TestStore fixture = TestStore.builder().behindProxy().build()) {
			RedisMessageStore store = fixture.store();
			send(fixture.template(), TOPIC, "a", 9, Duration.ZERO);
			send(fixture.template(), TOPIC, "b", 4, Duration.ZERO);
			Transitions.promote(store, TOPIC, 10);
			fixture.redis().delete(store.keys(TOPIC).priorities());
			FaultyRedisProxy.Fault fault = fixture.proxy()
				.dropNextReplyToCommand(FaultyRedisProxy.withArgumentContaining("EVALSHA", consumerMark()));
			String consumer = consumerMark() + LeaseTokens.newToken();
			List<String> ids = new ArrayList<>();
			try {
				ClaimResult result = Transitions.claim(store, TOPIC, consumer, consumer + ".1", 1, 0, LEASE);
				result.messages().forEach((message) -> ids.add(message.id()));
			}
			catch (RuntimeException ex) {
				// The reply lost: the consumer sends the same request again.
				ClaimResult result = Transitions.claim(store, TOPIC, consumer, consumer + ".1", 1, 0, LEASE);
				result.messages().forEach((message) -> ids.add(message.id()));
			}
			assertThat(fault.hasFired()).isTrue();
			assertThat(ids).containsExactly("a");
			assertThat(Transitions.claim(store, TOPIC, 10, LEASE)).extracting(ClaimedMessage::id).containsExactly("b");
		}
	}

	@Test
	void deadLettersWithAPriorityReplayedAfterBothPrioritiesHashesAreLostAreDeliveredOnce() {
		try (TestStore fixture = TestStore.create()) {
			RedisMessageStore store = fixture.store();
			String queue = TopicPartitions.deadLettersOf(TOPIC);
			store.watchDeadLetters(TOPIC);
			send(fixture.template(), TOPIC, "urgent", 9, Duration.ZERO);
			send(fixture.template(), TOPIC, "low", 2, Duration.ZERO);
			Transitions.promote(store, TOPIC, 10);
			for (ClaimedMessage message : Transitions.claim(store, TOPIC, 10, LEASE)) {
				assertThat(Transitions.deadLetter(store, TOPIC, message.id(), message.leaseToken(), "failed")).isTrue();
			}
			fixture.redis().delete(store.keys(queue).priorities());
			assertThat(drain(store, queue)).hasSize(2);
			fixture.redis().delete(store.keys(TOPIC).priorities());
			fixture.redis().delete(store.keys(TOPIC).deadPriorities());
			assertThat(store.replayDead(TOPIC, List.of("urgent", "low")).replayed()).hasSize(2);
			Transitions.promote(store, TOPIC, 10);
			assertThat(drain(store, TOPIC)).containsExactlyInAnyOrder("urgent", "low");
			assertStrandsNothing(fixture, TOPIC);
		}
	}

	/**
	 * A copy without an entry on the list of its body's priority, left by a cancel of the
	 * message while ready with no group before it was sent again in a group with the same
	 * priority, is taken from the list by the stray-list read: its group member is looked
	 * for with rank 9 (no priority), not 4, so it is not found.
	 */
	@Test
	void aGroupedCopyOnTheListOfItsPriorityIsNotTakenPastItsGroupsConcurrencyAfterTheHashIsLost() {
		try (TestStore fixture = TestStore.create()) {
			RedisMessageStore store = fixture.store();
			sendInGroup(fixture.template(), "first", 5, "g");
			Transitions.promote(store, TOPIC, 10);
			assertThat(claim(store, 10, 1)).containsExactly("first");
			send(fixture.template(), TOPIC, "x", 5, Duration.ZERO);
			Transitions.promote(store, TOPIC, 10);
			assertThat(store.cancel(TOPIC, "x")).isTrue();
			sendInGroup(fixture.template(), "x", 5, "g");
			Transitions.promote(store, TOPIC, 10);
			fixture.redis().delete(store.keys(TOPIC).priorities());

			assertThat(claim(store, 10, 1)).as("group g has its one slot in flight").isEmpty();
		}
	}

	@Test
	void aReadyMessageOfAGroupWithAPriorityIsStillClaimedAfterTheHashIsLost() {
		try (TestStore fixture = TestStore.create()) {
			RedisMessageStore store = fixture.store();
			sendInGroup(fixture.template(), "grouped", 6, "g");
			Transitions.promote(store, TOPIC, 10);
			fixture.redis().delete(store.keys(TOPIC).priorities());

			assertThat(drain(store, TOPIC)).containsExactly("grouped");
			assertStrandsNothing(fixture, TOPIC);
		}
	}

	@Test
	void aDueMessageOnTheListOfNineIsClaimedWhileThePlainListHoldsOnlyIdsKeptNotYetDue() {
		try (TestStore fixture = TestStore.create()) {
			RedisMessageStore store = fixture.store();
			send(fixture.template(), TOPIC, "urgent", 9, Duration.ZERO);
			Transitions.promote(store, TOPIC, 10);
			fixture.redis().delete(store.keys(TOPIC).priorities());
			send(fixture.template(), TOPIC, "soon", 0, Duration.ofSeconds(30));
			Transitions.promote(store, TOPIC, 10, Duration.ofMinutes(1));
			assertThat(fixture.redis().opsForList().range(store.keys(TOPIC).ready(), 0, -1)).containsExactly("soon");

			String consumer = LeaseTokens.newToken();
			ClaimResult limited = Transitions.claim(store, TOPIC, consumer, consumer + ".1", 10, 0, LEASE,
					new RateLimit(100, Duration.ofSeconds(1)));
			assertThat(limited.messages()).extracting(ClaimedMessage::id).containsExactly("urgent");
		}
	}

	@Test
	void aMessageOnTheListOfNineGetsItsTurnBesideABusyGroupAfterTheHashIsLost() {
		try (TestStore fixture = TestStore.create()) {
			RedisMessageStore store = fixture.store();
			send(fixture.template(), TOPIC, "urgent", 9, Duration.ZERO);
			for (int i = 0; i < 30; i++) {
				sendInGroup(fixture.template(), "g" + i, 0, "g");
			}
			Transitions.promote(store, TOPIC, 100);
			fixture.redis().delete(store.keys(TOPIC).priorities());

			assertThat(claim(store, 10, 0)).contains("urgent");
		}
	}

	@Test
	void withTheHashPresentAMessageOnTheListOfNineIsServedFirstBesideABusyGroup() {
		try (TestStore fixture = TestStore.create()) {
			RedisMessageStore store = fixture.store();
			send(fixture.template(), TOPIC, "urgent", 9, Duration.ZERO);
			for (int i = 0; i < 30; i++) {
				sendInGroup(fixture.template(), "g" + i, 0, "g");
			}
			Transitions.promote(store, TOPIC, 100);

			assertThat(claim(store, 10, 0)).contains("urgent");
		}
	}

	@Test
	void bodiesWhosePriorityHeaderNamesTheListAreTakenAndOthersDroppedWithoutDoubleDelivery() {
		try (TestStore fixture = TestStore.create()) {
			RedisMessageStore store = fixture.store();
			// Sent through the store as a client of the SPI would: priority 9, headers
			// written by hand.
			store.send(TOPIC,
					List.of(raw("spaced", Map.of(MessageFormat.PRIORITY_HEADER, "9 ")),
							raw("named", Map.of(MessageFormat.PRIORITY_HEADER, "9")),
							raw("twelve", Map.of(MessageFormat.PRIORITY_HEADER, "12")),
							raw("letter", Map.of(MessageFormat.PRIORITY_HEADER, "x"))));
			Transitions.promote(store, TOPIC, 10);
			fixture.redis().delete(store.keys(TOPIC).priorities());

			List<String> ids = drain(store, TOPIC);
			assertThat(ids).doesNotHaveDuplicates().contains("spaced", "named");
			System.out.printf("bogus headers: claimed %s, stored %d%n", ids,
					fixture.redis().opsForHash().size(store.keys(TOPIC).messages()));
		}
	}

	@Test
	@Disabled("finding: a message the store accepted with priority 9 whose body does not carry the priority header"
			+ " (a body not in the stored format, or a header \"12\" or \"x\", sent through the MessageStore SPI) is"
			+ " dropped from its list once the priorities hash is lost: it stays stored, in no list, never"
			+ " delivered")
	void aMessageWithAPriorityWhoseBodyHasNoReadableHeaderIsNotStrandedWhenTheHashIsLost() {
		try (TestStore fixture = TestStore.create()) {
			RedisMessageStore store = fixture.store();
			store.send(TOPIC,
					List.of(new NewMessage("opaque", true, 0,
							"not in the stored format".getBytes(StandardCharsets.UTF_8), false, 9, false, null),
							raw("twelve", Map.of(MessageFormat.PRIORITY_HEADER, "12"))));
			Transitions.promote(store, TOPIC, 10);
			fixture.redis().delete(store.keys(TOPIC).priorities());

			assertThat(drain(store, TOPIC)).containsExactlyInAnyOrder("opaque", "twelve");
			assertStrandsNothing(fixture, TOPIC);
		}
	}

	/**
	 * A message of priority 9 whose entry is lost, beside a new message of priority 0:
	 * the claim reads the list of 9 first, as the list exists (finding, fixed: the claim
	 * that took the plain list's last id said nothing more was waiting, and the broker's
	 * read said the same, so a consumer fed messages of priority 0 never made the claim
	 * that read it).
	 */
	@Test
	void aClaimOfThePlainListTakesAMessageOfTheListOfNineWhoseEntryIsLostFirst() {
		try (TestStore fixture = TestStore.create()) {
			RedisMessageStore store = fixture.store();
			send(fixture.template(), TOPIC, "urgent", 9, Duration.ZERO);
			Transitions.promote(store, TOPIC, 10);
			fixture.redis().delete(store.keys(TOPIC).priorities());
			send(fixture.template(), TOPIC, "plain", 0, Duration.ZERO);
			boolean readyWaiting = Transitions.promote(store, TOPIC, 10).readyWaiting();

			String consumer = LeaseTokens.newToken();
			ClaimResult first = Transitions.claim(store, TOPIC, consumer, consumer + ".1", 10, 0, LEASE);
			assertThat(first.messages()).extracting(ClaimedMessage::id)
				.as("the lists of priorities read while one exists")
				.containsExactly("urgent", "plain");
			assertThat(readyWaiting).isTrue();
		}
	}

	/**
	 * A running listener, idle: a message of priority 9 is made ready on its list without
	 * a signal (as a lost wake-up) while the priorities hash is lost. A claim would take
	 * it now, but the broker's promote still reports the ready lists empty (ready_waiting
	 * counts the lists of 1-9 only while the hash is not empty, "as no claim reads
	 * them"), so the consumer's idle check claims nothing, for good.
	 */
	@Test
	void anIdleListenerClaimsAMessageOnTheListOfNineWhoseSignalAndHashAreLost() {
		Duration interval = Duration.ofMillis(300);
		try (IdleCheckReviewTests.App app = new IdleCheckReviewTests.App(1, interval, interval)) {
			String id = "urgent";
			app.other.template()
				.send(DelayMessage.builder("idle", "body").id(id).priority(9).delay(Duration.ofHours(1)).build());
			// Settled first (as IdleCheckReviewTests does): the start's claims are over.
			await().pollDelay(interval.multipliedBy(3)).until(() -> true);
			String partition = app.other.store().partitions().nameFor("idle", id);
			TopicKeys keys = app.other.store().keys(partition);
			app.other.redis()
				.execute(MAKE_READY_WITHOUT_PRIORITY,
						List.of(keys.messages(), keys.scheduled(), keys.ready(9), keys.priorities()), id);
			boolean waiting = Transitions.promote(app.other.store(), partition, 10).readyWaiting();
			System.out.printf("idle listener: the broker's read says ready waiting %s%n", waiting);
			long readyAt = System.nanoTime();
			await().atMost(Duration.ofSeconds(4)).until(() -> app.received.containsKey(id));
			System.out.printf("idle listener: claimed %d ms after it was made ready%n",
					(app.received.get(id) - readyAt) / 1_000_000);
			assertThat(waiting).as("the broker's read of the ready lists").isTrue();
		}
	}

	@Test
	void aClaimOfATopicWithoutPrioritiesThatFindsIdsInThePlainListRunsNoNewCommand() {
		try (TestStore fixture = TestStore.create()) {
			RedisMessageStore store = fixture.store();
			StringRedisTemplate redis = fixture.redis();
			for (int i = 0; i < 5; i++) {
				send(fixture.template(), TOPIC, "p" + i, 0, Duration.ZERO);
			}
			Transitions.promote(store, TOPIC, 10);
			Transitions.claim(store, TOPIC, 1, LEASE);
			Map<String, Long> before = commandCalls(redis);
			assertThat(Transitions.claim(store, TOPIC, 2, LEASE)).hasSize(2);
			Map<String, Long> found = delta(before, commandCalls(redis));
			// Fewer wanted than found, and more wanted than found (the list ends short).
			before = commandCalls(redis);
			assertThat(Transitions.claim(store, TOPIC, 10, LEASE)).hasSize(2);
			Map<String, Long> short_ = delta(before, commandCalls(redis));
			before = commandCalls(redis);
			assertThat(Transitions.claim(store, TOPIC, 10, LEASE)).isEmpty();
			Map<String, Long> idle = delta(before, commandCalls(redis));
			System.out.printf("claim commands: found %s; list ended short %s; idle %s%n", found, short_, idle);
			// The priorities hash and the lists of 1-9 in one EXISTS, in place of the
			// hash's
			// HLEN: as many commands as before.
			assertThat(found).doesNotContainKeys("cmdstat_llen").containsEntry("cmdstat_exists", 2L);
			assertThat(short_).doesNotContainKeys("cmdstat_llen").containsEntry("cmdstat_exists", 2L);
			assertThat(idle).doesNotContainKeys("cmdstat_llen").containsEntry("cmdstat_exists", 2L);
			assertThat(found.values().stream().mapToLong(Long::longValue).sum())
				.isEqualTo(short_.values().stream().mapToLong(Long::longValue).sum());
		}
	}

	private static List<String> claim(RedisMessageStore store, int limit, int groupConcurrency) {
		String consumer = LeaseTokens.newToken();
		return Transitions.claim(store, TOPIC, consumer, consumer + ".1", limit, 0, LEASE, null, groupConcurrency)
			.messages()
			.stream()
			.map(ClaimedMessage::id)
			.toList();
	}

	/** Claims and acknowledges until a claim finds nothing; returns every id claimed. */
	private static List<String> drain(RedisMessageStore store, String topic) {
		List<String> ids = new ArrayList<>();
		for (int round = 0; round < 50; round++) {
			List<ClaimedMessage> claimed = Transitions.claim(store, topic, 3, LEASE);
			if (claimed.isEmpty()) {
				break;
			}
			for (ClaimedMessage message : claimed) {
				ids.add(message.id());
				assertThat(Transitions.ack(store, topic, message.id(), message.leaseToken())).isTrue();
			}
		}
		return ids;
	}

	private static void assertStrandsNothing(TestStore fixture, String topic) {
		TopicKeys keys = fixture.store().keys(topic);
		assertThat(fixture.redis().opsForHash().entries(keys.messages())).as("stored after the drain").isEmpty();
	}

	private static void send(DelayQueueTemplate template, String topic, String id, int priority, Duration delay) {
		template.send(DelayMessage.builder(topic, "body of " + id).id(id).priority(priority).delay(delay).build());
	}

	private static void sendInGroup(DelayQueueTemplate template, String id, int priority, String group) {
		template.send(DelayMessage.builder(TOPIC, "body of " + id).id(id).priority(priority).group(group).build());
	}

	private static NewMessage raw(String id, Map<String, String> headers) {
		return new NewMessage(id, true, 0, MessageFormat.encodeBody(headers, id.getBytes(StandardCharsets.UTF_8)),
				false, 9, false, null);
	}

	private static String consumerMark() {
		return "dropme-";
	}

	private static Map<String, Long> commandCalls(StringRedisTemplate redis) {
		Properties stats = redis
			.execute((RedisCallback<Properties>) (RedisConnection connection) -> connection.serverCommands()
				.info("commandstats"));
		Map<String, Long> calls = new java.util.TreeMap<>();
		for (String name : stats.stringPropertyNames()) {
			String value = stats.getProperty(name);
			int at = value.indexOf("calls=") + 6;
			int end = value.indexOf(',', at);
			calls.put(name, Long.parseLong(value.substring(at, (end < 0) ? value.length() : end)));
		}
		return calls;
	}

	private static Map<String, Long> delta(Map<String, Long> before, Map<String, Long> after) {
		Map<String, Long> delta = new java.util.TreeMap<>();
		after.forEach((name, calls) -> {
			long d = calls - before.getOrDefault(name, 0L);
			if (d > 0 && !name.equals("cmdstat_info")) {
				delta.put(name, d);
			}
		});
		return delta;
	}

}

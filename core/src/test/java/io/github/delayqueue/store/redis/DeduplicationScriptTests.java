package io.github.delayqueue.store.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.github.delayqueue.store.ClaimedMessage;
import io.github.delayqueue.store.MessageFormat;
import io.github.delayqueue.store.NewMessage;
import io.github.delayqueue.store.ReplayResult;
import io.github.delayqueue.store.Sent;
import io.github.delayqueue.testsupport.TestStore;
import io.github.delayqueue.testsupport.Transitions;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Deduplication windows at the store level, on real Redis: what the send, ack and replay
 * scripts remember and refuse, the bound, and keys of the wrong type or odd values, which
 * either fail a call before its first write or leave the guarantee as it is.
 */
class DeduplicationScriptTests {

	private static final String TOPIC = "dedupe";

	private static final Duration LEASE = Duration.ofMinutes(1);

	private static final long HOUR_MS = Duration.ofHours(1).toMillis();

	static NewMessage windowed(String id, String window, String payload) {
		Map<String, String> headers = new LinkedHashMap<>();
		headers.put("h", "v");
		headers.put(MessageFormat.DEDUPLICATION_HEADER, window);
		byte[] body = MessageFormat.encodeBody(headers, payload.getBytes(StandardCharsets.UTF_8));
		return NewMessage.afterDelay(id, Duration.ZERO, body).deduplicating();
	}

	static NewMessage plain(String id) {
		return NewMessage.afterDelay(id, Duration.ZERO, MessageFormat.encodeBody(Map.of(), new byte[] { 1 }));
	}

	static ClaimedMessage claimOne(RedisMessageStore store) {
		Transitions.promote(store, TOPIC, 100);
		List<ClaimedMessage> claimed = Transitions.claim(store, TOPIC, 1, LEASE);
		assertThat(claimed).hasSize(1);
		return claimed.get(0);
	}

	static void run(ScriptTest test) {
		ScriptTest.run(test);
	}

	@Test
	void aDeadLetterOfAnIdRememberedSinceIsNotReplayedWithinTheWindow() {
		run((template, store, redis) -> {
			// First incarnation dies.
			store.send(TOPIC, List.of(windowed("x", Long.toString(HOUR_MS), "first")));
			ClaimedMessage first = claimOne(store);
			assertThat(Transitions.deadLetter(store, TOPIC, "x", first.leaseToken(), "boom")).isTrue();
			// Sent anew (a dead letter is not stored), handled and acknowledged:
			// remembered.
			assertThat(store.send(TOPIC, List.of(windowed("x", Long.toString(HOUR_MS), "second"))).get(0).duplicate())
				.isFalse();
			ClaimedMessage second = claimOne(store);
			assertThat(Transitions.ack(store, TOPIC, "x", second.leaseToken())).isTrue();
			assertThat(redis.opsForZSet().score(store.keys(TOPIC).remembered(), "x")).isNotNull();
			assertThat(store.send(TOPIC, List.of(windowed("x", Long.toString(HOUR_MS), "third"))).get(0).duplicate())
				.as("a send within the window is refused")
				.isTrue();
			ReplayResult result = store.replayDead(TOPIC, List.of("x"));
			assertThat(result.replayed()).as("replay of a dead letter whose id is remembered").isEmpty();
			assertThat(store.stats(TOPIC).dead()).isOne();
		});
	}

	@Test
	void retryThenAckAndDeadLetterReplayThenAckAreRemembered() {
		run((template, store, redis) -> {
			store.send(TOPIC, List.of(windowed("r", Long.toString(HOUR_MS), "p")));
			ClaimedMessage first = claimOne(store);
			Transitions.retry(store, TOPIC, "r", first.leaseToken(), Duration.ZERO, "an error");
			ClaimedMessage second = claimOne(store);
			assertThat(MessageFormat.decode("r", second.stored()).headers()).containsKeys(MessageFormat.ERROR_HEADER,
					MessageFormat.DEDUPLICATION_HEADER);
			assertThat(Transitions.ack(store, TOPIC, "r", second.leaseToken())).isTrue();
			store.send(TOPIC, List.of(windowed("d", Long.toString(HOUR_MS), "p")));
			ClaimedMessage dying = claimOne(store);
			Transitions.deadLetter(store, TOPIC, "d", dying.leaseToken(), "boom");
			assertThat(store.replayDead(TOPIC, List.of("d")).replayed()).containsExactly("d");
			ClaimedMessage replayed = claimOne(store);
			assertThat(Transitions.ack(store, TOPIC, "d", replayed.leaseToken())).isTrue();
			assertThat(redis.opsForZSet().range(store.keys(TOPIC).remembered(), 0, -1)).containsExactlyInAnyOrder("r",
					"d");
			// Replayed send and replayed ack.
			assertThat(store.send(TOPIC, List.of(windowed("r", Long.toString(HOUR_MS), "p"))).get(0).duplicate())
				.isTrue();
			assertThat(Transitions.ack(store, TOPIC, "d", replayed.leaseToken())).isFalse();
			assertThat(store.stats(TOPIC).scheduled() + store.stats(TOPIC).ready() + store.stats(TOPIC).inFlight())
				.isZero();
		});
	}

	@Test
	void manyAcksBeyondTheBoundInOneCallKeepAtMostTheBound() {
		run((template, store, redis) -> {
			store.rememberAtMost(5);
			List<NewMessage> messages = new ArrayList<>();
			for (int i = 0; i < 200; i++) {
				messages.add(windowed("m" + i, Long.toString(HOUR_MS + i), "p"));
			}
			store.send(TOPIC, messages);
			Transitions.promote(store, TOPIC, 1000);
			List<ClaimedMessage> claimed = Transitions.claim(store, TOPIC, 200, LEASE);
			assertThat(Transitions.ack(store, TOPIC, claimed.stream().map(ClaimedMessage::id).toList(),
					claimed.stream().map(ClaimedMessage::leaseToken).toList()))
				.containsOnly(true);
			assertThat(redis.opsForZSet().range(store.keys(TOPIC).remembered(), 0, -1))
				.containsExactlyInAnyOrder("m195", "m196", "m197", "m198", "m199");
		});
	}

	@Test
	void ofWindowsEndingInOneMillisecondTheNameThatSortsFirstIsForgottenFirst() {
		run((template, store, redis) -> {
			store.rememberAtMost(1);
			store.send(TOPIC,
					List.of(windowed("b", Long.toString(HOUR_MS), "p"), windowed("a", Long.toString(HOUR_MS), "p")));
			Transitions.promote(store, TOPIC, 10);
			List<ClaimedMessage> claimed = Transitions.claim(store, TOPIC, 2, LEASE);
			// One call: one time, so both windows end in the same millisecond.
			assertThat(Transitions.ack(store, TOPIC, claimed.stream().map(ClaimedMessage::id).toList(),
					claimed.stream().map(ClaimedMessage::leaseToken).toList()))
				.containsOnly(true);
			assertThat(redis.opsForZSet().range(store.keys(TOPIC).remembered(), 0, -1)).containsExactly("b");
		});
	}

	@Test
	void ofTheNamesOfOneIdTheOneAcknowledgedLaterIsKeptPastTheBound() {
		// StateMachineModelTests (seed 1337031586316, step 750): an id and a replayed
		// earlier dead letter of it, <id>~<time it died>, carry one window; the model
		// forgot the later one.
		run((template, store, redis) -> {
			store.rememberAtMost(1);
			String window = Long.toString(HOUR_MS);
			for (String payload : List.of("first", "second")) {
				store.send(TOPIC, List.of(windowed("x", window, payload)));
				ClaimedMessage dying = claimOne(store);
				assertThat(Transitions.deadLetter(store, TOPIC, "x", dying.leaseToken(), "boom")).isTrue();
			}
			String buried = redis.opsForZSet()
				.range(store.keys(TOPIC).dead(), 0, -1)
				.stream()
				.filter((name) -> name.startsWith("x~"))
				.findFirst()
				.orElseThrow();
			assertThat(store.replayDead(TOPIC, List.of(buried)).replayed()).containsExactly(buried);
			ClaimedMessage replayed = claimOne(store);
			assertThat(replayed.id()).isEqualTo(buried);
			store.send(TOPIC, List.of(windowed("x", window, "third")));
			ClaimedMessage third = claimOne(store);
			assertThat(Transitions.ack(store, TOPIC, "x", third.leaseToken())).isTrue();
			assertThat(Transitions.ack(store, TOPIC, buried, replayed.leaseToken())).isTrue();
			// Its window ends later or, in the same millisecond, "x" sorts first.
			assertThat(redis.opsForZSet().range(store.keys(TOPIC).remembered(), 0, -1)).containsExactly(buried);
		});
	}

	@Test
	void aBoundThatIsNoWholeNumberCountsAsTheDefault() {
		run((template, store, redis) -> {
			store.send(TOPIC, List.of(windowed("a", Long.toString(HOUR_MS), "p"), windowed("b", "7200000", "p")));
			Transitions.promote(store, TOPIC, 10);
			List<ClaimedMessage> claimed = Transitions.claim(store, TOPIC, 2, LEASE);
			redis.opsForValue().set(store.keys(TOPIC).deduplication(), "1.5");
			assertThat(Transitions.ack(store, TOPIC, claimed.stream().map(ClaimedMessage::id).toList(),
					claimed.stream().map(ClaimedMessage::leaseToken).toList()))
				.containsOnly(true);
			assertThat(redis.opsForZSet().range(store.keys(TOPIC).remembered(), 0, -1)).containsExactlyInAnyOrder("a",
					"b");
		});
	}

	@Test
	void ackWithANonNumericBoundStillRemembers() {
		run((template, store, redis) -> {
			store.send(TOPIC, List.of(windowed("a", Long.toString(HOUR_MS), "p")));
			ClaimedMessage claimed = claimOne(store);
			redis.opsForValue().set(store.keys(TOPIC).deduplication(), "not a number");
			assertThat(Transitions.ack(store, TOPIC, "a", claimed.leaseToken())).isTrue();
			assertThat(store.send(TOPIC, List.of(windowed("a", Long.toString(HOUR_MS), "p"))).get(0).duplicate())
				.as("remembered with the default bound")
				.isTrue();
		});
	}

	@Test
	void aSendFailsBeforeItsFirstWriteWhenTheBoundKeyHasTheWrongType() {
		run((template, store, redis) -> {
			String dd = store.keys(TOPIC).deduplication();
			redis.opsForHash().put(dd, "someone", "else");
			Throwable failure = null;
			try {
				store.send(TOPIC, List.of(windowed("a", Long.toString(HOUR_MS), "p")));
			}
			catch (RuntimeException ex) {
				failure = ex;
			}
			assertThat(failure).isNotNull();
			assertThat(WrongTypeKeys.isWrongType(failure)).isTrue();
			assertThat(redis.type(dd).code()).isEqualTo("hash");
			assertThat(redis.opsForHash().keys(store.keys(TOPIC).messages())).isEmpty();
		});
	}

	@Test
	void ackWithRememberedOfTheWrongTypeFailsChangingNothing() {
		run((template, store, redis) -> {
			store.send(TOPIC, List.of(windowed("a", Long.toString(HOUR_MS), "p")));
			ClaimedMessage claimed = claimOne(store);
			redis.opsForList().rightPush(store.keys(TOPIC).remembered(), "wrong");
			Throwable failure = null;
			try {
				Transitions.ack(store, TOPIC, "a", claimed.leaseToken());
			}
			catch (RuntimeException ex) {
				failure = ex;
			}
			assertThat(failure).isNotNull();
			assertThat(WrongTypeKeys.isWrongType(failure)).isTrue();
			assertThat(redis.opsForZSet().score(store.keys(TOPIC).inFlight(), "a")).isNotNull();
			assertThat(redis.opsForHash().hasKey(store.keys(TOPIC).messages(), "a")).isTrue();
			// And a send with it: fails before its first write.
			failure = null;
			try {
				store.send(TOPIC, List.of(windowed("b", Long.toString(HOUR_MS), "p"), plain("c")));
			}
			catch (RuntimeException ex) {
				failure = ex;
			}
			assertThat(failure).isNotNull();
			assertThat(redis.opsForHash().keys(store.keys(TOPIC).messages())).containsExactly("a");
		});
	}

	@Test
	void aWindowThatIsNoWholeNumberOfMillisecondsIsNotRemembered() {
		run((template, store, redis) -> {
			for (String window : List.of("-5", "inf", "1e3", "0x10", " 7", "nan")) {
				String id = "w" + window.strip();
				store.send(TOPIC, List.of(windowed(id, window, "p")));
				ClaimedMessage claimed = claimOne(store);
				assertThat(Transitions.ack(store, TOPIC, id, claimed.leaseToken()))
					.as("ack with window '" + window + "'")
					.isTrue();
				assertThat(redis.opsForZSet().score(store.keys(TOPIC).remembered(), id)).isNull();
			}
		});
	}

	@Test
	void theLargestBoundAnyInstanceSentWithApplies() {
		try (TestStore fixture = TestStore.create()) {
			RedisConnectionFactory connections = fixture.connectionFactory();
			StringRedisTemplate redis = fixture.redis();
			RedisMessageStore big = new RedisMessageStore(connections, fixture.prefix());
			RedisMessageStore small = new RedisMessageStore(connections, fixture.prefix());
			small.rememberAtMost(1);
			for (int i = 0; i < 5; i++) {
				big.send(TOPIC, List.of(windowed("m" + i, Long.toString(HOUR_MS + i), "p")));
			}
			Transitions.promote(big, TOPIC, 100);
			List<ClaimedMessage> claimed = Transitions.claim(big, TOPIC, 5, LEASE);
			Transitions.ack(big, TOPIC, claimed.stream().map(ClaimedMessage::id).toList(),
					claimed.stream().map(ClaimedMessage::leaseToken).toList());
			assertThat(redis.opsForZSet().zCard(big.keys(TOPIC).remembered())).isEqualTo(5);
			// Another instance, configured with max 1, sends an unrelated windowed
			// message.
			small.send(TOPIC, List.of(windowed("other", Long.toString(HOUR_MS), "p")));
			ClaimedMessage other = claimOne(big);
			Transitions.ack(big, TOPIC, "other", other.leaseToken());
			assertThat(redis.opsForZSet().zCard(big.keys(TOPIC).remembered())).isEqualTo(6);
			assertThat(big.send(TOPIC, List.of(windowed("m0", Long.toString(HOUR_MS), "p"))).get(0).duplicate())
				.as("m0 still remembered")
				.isTrue();
		}
	}

}

package io.github.delayqueue.store.redis;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.github.delayqueue.producer.DelayMessage;
import io.github.delayqueue.producer.DelayQueueTemplate;
import io.github.delayqueue.store.ClaimedMessage;
import io.github.delayqueue.store.CorruptMessageException;
import io.github.delayqueue.store.MessageFormat;
import io.github.delayqueue.store.StoredMessage;
import io.github.delayqueue.testsupport.Transitions;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The error header of the stored body (with_error.lua, through retry.lua and
 * expire_leases.lua) against every body shape, corrupt bodies (kept as they are), huge
 * errors, and what replay does with it.
 */
class ErrorHeaderScriptTests {

	private static final String TOPIC = "jobs";

	private static final Duration LEASE = Duration.ofMinutes(1);

	@Test
	void retryKeepsEveryValidBodyShapeByteIdenticalAndSetsTheError() {
		List<Map<String, String>> headerSets = new ArrayList<>();
		headerSets.add(Map.of());
		Map<String, String> many = new LinkedHashMap<>();
		for (int i = 0; i < 200; i++) {
			many.put("h" + i, "v:" + i + ":12:" + i);
		}
		headerSets.add(many);
		Map<String, String> tricky = new LinkedHashMap<>();
		tricky.put("1:a", "3:xyz");
		tricky.put("ключ", "значение ✓ 𝄞");
		tricky.put("empty", "");
		tricky.put("", "empty name");
		headerSets.add(tricky);
		Map<String, String> withOldError = new LinkedHashMap<>(tricky);
		withOldError.put(MessageFormat.ERROR_HEADER, "old");
		withOldError.put("after", "x");
		headerSets.add(withOldError);
		byte[] binary = new byte[256];
		for (int i = 0; i < 256; i++) {
			binary[i] = (byte) i;
		}
		List<byte[]> payloads = List.of(new byte[0], "plain".getBytes(StandardCharsets.UTF_8), binary,
				"1:2:3:a4:bbbb".getBytes(StandardCharsets.UTF_8), "🎉 ünïcödé".getBytes(StandardCharsets.UTF_8));
		List<String> errors = List.of("java.lang.IllegalStateException: 503", "x:1:2:3", "ошибка 😱 ünïcödé", "",
				"e".repeat(2000));
		ScriptTest.run((template, store, redis) -> {
			int n = 0;
			for (Map<String, String> headers : headerSets) {
				for (byte[] payload : payloads) {
					for (String error : errors) {
						String id = "m" + (n++);
						byte[] body = MessageFormat.encodeBody(headers, payload);
						ClaimedMessage claimed = claimWithBody(template, store, redis, id, body);
						assertThat(Transitions.retry(store, TOPIC, id, claimed.leaseToken(), Duration.ofHours(1),
								error.isEmpty() ? null : error))
							.isPositive();
						StoredMessage after = MessageFormat.decode(id, raw(store, redis, id));
						assertThat(after.payload()).as(id).isEqualTo(payload);
						assertThat(MessageFormat.userHeaders(after.headers())).as(id)
							.containsExactlyEntriesOf(MessageFormat.userHeaders(headers));
						assertThat(after.headers().get(MessageFormat.ERROR_HEADER)).as(id)
							.isEqualTo(error.isEmpty() ? null : error);
						assertThat(after.attempts()).isEqualTo(1);
					}
				}
			}
		});
	}

	/**
	 * Bodies that MessageFormat.decode refuses as corrupt. with_error must keep each one
	 * exactly as it was (only the "<attempts>:<due>:" prefix may change).
	 */
	static List<String> corruptBodies() {
		return List.of("garbage", "2:0:payload", "1:x:payload", "1:", "1:1:", "1:1:5:ab", "1:1:1:a9:short",
				"1:9:1:a1:b", // count lies (too many)
				"1: 1:1:a1:bpayload", // leading space in the count (Lua tonumber accepts
										// it)
				"1:0x1:1:a1:bpayload", // hex count
				"1:1e0:1:a1:bpayload", // exponent count
				"1:1.5:1:a1:bpayload", // fractional count
				"1:-1:payload", // negative count
				"1:1:0x1:a1:bpayload", // hex name length
				"1:1:1:a 1:bpayload", // space in a value length
				"1:1:1:a0x1:bpayload", // hex value length
				"1:1:1:a-1:payload", // negative value length
				"1:0000000000000000001:1:a1:bpayload" // 19 digits: Java refuses
		);
	}

	@Test
	void leaseExpiryKeepsEveryCorruptBodyAsItIs() {
		ScriptTest.run((template, store, redis) -> {
			List<String> changed = new ArrayList<>();
			int n = 0;
			for (String corrupt : corruptBodies()) {
				byte[] body = corrupt.getBytes(StandardCharsets.UTF_8);
				assertThat(decodes(body)).as(corrupt).isFalse();
				String id = "c" + (n++);
				claimWithBody(template, store, redis, id, body, Duration.ZERO);
			}
			Transitions.expireLeases(store, TOPIC, 100, 10);
			n = 0;
			for (String corrupt : corruptBodies()) {
				String id = "c" + (n++);
				String after = bodyOf(raw(store, redis, id));
				if (!after.equals(corrupt)) {
					changed.add("'" + corrupt + "' -> '" + after + "'");
				}
			}
			assertThat(changed).as("corrupt bodies rewritten by expire_leases/with_error").isEmpty();
		});
	}

	@Test
	void retryKeepsEveryCorruptBodyAsItIs() {
		ScriptTest.run((template, store, redis) -> {
			List<String> changed = new ArrayList<>();
			int n = 0;
			for (String corrupt : corruptBodies()) {
				byte[] body = corrupt.getBytes(StandardCharsets.UTF_8);
				String id = "r" + (n++);
				ClaimedMessage claimed = claimWithBody(template, store, redis, id, body);
				Transitions.retry(store, TOPIC, id, claimed.leaseToken(), Duration.ofHours(1), "boom");
				String after = bodyOf(raw(store, redis, id));
				if (!after.equals(corrupt)) {
					changed.add("'" + corrupt + "' -> '" + after + "'");
				}
			}
			assertThat(changed).as("corrupt bodies rewritten by retry/with_error").isEmpty();
		});
	}

	@Test
	void aHugeErrorIsCappedAtTwoThousandCharacters() {
		ScriptTest.run((template, store, redis) -> {
			byte[] body = MessageFormat.encodeBody(Map.of("a", "b"), "p".getBytes(StandardCharsets.UTF_8));
			ClaimedMessage claimed = claimWithBody(template, store, redis, "big", body);
			String error = "é".repeat(50_000); // 100 KB of UTF-8
			assertThat(Transitions.retry(store, TOPIC, "big", claimed.leaseToken(), Duration.ofHours(1), error))
				.isPositive();
			StoredMessage after = MessageFormat.decode("big", raw(store, redis, "big"));
			assertThat(after.payload()).isEqualTo("p".getBytes(StandardCharsets.UTF_8));
			assertThat(after.headers().get(MessageFormat.ERROR_HEADER)).hasSize(2000);
		});
	}

	@Test
	void replayOfADeadLetterDropsThePreviousError() {
		ScriptTest.run((template, store, redis) -> {
			template.send(DelayMessage.builder(TOPIC, "x").id("d1").build());
			Transitions.promote(store, TOPIC, 10);
			ClaimedMessage first = Transitions.claim(store, TOPIC, 1, LEASE).get(0);
			Transitions.retry(store, TOPIC, "d1", first.leaseToken(), Duration.ZERO, "first failure");
			Transitions.promote(store, TOPIC, 10);
			ClaimedMessage second = Transitions.claim(store, TOPIC, 1, LEASE).get(0);
			assertThat(Transitions.deadLetter(store, TOPIC, "d1", second.leaseToken(), "final failure")).isTrue();
			store.replayDead(TOPIC, List.of("d1"));
			Transitions.promote(store, TOPIC, 10);
			ClaimedMessage replayed = Transitions.claim(store, TOPIC, 1, LEASE).get(0);
			StoredMessage message = MessageFormat.decode("d1", replayed.stored());
			assertThat(message.attempts()).isZero();
			assertThat(message.headers().get(MessageFormat.ERROR_HEADER)).as("previous error after a replay").isNull();
		});
	}

	@Test
	void aLeaseExpiryLeavesItsOwnErrorForTheNextDelivery() {
		ScriptTest.run((template, store, redis) -> {
			template.send(DelayMessage.builder(TOPIC, "x").id("e1").build());
			Transitions.promote(store, TOPIC, 10);
			Transitions.claim(store, TOPIC, 1, Duration.ZERO);
			Transitions.expireLeases(store, TOPIC, 10, 5);
			ClaimedMessage again = Transitions.claim(store, TOPIC, 1, LEASE).get(0);
			StoredMessage message = MessageFormat.decode("e1", again.stored());
			assertThat(message.headers().get(MessageFormat.ERROR_HEADER)).as("previous error after a lease expiry")
				.isEqualTo("lease expired on attempt 1 of 5");
		});
	}

	@Test
	void anOldInstanceSeesTheReservedHeadersAsPlainHeaders() {
		ScriptTest.run((template, store, redis) -> {
			template.send(DelayMessage.builder(TOPIC, "x").id("o1").priority(4).header("tenant", "acme").build());
			Transitions.promote(store, TOPIC, 10);
			ClaimedMessage first = Transitions.claim(store, TOPIC, 1, LEASE).get(0);
			Transitions.retry(store, TOPIC, "o1", first.leaseToken(), Duration.ZERO, "boom");
			Transitions.promote(store, TOPIC, 10);
			ClaimedMessage again = Transitions.claim(store, TOPIC, 1, LEASE).get(0);
			// An older instance passes the stored headers as they are to
			// Delivery.headers().
			assertThat(MessageFormat.decode("o1", again.stored()).headers()).containsExactly(
					Map.entry("tenant", "acme"), Map.entry(MessageFormat.PRIORITY_HEADER, "4"),
					Map.entry(MessageFormat.ERROR_HEADER, "boom"));
		});
	}

	private static ClaimedMessage claimWithBody(DelayQueueTemplate template, RedisMessageStore store,
			StringRedisTemplate redis, String id, byte[] body) {
		return claimWithBody(template, store, redis, id, body, LEASE);
	}

	private static ClaimedMessage claimWithBody(DelayQueueTemplate template, RedisMessageStore store,
			StringRedisTemplate redis, String id, byte[] body, Duration lease) {
		template.send(DelayMessage.builder(TOPIC, "x").id(id).build());
		Transitions.promote(store, TOPIC, 10);
		List<ClaimedMessage> claimed = Transitions.claim(store, TOPIC, 1, lease);
		assertThat(claimed).extracting(ClaimedMessage::id).containsExactly(id);
		ByteArrayOutputStream stored = new ByteArrayOutputStream();
		stored.writeBytes("0:1:".getBytes(StandardCharsets.US_ASCII));
		stored.writeBytes(body);
		byte[] key = store.keys(TOPIC).messages().getBytes(StandardCharsets.UTF_8);
		redis.execute((RedisCallback<Boolean>) (connection) -> connection.hashCommands()
			.hSet(key, id.getBytes(StandardCharsets.UTF_8), stored.toByteArray()));
		return claimed.get(0);
	}

	private static byte[] raw(RedisMessageStore store, StringRedisTemplate redis, String id) {
		byte[] key = store.keys(TOPIC).messages().getBytes(StandardCharsets.UTF_8);
		byte[] value = redis.execute((RedisCallback<byte[]>) (connection) -> connection.hashCommands()
			.hGet(key, id.getBytes(StandardCharsets.UTF_8)));
		assertThat(value).as("stored message " + id).isNotNull();
		return value;
	}

	/** The body after the "<attempts>:<due>:" prefix. */
	private static String bodyOf(byte[] stored) {
		String text = new String(stored, StandardCharsets.ISO_8859_1);
		int p1 = text.indexOf(':');
		int p2 = text.indexOf(':', p1 + 1);
		return text.substring(p2 + 1);
	}

	private static boolean decodes(byte[] body) {
		ByteArrayOutputStream stored = new ByteArrayOutputStream();
		stored.writeBytes("0:1:".getBytes(StandardCharsets.US_ASCII));
		stored.writeBytes(body);
		try {
			MessageFormat.decode("x", stored.toByteArray());
			return true;
		}
		catch (CorruptMessageException ex) {
			return false;
		}
	}

}

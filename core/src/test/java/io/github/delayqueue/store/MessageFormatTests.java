package io.github.delayqueue.store;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Random;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.fail;

/**
 * The stored form of messages: {@link MessageFormat#encodeBody} and
 * {@link MessageFormat#decode}.
 */
class MessageFormatTests {

	private static final long DUE = 1_700_000_000_123L;

	@Test
	void bodyWithoutHeadersAndWithTextPayloadRoundTrips() {
		byte[] payload = "hello".getBytes(StandardCharsets.UTF_8);
		StoredMessage message = MessageFormat.decode("id-1",
				stored(0, DUE, MessageFormat.encodeBody(Map.of(), payload)));
		assertThat(message.id()).isEqualTo("id-1");
		assertThat(message.attempts()).isZero();
		assertThat(message.dueAtMillis()).isEqualTo(DUE);
		assertThat(message.headers()).isEmpty();
		assertThat(message.payload()).isEqualTo(payload);
	}

	@Test
	void bodyOfVersionOneStartsWithTheVersionAndTheHeaderCount() {
		byte[] body = MessageFormat.encodeBody(Map.of("a", "bc"), "xyz".getBytes(StandardCharsets.UTF_8));
		assertThat(new String(body, StandardCharsets.UTF_8)).isEqualTo("1:1:1:a2:bcxyz");
	}

	@Test
	void headersWithUnicodeAndColonsInNamesAndValuesRoundTripInOrder() {
		Map<String, String> headers = new LinkedHashMap<>();
		headers.put("tenant", "acme");
		headers.put("trace:id", "a:b:c:");
		headers.put(":", "::");
		headers.put("grüße", "日本語 ✓ 🚀");
		headers.put("", "");
		headers.put("12", "34:");
		headers.put("empty-value", "");
		headers.put("multi\nline", "line1\r\nline2");
		byte[] payload = "payload:with:colons".getBytes(StandardCharsets.UTF_8);
		StoredMessage message = MessageFormat.decode("id", stored(3, DUE, MessageFormat.encodeBody(headers, payload)));
		assertThat(message.attempts()).isEqualTo(3);
		assertThat(message.headers()).containsExactlyEntriesOf(headers);
		assertThat(message.payload()).isEqualTo(payload);
	}

	@Test
	void emptyPayloadRoundTrips() {
		StoredMessage message = MessageFormat.decode("id",
				stored(0, DUE, MessageFormat.encodeBody(Map.of("k", "v"), new byte[0])));
		assertThat(message.headers()).containsExactly(Map.entry("k", "v"));
		assertThat(message.payload()).isEmpty();
	}

	@Test
	void binaryPayloadWithEveryByteValueRoundTrips() {
		byte[] payload = new byte[512];
		for (int i = 0; i < payload.length; i++) {
			payload[i] = (byte) i;
		}
		StoredMessage message = MessageFormat.decode("id",
				stored(1, DUE, MessageFormat.encodeBody(Map.of("content-type", "application/octet-stream"), payload)));
		assertThat(message.payload()).isEqualTo(payload);
	}

	@Test
	void payloadThatLooksLikeTheFormatItselfRoundTrips() {
		byte[] payload = "1:2:3:abc4:defg".getBytes(StandardCharsets.UTF_8);
		StoredMessage message = MessageFormat.decode("id", stored(0, DUE, MessageFormat.encodeBody(Map.of(), payload)));
		assertThat(message.headers()).isEmpty();
		assertThat(message.payload()).isEqualTo(payload);
	}

	@Test
	void randomHeadersAndPayloadsRoundTrip() {
		Random random = new Random(7);
		for (int n = 0; n < 2_000; n++) {
			Map<String, String> headers = new LinkedHashMap<>();
			int count = random.nextInt(6);
			for (int h = 0; h < count; h++) {
				headers.put(randomText(random), randomText(random));
			}
			byte[] payload = new byte[random.nextInt(64)];
			random.nextBytes(payload);
			int attempts = random.nextInt(Integer.MAX_VALUE);
			long due = Math.floorMod(random.nextLong(), 100_000_000_000_000L);
			StoredMessage message = MessageFormat.decode("id-" + n,
					stored(attempts, due, MessageFormat.encodeBody(headers, payload)));
			assertThat(message.attempts()).isEqualTo(attempts);
			assertThat(message.dueAtMillis()).isEqualTo(due);
			assertThat(message.headers()).containsExactlyEntriesOf(headers);
			assertThat(message.payload()).isEqualTo(payload);
		}
	}

	@Test
	void decodedHeadersAreUnmodifiable() {
		StoredMessage message = MessageFormat.decode("id",
				stored(0, DUE, MessageFormat.encodeBody(Map.of("k", "v"), new byte[0])));
		assertThatExceptionOfType(UnsupportedOperationException.class)
			.isThrownBy(() -> message.headers().put("other", "value"));
	}

	@Test
	void attemptsAndDueTimeRewrittenByScriptsAreRead() {
		byte[] body = MessageFormat.encodeBody(Map.of(), "x".getBytes(StandardCharsets.UTF_8));
		StoredMessage message = MessageFormat.decode("id", stored(Integer.MAX_VALUE, 0, body));
		assertThat(message.attempts()).isEqualTo(Integer.MAX_VALUE);
		assertThat(message.dueAtMillis()).isZero();
	}

	@Test
	void attemptsBeyondIntegerRangeAreCorrupt() {
		byte[] body = MessageFormat.encodeBody(Map.of(), new byte[0]);
		assertThatExceptionOfType(CorruptMessageException.class)
			.isThrownBy(() -> MessageFormat.decode("id", stored(Integer.MAX_VALUE + 1L, DUE, body)))
			.withMessageContaining("attempts");
	}

	@Test
	void unknownFormatVersionIsCorrupt() {
		assertThatExceptionOfType(CorruptMessageException.class)
			.isThrownBy(() -> MessageFormat.decode("id", ascii("0:" + DUE + ":2:0:payload")))
			.withMessageContaining("version");
	}

	@Test
	void malformedValuesAreCorrupt() {
		String[] malformed = { "", ":", "0", "0:", "0:1", "0:1:", "0:1:1", "0:1:1:", "::1:0:", "a:1:1:0:", "0:-5:1:0:",
				"-1:5:1:0:", "0:1:1:1:", "0:1:1:1:5:abc", "0:1:1:x:", "0:1:1:2:1:a", "0:1:1:1:1:a", "0:1:1:1:99:a1:b",
				"0:1:1:" + "9".repeat(19) + ":", "0:" + "1".repeat(19) + ":1:0:" };
		for (String value : malformed) {
			assertThatExceptionOfType(CorruptMessageException.class).as("decode of \"%s\"", value)
				.isThrownBy(() -> MessageFormat.decode("id", ascii(value)));
		}
	}

	@Test
	void decodeOfRandomBytesReturnsOrThrowsCorruptMessageExceptionOnly() {
		Random random = new Random(20240601L);
		int decoded = 0;
		for (int n = 0; n < 20_000; n++) {
			byte[] bytes = new byte[random.nextInt(48)];
			random.nextBytes(bytes);
			if (decodes(bytes)) {
				decoded++;
			}
		}
		assertThat(decoded).as("random bytes are almost never a message").isLessThan(100);
	}

	@Test
	void decodeOfRandomBytesFromTheFormatsAlphabetReturnsOrThrowsCorruptMessageExceptionOnly() {
		byte[] alphabet = "0123456789:1:::9x\u00ff".getBytes(StandardCharsets.ISO_8859_1);
		Random random = new Random(42);
		int decoded = 0;
		for (int n = 0; n < 50_000; n++) {
			byte[] bytes = new byte[random.nextInt(40)];
			for (int i = 0; i < bytes.length; i++) {
				bytes[i] = alphabet[random.nextInt(alphabet.length)];
			}
			if (decodes(bytes)) {
				decoded++;
			}
		}
		assertThat(decoded).as("some of these bytes are messages").isPositive();
	}

	@Test
	void decodeOfEveryTruncationOfAValidMessageReturnsOrThrowsCorruptMessageExceptionOnly() {
		Map<String, String> headers = new LinkedHashMap<>();
		headers.put("tenant", "acme");
		headers.put("grüße:name", "日本語 ✓");
		headers.put("", "");
		byte[] valid = stored(12, DUE, MessageFormat.encodeBody(headers, "payload ✓".getBytes(StandardCharsets.UTF_8)));
		int headerEnd = valid.length - "payload ✓".getBytes(StandardCharsets.UTF_8).length;
		for (int length = 0; length <= valid.length; length++) {
			byte[] truncated = Arrays.copyOf(valid, length);
			boolean decodes = decodes(truncated);
			assertThat(decodes).as("truncation to %d of %d bytes decodes", length, valid.length)
				.isEqualTo(length >= headerEnd);
		}
	}

	@Test
	void decodeOfAValidMessageWithRandomByteChangesReturnsOrThrowsCorruptMessageExceptionOnly() {
		Map<String, String> headers = new LinkedHashMap<>();
		headers.put("tenant", "acme");
		headers.put("trace:id", "12:34");
		byte[] valid = stored(2, DUE, MessageFormat.encodeBody(headers, new byte[] { 0, 1, 2, (byte) 0xff }));
		Random random = new Random(99);
		for (int n = 0; n < 20_000; n++) {
			byte[] changed = valid.clone();
			int changes = 1 + random.nextInt(3);
			for (int c = 0; c < changes; c++) {
				changed[random.nextInt(changed.length)] = (byte) random.nextInt(256);
			}
			decodes(changed);
			byte[] spliced = Arrays.copyOfRange(changed, random.nextInt(changed.length), changed.length);
			decodes(spliced);
		}
	}

	private static boolean decodes(byte[] bytes) {
		try {
			StoredMessage message = MessageFormat.decode("id", bytes);
			assertThat(message.attempts()).isNotNegative();
			assertThat(message.headers()).isNotNull();
			assertThat(message.payload()).isNotNull();
			return true;
		}
		catch (CorruptMessageException ex) {
			return false;
		}
		catch (RuntimeException ex) {
			fail("decode of " + Arrays.toString(bytes) + " threw " + ex, ex);
			return false;
		}
	}

	private static byte[] stored(long attempts, long due, byte[] body) {
		ByteArrayOutputStream out = new ByteArrayOutputStream();
		out.writeBytes((attempts + ":" + due + ":").getBytes(StandardCharsets.US_ASCII));
		out.writeBytes(body);
		return out.toByteArray();
	}

	private static byte[] ascii(String text) {
		return text.getBytes(StandardCharsets.ISO_8859_1);
	}

	private static String randomText(Random random) {
		StringBuilder text = new StringBuilder();
		int length = random.nextInt(8);
		String characters = "ab:1 é日✓";
		for (int i = 0; i < length; i++) {
			text.append(characters.charAt(random.nextInt(characters.length())));
		}
		if (random.nextInt(10) == 0) {
			text.appendCodePoint(0x1F680);
		}
		return text.toString();
	}

}

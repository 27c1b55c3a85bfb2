package io.github.delayqueue.actuate;

import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CoderResult;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Base64;

import io.github.delayqueue.actuate.DelayQueueEndpoint.MessageDescriptor;
import io.github.delayqueue.store.MessageFormat;
import io.github.delayqueue.store.MessageSnapshot;
import io.github.delayqueue.store.MessageState;
import io.github.delayqueue.store.StoredMessage;
import org.jspecify.annotations.Nullable;

import static io.github.delayqueue.actuate.DelayQueueEndpoint.MAX_PAYLOAD_BYTES;
import static io.github.delayqueue.actuate.EndpointReplies.instant;
import static io.github.delayqueue.actuate.EndpointReplies.stateName;

/**
 * One message as the {@code delayqueue} endpoint shows it: its headers and the first
 * {@value DelayQueueEndpoint#MAX_PAYLOAD_BYTES} bytes of its payload, as UTF-8 text when
 * they are, else in Base64; for a corrupt message, the start of what is stored.
 */
final class MessageReplies {

	private MessageReplies() {
	}

	/**
	 * A message that could be read.
	 * @param topic the topic
	 * @param snapshot what was read of it
	 * @param message the message decoded from it
	 * @param payloadSize the size of its whole payload in bytes
	 * @return the reply
	 */
	static MessageDescriptor of(String topic, MessageSnapshot snapshot, StoredMessage message, long payloadSize) {
		byte[] payload = message.payload();
		byte[] shown = (payload.length > MAX_PAYLOAD_BYTES) ? Arrays.copyOf(payload, MAX_PAYLOAD_BYTES) : payload;
		boolean truncated = payloadSize > shown.length;
		String text = utf8(shown, truncated);
		return new MessageDescriptor(topic, snapshot.id(), stateName(snapshot.state()), instant(message.dueAtMillis()),
				message.attempts(), snapshot.priority(), message.headers().get(MessageFormat.GROUP_HEADER),
				leaseDeadline(snapshot), deadSince(snapshot),
				(snapshot.lastError() != null) ? snapshot.lastError()
						: message.headers().get(MessageFormat.ERROR_HEADER),
				MessageFormat.userHeaders(message.headers()), text,
				(text != null) ? null : Base64.getEncoder().encodeToString(shown), payloadSize, truncated, null, null);
	}

	/**
	 * A message whose stored form cannot be decoded.
	 * @param topic the topic
	 * @param snapshot what was read of it
	 * @param problem why it cannot be decoded
	 * @return the reply
	 */
	static MessageDescriptor corrupt(String topic, MessageSnapshot snapshot, String problem) {
		byte[] stored = snapshot.storedPrefix();
		byte[] shown = (stored.length > MAX_PAYLOAD_BYTES) ? Arrays.copyOf(stored, MAX_PAYLOAD_BYTES) : stored;
		boolean truncated = snapshot.storedLength() > shown.length;
		String text = utf8(shown, truncated);
		return new MessageDescriptor(topic, snapshot.id(), stateName(snapshot.state()), null, null, snapshot.priority(),
				null, leaseDeadline(snapshot), deadSince(snapshot), snapshot.lastError(), null, text,
				(text != null) ? null : Base64.getEncoder().encodeToString(shown), snapshot.storedLength(), truncated,
				"stored message is corrupt: " + problem, null);
	}

	/**
	 * A message longer than an inspection reads.
	 * @param topic the topic
	 * @param snapshot what was read of it: its length
	 * @return the reply
	 */
	static MessageDescriptor tooLong(String topic, MessageSnapshot snapshot) {
		return new MessageDescriptor(topic, snapshot.id(), stateName(snapshot.state()), null, null, snapshot.priority(),
				null, leaseDeadline(snapshot), deadSince(snapshot), snapshot.lastError(), null, null, null,
				snapshot.storedLength(), true, null,
				"the stored message has " + snapshot.storedLength() + " bytes, more than the "
						+ MessageSnapshot.MAX_READ_BYTES + " an inspection reads: too large to show");
	}

	private static @Nullable String leaseDeadline(MessageSnapshot snapshot) {
		return (snapshot.state() == MessageState.IN_FLIGHT) ? instant(snapshot.score()) : null;
	}

	private static @Nullable String deadSince(MessageSnapshot snapshot) {
		return (snapshot.state() == MessageState.DEAD) ? instant(snapshot.score()) : null;
	}

	/**
	 * Decodes UTF-8, tolerating a character cut at the end of truncated bytes.
	 * @return the text, or {@code null} if the bytes are not UTF-8
	 */
	private static @Nullable String utf8(byte[] bytes, boolean truncated) {
		CharsetDecoder decoder = StandardCharsets.UTF_8.newDecoder()
			.onMalformedInput(CodingErrorAction.REPORT)
			.onUnmappableCharacter(CodingErrorAction.REPORT);
		CharBuffer out = CharBuffer.allocate(bytes.length);
		CoderResult result = decoder.decode(ByteBuffer.wrap(bytes), out, !truncated);
		if (result.isError() || (!truncated && decoder.flush(out).isError())) {
			return null;
		}
		return out.flip().toString();
	}

}

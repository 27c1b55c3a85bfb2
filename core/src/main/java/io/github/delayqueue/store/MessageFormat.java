package io.github.delayqueue.store;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The stored form of a message, the value of its field in the topic's messages hash:
 * {@code <attempts>:<due ms>:<body>}. Scripts read and rewrite only the two leading
 * numbers; the body is written once by the producer: {@code 1:<header count>:} (format
 * version 1), then per header {@code <name length>:<name><value length>:<value>} (UTF-8
 * byte lengths), then the payload bytes.
 *
 * <p>
 * Headers whose names start with {@value #RESERVED_HEADER_PREFIX} are the queue's own,
 * never a sender's: {@value #PRIORITY_HEADER} (written by the producer for a priority
 * above 0), {@value #GROUP_HEADER} (written by the producer for a message of a group;
 * read by the replay script to put a dead letter back in its group),
 * {@value #DEDUPLICATION_HEADER} (the deduplication window in ms, written by the
 * producer; read by the ack script), {@value #ERROR_HEADER} (the error of the last failed
 * attempt, written by the retry script) and, on a message of a dead-letter queue,
 * {@value #DEAD_ID_HEADER}, {@value #DEAD_ERROR_HEADER} and
 * {@value #DEAD_ATTEMPTS_HEADER} (written by the scripts that dead-letter a message).
 * {@link #userHeaders(Map)} leaves them out.
 */
public final class MessageFormat {

	/** The start of the names of the queue's own headers. */
	public static final String RESERVED_HEADER_PREFIX = "delay-queue-";

	/** The header of a message's priority, when above 0. */
	public static final String PRIORITY_HEADER = RESERVED_HEADER_PREFIX + "priority";

	/** The header of a message's group, for a message sent in one. */
	public static final String GROUP_HEADER = RESERVED_HEADER_PREFIX + "group";

	/** The header of a message's deduplication window, in milliseconds. */
	public static final String DEDUPLICATION_HEADER = RESERVED_HEADER_PREFIX + "dedupe-ms";

	/** The header of the error of a message's last failed attempt. */
	public static final String ERROR_HEADER = RESERVED_HEADER_PREFIX + "error";

	/**
	 * The header of a dead letter's id on its topic, in the topic's dead-letter queue.
	 */
	public static final String DEAD_ID_HEADER = RESERVED_HEADER_PREFIX + "dead-id";

	/** The header of a dead letter's last error, in the topic's dead-letter queue. */
	public static final String DEAD_ERROR_HEADER = RESERVED_HEADER_PREFIX + "dead-error";

	/**
	 * The header of the attempts made of a dead letter, in the topic's dead-letter queue.
	 */
	public static final String DEAD_ATTEMPTS_HEADER = RESERVED_HEADER_PREFIX + "dead-attempts";

	private static final byte SEPARATOR = ':';

	private static final byte VERSION = '1';

	private MessageFormat() {
	}

	/**
	 * Encodes the body of a new message.
	 * @param headers the headers
	 * @param payload the payload bytes
	 * @return the body
	 */
	public static byte[] encodeBody(Map<String, String> headers, byte[] payload) {
		ByteArrayOutputStream out = new ByteArrayOutputStream(payload.length + 8 + 16 * headers.size());
		out.write(VERSION);
		out.write(SEPARATOR);
		writeNumber(out, headers.size());
		for (Map.Entry<String, String> header : headers.entrySet()) {
			writeText(out, header.getKey());
			writeText(out, header.getValue());
		}
		out.writeBytes(payload);
		return out.toByteArray();
	}

	/**
	 * Decodes a stored message.
	 * @param id the message id
	 * @param stored the stored value
	 * @return the message
	 * @throws CorruptMessageException if the value is not in the stored format
	 */
	public static StoredMessage decode(String id, byte[] stored) {
		Reader reader = new Reader(stored);
		long attempts = reader.number();
		long dueAt = reader.number();
		if (reader.next() != VERSION || reader.next() != SEPARATOR) {
			throw new CorruptMessageException("unknown format version");
		}
		long count = reader.number();
		Map<String, String> headers = new LinkedHashMap<>();
		for (long i = 0; i < count; i++) {
			headers.put(reader.text(), reader.text());
		}
		if (attempts > Integer.MAX_VALUE) {
			throw new CorruptMessageException("attempts out of range: " + attempts);
		}
		return new StoredMessage(id, (int) attempts, dueAt, Collections.unmodifiableMap(headers), reader.rest());
	}

	/**
	 * Reads only the due time of a stored message.
	 * @param stored the stored value
	 * @return the due time (epoch ms), or -1 if the header is unreadable
	 */
	public static long dueAtMillis(byte[] stored) {
		try {
			Reader reader = new Reader(stored);
			reader.number();
			return reader.number();
		}
		catch (CorruptMessageException ex) {
			return -1;
		}
	}

	/**
	 * The headers a sender gave, without the queue's own.
	 * @param headers a message's headers
	 * @return the sender's headers, unmodifiable, in their order
	 */
	public static Map<String, String> userHeaders(Map<String, String> headers) {
		boolean reserved = false;
		for (String name : headers.keySet()) {
			reserved |= name.startsWith(RESERVED_HEADER_PREFIX);
		}
		if (!reserved) {
			return headers;
		}
		Map<String, String> user = new LinkedHashMap<>();
		headers.forEach((name, value) -> {
			if (!name.startsWith(RESERVED_HEADER_PREFIX)) {
				user.put(name, value);
			}
		});
		return Collections.unmodifiableMap(user);
	}

	/**
	 * The priority a message was sent with.
	 * @param headers its headers
	 * @return 0 to 9; 0 when the header is absent or not a priority
	 */
	public static int priority(Map<String, String> headers) {
		String value = headers.get(PRIORITY_HEADER);
		return (value != null && value.length() == 1 && value.charAt(0) >= '0' && value.charAt(0) <= '9')
				? value.charAt(0) - '0' : 0;
	}

	private static void writeNumber(ByteArrayOutputStream out, long number) {
		out.writeBytes(Long.toString(number).getBytes(StandardCharsets.US_ASCII));
		out.write(SEPARATOR);
	}

	private static void writeText(ByteArrayOutputStream out, String text) {
		byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
		writeNumber(out, bytes.length);
		out.writeBytes(bytes);
	}

	private static final class Reader {

		private final byte[] bytes;

		private int position;

		Reader(byte[] bytes) {
			this.bytes = bytes;
		}

		byte next() {
			if (this.position >= this.bytes.length) {
				throw new CorruptMessageException("truncated at byte " + this.position);
			}
			return this.bytes[this.position++];
		}

		long number() {
			long value = 0;
			int digits = 0;
			byte b;
			while ((b = next()) != SEPARATOR) {
				if (b < '0' || b > '9' || digits == 18) {
					throw new CorruptMessageException("not a number at byte " + (this.position - 1));
				}
				value = value * 10 + (b - '0');
				digits++;
			}
			if (digits == 0) {
				throw new CorruptMessageException("empty number at byte " + (this.position - 1));
			}
			return value;
		}

		String text() {
			long length = number();
			if (length > this.bytes.length - this.position) {
				throw new CorruptMessageException("header longer than the message at byte " + this.position);
			}
			String text = new String(this.bytes, this.position, (int) length, StandardCharsets.UTF_8);
			this.position += (int) length;
			return text;
		}

		byte[] rest() {
			byte[] rest = new byte[this.bytes.length - this.position];
			System.arraycopy(this.bytes, this.position, rest, 0, rest.length);
			return rest;
		}

	}

}

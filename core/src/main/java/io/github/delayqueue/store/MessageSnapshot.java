package io.github.delayqueue.store;

import org.jspecify.annotations.Nullable;

/**
 * One message as found by {@link MessageStore#inspect(String, String, int)}: its state
 * and the start of its stored form, to decode with
 * {@link MessageFormat#decode(String, byte[])}.
 *
 * @param id the message id
 * @param state its state
 * @param score due time when scheduled, lease deadline when in flight, time of death when
 * dead (epoch ms); -1 when ready
 * @param storedLength the length of the whole stored message in bytes
 * @param storedPrefix the first bytes of the stored message, all of them when
 * {@code storedPrefix.length == storedLength}; empty when the stored message is longer
 * than {@link #MAX_READ_BYTES}, which is never read
 * @param lastError the last error, for a dead message
 * @param priority its priority, 0 to 9 (0 when sent without one)
 */
public record MessageSnapshot(String id, MessageState state, long score, long storedLength, byte[] storedPrefix,
		@Nullable String lastError, int priority) {

	/**
	 * The longest stored message the operations' reads load, 1 MiB: a longer one is never
	 * read (a page gives no attempts or due time for it, an inspection only its length),
	 * so that a huge value written by something else never holds Redis or the connection
	 * the application sends on.
	 */
	public static final int MAX_READ_BYTES = 1 << 20;

	/**
	 * @return whether the stored message is too long to be read at all: longer than
	 * {@link #MAX_READ_BYTES}
	 */
	public boolean tooLongToRead() {
		return this.storedLength > MAX_READ_BYTES;
	}

	/**
	 * @return whether {@link #storedPrefix()} holds the whole stored message
	 */
	public boolean complete() {
		return this.storedPrefix.length >= this.storedLength;
	}

}

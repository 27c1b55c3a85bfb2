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
 * {@code storedPrefix.length == storedLength}
 * @param lastError the last error, for a dead message
 * @param priority its priority, 0 to 9 (0 when sent without one)
 */
public record MessageSnapshot(String id, MessageState state, long score, long storedLength, byte[] storedPrefix,
		@Nullable String lastError, int priority) {

	/**
	 * @return whether {@link #storedPrefix()} holds the whole stored message
	 */
	public boolean complete() {
		return this.storedPrefix.length >= this.storedLength;
	}

}

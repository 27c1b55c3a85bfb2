package io.github.delayqueue.producer;

import java.util.Locale;

/**
 * Rules for message ids. An id is written to Redis as UTF-8 and to logs as it is, so it
 * must not be blank or too long, must not contain control characters (which could forge
 * log lines) and must not contain unpaired surrogates (which all encode to the same
 * replacement bytes, so that two different ids would collide in Redis).
 */
public final class MessageIds {

	private MessageIds() {
	}

	/**
	 * Checks a message id and returns it.
	 * @param id the message id
	 * @return the same id
	 * @throws InvalidMessageException naming the problem when the id is not usable
	 */
	public static String requireValid(String id) {
		if (id == null || id.isBlank()) {
			throw new InvalidMessageException("Message id must not be null or blank");
		}
		if (id.length() > DelayMessage.MAX_ID_LENGTH) {
			throw new InvalidMessageException(
					"Message id must be at most " + DelayMessage.MAX_ID_LENGTH + " characters, but has " + id.length());
		}
		for (int i = 0; i < id.length(); i++) {
			char c = id.charAt(i);
			if (Character.isISOControl(c)) {
				throw new InvalidMessageException(String.format(Locale.ROOT,
						"Message id must not contain control characters, but has U+%04X at index %d", (int) c, i));
			}
			if (Character.isHighSurrogate(c) && i + 1 < id.length() && Character.isLowSurrogate(id.charAt(i + 1))) {
				i++;
			}
			else if (Character.isSurrogate(c)) {
				throw new InvalidMessageException(String.format(Locale.ROOT,
						"Message id must not contain an unpaired surrogate, but has U+%04X at index %d", (int) c, i));
			}
		}
		return id;
	}

}

package io.github.delayqueue.store;

/**
 * The one bound of every error text the store keeps with a message (a failed attempt's
 * error for the next delivery, a dead letter's last error, and both of them in its copy
 * in the dead-letter queue): at most {@value TopicStore#MAX_ERROR_LENGTH} characters, cut
 * between code points, never inside a surrogate pair.
 */
public final class ErrorTexts {

	private ErrorTexts() {
	}

	/**
	 * An error text as the store keeps it.
	 * @param error the error text
	 * @return its first {@value TopicStore#MAX_ERROR_LENGTH} characters, one fewer when
	 * the last of them would be the first half of a surrogate pair; the text itself when
	 * it is not longer
	 */
	public static String bounded(String error) {
		int max = TopicStore.MAX_ERROR_LENGTH;
		if (error.length() <= max) {
			return error;
		}
		int end = Character.isHighSurrogate(error.charAt(max - 1)) ? max - 1 : max;
		return error.substring(0, end);
	}

}

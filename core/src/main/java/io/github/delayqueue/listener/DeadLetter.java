package io.github.delayqueue.listener;

import java.util.Map;

import io.github.delayqueue.store.MessageFormat;
import org.jspecify.annotations.Nullable;

/**
 * What a listener of a topic's dead letters ({@link DelayListener#deadLetters()}) learns
 * of how a message died.
 *
 * @param id the message's id on its topic (the delivery's own id is that id, or
 * {@code <id>~<time>} when an earlier dead letter of the id was still in the queue)
 * @param error its last error: the exception's class and message (its first 2000
 * characters, cut between code points), or {@code lease expired on attempt n of m}
 * @param attempts the attempts made
 */
public record DeadLetter(String id, String error, int attempts) {

	/**
	 * Reads the dead-letter headers of a message of a dead-letter queue.
	 * @param headers the message's headers
	 * @return what they say, or {@code null} for a message without them
	 */
	static @Nullable DeadLetter of(Map<String, String> headers) {
		String id = headers.get(MessageFormat.DEAD_ID_HEADER);
		String error = headers.get(MessageFormat.DEAD_ERROR_HEADER);
		String attempts = headers.get(MessageFormat.DEAD_ATTEMPTS_HEADER);
		if (id == null || error == null || attempts == null) {
			return null;
		}
		try {
			return new DeadLetter(id, error, Integer.parseInt(attempts));
		}
		catch (NumberFormatException ex) {
			return null;
		}
	}

}

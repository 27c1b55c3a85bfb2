package io.github.delayqueue.producer;

import java.util.Locale;

import io.github.delayqueue.store.TopicPartitions;

/**
 * Rules for topic names. A topic becomes part of Redis keys inside a {@code {hash tag}},
 * so it must not contain braces, whitespace or unpaired surrogates (which all encode to
 * the same replacement bytes, so that two names would share keys) and must stay short;
 * {@code #} is kept for the names of a topic's partitions ({@code <topic>#<n>}) and of
 * its dead-letter queue ({@code <topic>#dead}).
 */
public final class Topics {

	/** Longest topic name accepted, in characters. */
	public static final int MAX_LENGTH = 200;

	private Topics() {
	}

	/**
	 * Checks a topic name and returns it.
	 * @param topic the topic name
	 * @return the same topic name
	 * @throws InvalidMessageException naming the problem when the topic is not usable
	 */
	public static String requireValid(String topic) {
		if (topic == null || topic.isBlank()) {
			throw new InvalidMessageException("Topic must not be null or blank");
		}
		if (topic.length() > MAX_LENGTH) {
			throw new InvalidMessageException(
					"Topic must be at most " + MAX_LENGTH + " characters, but has " + topic.length());
		}
		for (int i = 0; i < topic.length(); i++) {
			char c = topic.charAt(i);
			if (c == '{' || c == '}') {
				throw new InvalidMessageException("Topic '" + topic + "' must not contain '{' or '}'");
			}
			if (c == '#') {
				throw new InvalidMessageException(
						"Topic '" + topic + "' must not contain '#', which names the partitions of a topic");
			}
			if (Character.isWhitespace(c) || Character.isSpaceChar(c) || Character.isISOControl(c)) {
				throw new InvalidMessageException("Topic '" + topic + "' must not contain whitespace");
			}
			if (Character.isHighSurrogate(c) && i + 1 < topic.length()
					&& Character.isLowSurrogate(topic.charAt(i + 1))) {
				i++;
			}
			else if (Character.isSurrogate(c)) {
				throw new InvalidMessageException(String.format(Locale.ROOT,
						"Topic must not contain an unpaired surrogate (it would share its keys with other names),"
								+ " but has U+%04X at index %d",
						(int) c, i));
			}
		}
		return topic;
	}

	/**
	 * Checks the name of a topic, or of a topic's dead-letter queue
	 * ({@code <topic>#dead}, see {@link TopicPartitions#deadLettersOf(String)}), and
	 * returns it.
	 * @param topic the name
	 * @return the same name
	 * @throws InvalidMessageException naming the problem when it names neither
	 */
	public static String requireValidOrDeadLetters(String topic) {
		if (topic != null && TopicPartitions.isDeadLetters(topic)) {
			requireValid(TopicPartitions.topicOf(topic));
			if (topic.indexOf(TopicPartitions.SEPARATOR) != topic.length() - TopicPartitions.DEAD_LETTERS.length()) {
				throw new InvalidMessageException("Topic '" + topic + "' names no dead-letter queue: only a topic's"
						+ " own may be named, '<topic>" + TopicPartitions.DEAD_LETTERS + "'");
			}
			return topic;
		}
		return requireValid(topic);
	}

}

package io.github.delayqueue.store;

import java.time.Duration;
import java.time.Instant;

import org.jspecify.annotations.Nullable;

/**
 * A message ready to be stored by a send. Due times are whole milliseconds, rounded up,
 * so that a message is never due before the time it was sent for.
 *
 * @param id the message id
 * @param relative whether {@code when} is a delay in ms from Redis time ({@code true}) or
 * an absolute due time in epoch ms
 * @param when the delay or due time
 * @param body the body from {@link MessageFormat#encodeBody(java.util.Map, byte[])}
 * @param replaceIfPending whether it replaces a stored message of the same id that is
 * still scheduled (its attempts are kept); otherwise such a message is a duplicate
 * @param priority 0 to 9: among due messages, a higher one is claimed first
 * @param deduplicated whether its body carries a deduplication window
 * ({@link MessageFormat#DEDUPLICATION_HEADER}): once handled, its id is remembered that
 * long, and a send of it stores nothing meanwhile
 * @param group the group it belongs to (a tenant, a destination), or {@code null}: claims
 * take from the groups with ready messages in turn
 */
public record NewMessage(String id, boolean relative, long when, byte[] body, boolean replaceIfPending, int priority,
		boolean deduplicated, @Nullable String group) {

	/**
	 * Checks the priority.
	 * @param id the message id
	 * @param relative whether {@code when} is a delay in ms from Redis time
	 * @param when the delay or due time
	 * @param body the body
	 * @param replaceIfPending whether it replaces a pending message of the same id
	 * @param priority 0 to 9
	 * @param deduplicated whether its body carries a deduplication window
	 */
	/** The highest priority; priority 0 messages wait in the ready list itself. */
	public static final int MAX_PRIORITY = 9;

	/** The longest name of a group, in characters. */
	public static final int MAX_GROUP_LENGTH = 200;

	public NewMessage {
		if (priority < 0 || priority > MAX_PRIORITY) {
			throw new IllegalArgumentException(
					"Priority must be between 0 and " + MAX_PRIORITY + ", but was " + priority);
		}
		if (group != null) {
			checkGroup(group);
		}
	}

	/**
	 * A message of no group.
	 * @param id the message id
	 * @param relative whether {@code when} is a delay in ms from Redis time
	 * @param when the delay or due time
	 * @param body the body
	 * @param replaceIfPending whether it replaces a pending message of the same id
	 * @param priority 0 to 9
	 * @param deduplicated whether its body carries a deduplication window
	 */
	public NewMessage(String id, boolean relative, long when, byte[] body, boolean replaceIfPending, int priority,
			boolean deduplicated) {
		this(id, relative, when, body, replaceIfPending, priority, deduplicated, null);
	}

	/**
	 * Checks the name of a group: 1 to {@value #MAX_GROUP_LENGTH} characters, none of
	 * them a control character.
	 * @param group the name
	 * @return the name
	 * @throws IllegalArgumentException naming what is wrong with it
	 */
	public static String checkGroup(String group) {
		if (group.isEmpty() || group.length() > MAX_GROUP_LENGTH) {
			throw new IllegalArgumentException(
					"A group name must have 1 to " + MAX_GROUP_LENGTH + " characters, but had " + group.length());
		}
		for (int i = 0; i < group.length(); i++) {
			if (Character.isISOControl(group.charAt(i))) {
				throw new IllegalArgumentException("A group name must not contain control characters, but '"
						+ group.replaceAll("\\p{Cc}", "?") + "' has one at index " + i);
			}
		}
		return group;
	}

	/**
	 * A message of priority 0.
	 * @param id the message id
	 * @param relative whether {@code when} is a delay in ms from Redis time
	 * @param when the delay or due time
	 * @param body the body
	 * @param replaceIfPending whether it replaces a pending message of the same id
	 */
	public NewMessage(String id, boolean relative, long when, byte[] body, boolean replaceIfPending) {
		this(id, relative, when, body, replaceIfPending, 0, false);
	}

	/**
	 * A message that does not replace a pending one of the same id.
	 * @param id the message id
	 * @param relative whether {@code when} is a delay in ms from Redis time
	 * @param when the delay or due time
	 * @param body the body
	 */
	public NewMessage(String id, boolean relative, long when, byte[] body) {
		this(id, relative, when, body, false, 0, false);
	}

	/**
	 * @return the same message, replacing a pending one of the same id
	 */
	public NewMessage replacingPending() {
		return new NewMessage(this.id, this.relative, this.when, this.body, true, this.priority, this.deduplicated,
				this.group);
	}

	/**
	 * @param priority 0 to 9
	 * @return the same message with that priority
	 */
	public NewMessage withPriority(int priority) {
		return new NewMessage(this.id, this.relative, this.when, this.body, this.replaceIfPending, priority,
				this.deduplicated, this.group);
	}

	/**
	 * @return a copy marked as carrying a deduplication window in its body
	 */
	public NewMessage deduplicating() {
		return new NewMessage(this.id, this.relative, this.when, this.body, this.replaceIfPending, this.priority, true,
				this.group);
	}

	/**
	 * @param delay the delay, zero or positive
	 * @return the same message, due after that delay from the Redis server's clock when
	 * it is sent
	 */
	public NewMessage withDelay(Duration delay) {
		return new NewMessage(this.id, true, ceilMillis(delay), this.body, this.replaceIfPending, this.priority,
				this.deduplicated, this.group);
	}

	/**
	 * @param group the group, checked with {@link #checkGroup(String)}
	 * @return the same message in that group
	 */
	public NewMessage inGroup(String group) {
		return new NewMessage(this.id, this.relative, this.when, this.body, this.replaceIfPending, this.priority,
				this.deduplicated, checkGroup(group));
	}

	/**
	 * A message due after a delay from the Redis server's clock.
	 * @param id the message id
	 * @param delay the delay, zero or positive
	 * @param body the body
	 * @return the message
	 */
	public static NewMessage afterDelay(String id, Duration delay, byte[] body) {
		return new NewMessage(id, true, ceilMillis(delay), body);
	}

	/**
	 * A message due at an instant; any instant before the epoch is simply in the past.
	 * @param id the message id
	 * @param dueAt the due time
	 * @param body the body
	 * @return the message
	 */
	public static NewMessage dueAt(String id, Instant dueAt, byte[] body) {
		long millis = dueAt.isBefore(Instant.EPOCH) ? 0
				: dueAt.toEpochMilli() + ((dueAt.getNano() % 1_000_000 != 0) ? 1 : 0);
		return new NewMessage(id, false, millis, body);
	}

	public static long ceilMillis(Duration duration) {
		long millis = duration.toMillis();
		return duration.minusMillis(millis).isZero() ? millis : millis + 1;
	}

}

package io.github.delayqueue.listener;

import java.time.Duration;
import java.time.Instant;
import java.util.Map;

import org.jspecify.annotations.Nullable;

/**
 * One delivery of a message to a {@link DelayListener} method. Delivery is at least once:
 * use {@link #id()} to make handlers idempotent.
 *
 * @param <T> the payload type
 * @param id the message id, the same on every delivery of the message
 * @param topic the topic
 * @param payload the payload, converted to the listener's type
 * @param dueAt when this delivery was due
 * @param attempt 1 on the first delivery, 2 on the first retry, and so on
 * @param headers the headers sent with the message
 * @param lateness how long after {@code dueAt} the message was claimed, by the Redis
 * clock: a few milliseconds normally, more after an outage, a stop or a backlog
 * @param priority the priority it was sent with, 0 (the default) to 9
 * @param previousError on a retry, the error of the attempt before: the exception's class
 * and message (its first 2000 characters, cut between code points), or {@code lease
 * expired on attempt n of m} after a lease expiry; {@code null} on a first delivery and
 * after a dead letter's replay (on the first delivery of a dead letter to a listener of
 * them, its last error, as {@link DeadLetter#error()})
 * @param deadLetter to a listener of a topic's dead letters, how the message died; else
 * {@code null}
 * @param group the group the message was sent in, such as its tenant or destination
 * ({@link io.github.delayqueue.producer.DelayMessage.Builder#group(String)}), the same on
 * every delivery of the message, and on the delivery of its dead letter to a listener of
 * them; {@code null} for a message sent without one
 */
public record Delivery<T>(String id, String topic, T payload, Instant dueAt, int attempt, Map<String, String> headers,
		Duration lateness, int priority, @Nullable String previousError, @Nullable DeadLetter deadLetter,
		@Nullable String group) {

	/**
	 * A delivery of a message sent without a group.
	 * @param id the message id
	 * @param topic the topic
	 * @param payload the payload
	 * @param dueAt when this delivery was due
	 * @param attempt 1 on the first delivery, 2 on the first retry, and so on
	 * @param headers the headers sent with the message
	 * @param lateness how long after {@code dueAt} the message was claimed
	 * @param priority the priority it was sent with
	 * @param previousError on a retry, the error of the attempt before
	 * @param deadLetter to a listener of a topic's dead letters, how the message died
	 */
	public Delivery(String id, String topic, T payload, Instant dueAt, int attempt, Map<String, String> headers,
			Duration lateness, int priority, @Nullable String previousError, @Nullable DeadLetter deadLetter) {
		this(id, topic, payload, dueAt, attempt, headers, lateness, priority, previousError, deadLetter, null);
	}

	/**
	 * A delivery of a topic's own message (not a dead letter), sent without a group.
	 * @param id the message id
	 * @param topic the topic
	 * @param payload the payload
	 * @param dueAt when this delivery was due
	 * @param attempt 1 on the first delivery, 2 on the first retry, and so on
	 * @param headers the headers sent with the message
	 * @param lateness how long after {@code dueAt} the message was claimed
	 * @param priority the priority it was sent with
	 * @param previousError on a retry, the error of the attempt before
	 */
	public Delivery(String id, String topic, T payload, Instant dueAt, int attempt, Map<String, String> headers,
			Duration lateness, int priority, @Nullable String previousError) {
		this(id, topic, payload, dueAt, attempt, headers, lateness, priority, previousError, null, null);
	}

	/**
	 * A delivery of priority 0 without a previous error or a group, as in a first
	 * delivery: for tests of handlers.
	 * @param id the message id
	 * @param topic the topic
	 * @param payload the payload
	 * @param dueAt when this delivery was due
	 * @param attempt 1 on the first delivery, 2 on the first retry, and so on
	 * @param headers the headers sent with the message
	 * @param lateness how long after {@code dueAt} the message was claimed
	 */
	public Delivery(String id, String topic, T payload, Instant dueAt, int attempt, Map<String, String> headers,
			Duration lateness) {
		this(id, topic, payload, dueAt, attempt, headers, lateness, 0, null, null, null);
	}

}

package io.github.delayqueue.producer;

import java.time.Instant;

/**
 * The outcome of sending one message.
 *
 * @param id the message id, generated or the caller's own
 * @param dueAt when the message is due; for a duplicate, the due time of the message
 * already stored
 * @param duplicate whether a message with this id was already pending or in flight, in
 * which case nothing was changed
 * @param replaced whether the message replaced a scheduled one of the same id (sent with
 * {@link DelayMessage.Builder#replaceIfPending()})
 */
public record SendResult(String id, Instant dueAt, boolean duplicate, boolean replaced) {

	/**
	 * The outcome of a send that replaced nothing.
	 * @param id the message id
	 * @param dueAt when the message is due
	 * @param duplicate whether a message with this id was already pending or in flight
	 */
	public SendResult(String id, Instant dueAt, boolean duplicate) {
		this(id, dueAt, duplicate, false);
	}

}

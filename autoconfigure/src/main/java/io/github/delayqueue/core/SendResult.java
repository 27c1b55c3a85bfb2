package io.github.delayqueue.core;

import java.time.Instant;

/**
 * The outcome of sending one message.
 *
 * @param id the message id, generated or the caller's own
 * @param dueAt when the message is due; for a duplicate, the due time of the message already
 * stored
 * @param duplicate whether a message with this id was already pending or in flight, in which
 * case nothing was changed
 */
public record SendResult(String id, Instant dueAt, boolean duplicate) {
}

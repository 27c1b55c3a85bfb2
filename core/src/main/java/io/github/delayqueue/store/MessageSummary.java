package io.github.delayqueue.store;

import org.jspecify.annotations.Nullable;

/**
 * One message of a page, without its payload.
 *
 * @param id the message id
 * @param state its state
 * @param score the time that orders its state (epoch ms): due time when scheduled, lease
 * deadline when in flight, time of death when dead; -1 when ready
 * @param attempts deliveries that ended without an acknowledgement, -1 if the stored
 * message is gone or its header unreadable
 * @param dueAtMillis its due time (epoch ms), -1 if the stored message is gone or its
 * header unreadable
 * @param lastError the last error, for a dead message
 * @param priority its priority, 0 (the default) to 9 (the most urgent)
 */
public record MessageSummary(String id, MessageState state, long score, int attempts, long dueAtMillis,
		@Nullable String lastError, int priority) {
}

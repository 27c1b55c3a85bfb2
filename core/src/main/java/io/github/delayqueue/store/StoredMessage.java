package io.github.delayqueue.store;

import java.util.Map;

/**
 * A message as read back from Redis.
 *
 * @param id the message id
 * @param attempts deliveries that ended without an acknowledgement so far
 * @param dueAtMillis the current due time (epoch ms)
 * @param headers the headers sent with the message
 * @param payload the payload bytes
 */
public record StoredMessage(String id, int attempts, long dueAtMillis, Map<String, String> headers, byte[] payload) {
}

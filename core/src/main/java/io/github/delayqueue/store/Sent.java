package io.github.delayqueue.store;

/**
 * What a send did with one message.
 *
 * @param id the message id
 * @param dueAtMillis its due time (epoch ms): the new one, or for a duplicate the one it
 * has
 * @param duplicate whether the id already held another message, left unchanged
 * @param replaced whether it replaced a scheduled message of the same id
 */
public record Sent(String id, long dueAtMillis, boolean duplicate, boolean replaced) {
}

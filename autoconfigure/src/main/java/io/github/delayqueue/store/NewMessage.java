package io.github.delayqueue.store;

/**
 * A message ready to be stored by a send.
 *
 * @param id the message id
 * @param relative whether {@code when} is a delay in ms from Redis time ({@code true}) or an
 * absolute due time in epoch ms
 * @param when the delay or due time
 * @param body the body from {@link MessageFormat#encodeBody(java.util.Map, byte[])}
 */
public record NewMessage(String id, boolean relative, long when, byte[] body) {
}

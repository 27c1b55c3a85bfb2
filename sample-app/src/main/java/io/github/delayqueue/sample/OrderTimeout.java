package io.github.delayqueue.sample;

/**
 * The payload of an {@code order-timeout} message, sent as JSON.
 *
 * @param orderId the order to cancel if it is still unpaid
 */
public record OrderTimeout(String orderId) {
}

package io.github.delayqueue.sample;

/**
 * Where an order is in its life: {@link #CREATED} orders end {@link #PAID} or
 * {@link #CANCELLED}.
 */
public enum OrderStatus {

	/** Waiting for payment; the timeout message is pending. */
	CREATED,

	/** Paid in time; the timeout message was cancelled. */
	PAID,

	/** Not paid before the timeout message arrived. */
	CANCELLED

}

package io.github.delayqueue.sample;

import io.github.delayqueue.listener.DelayListener;
import io.github.delayqueue.listener.Delivery;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.stereotype.Component;

/**
 * Cancels orders that are still unpaid when their timeout message arrives. Delivery is at
 * least once, so this is idempotent: a second delivery finds the order no longer
 * {@link OrderStatus#CREATED} and changes nothing.
 */
@Component
public class OrderTimeoutListener {

	private static final Log logger = LogFactory.getLog(OrderTimeoutListener.class);

	private final OrderStore store;

	/**
	 * Creates the listener.
	 * @param store the orders
	 */
	public OrderTimeoutListener(OrderStore store) {
		this.store = store;
	}

	/**
	 * Handles one timeout message; returning acknowledges it.
	 * @param delivery the message, with the order id as payload
	 */
	@DelayListener(topic = OrderService.TIMEOUT_TOPIC)
	public void onTimeout(Delivery<OrderTimeout> delivery) {
		String orderId = delivery.payload().orderId();
		if (this.store.transition(orderId, OrderStatus.CREATED, OrderStatus.CANCELLED)) {
			logger.info("Order " + orderId + " not paid by " + delivery.dueAt() + ": cancelled");
			return;
		}
		String state = this.store.find(orderId)
			.map(order -> "is already " + order.status())
			.orElse("is unknown (orders are kept in memory only)");
		logger.info("Order " + orderId + " timed out (attempt " + delivery.attempt() + ") but " + state
				+ ": nothing to do");
	}

}

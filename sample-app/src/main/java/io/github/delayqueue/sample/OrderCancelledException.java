package io.github.delayqueue.sample;

import org.springframework.http.HttpStatus;
import org.springframework.web.bind.annotation.ResponseStatus;

/**
 * Thrown when paying an order that its timeout has already cancelled; answered with 409.
 */
@ResponseStatus(HttpStatus.CONFLICT)
public class OrderCancelledException extends RuntimeException {

	/**
	 * Creates the exception.
	 * @param order the cancelled order
	 */
	public OrderCancelledException(Order order) {
		super("Order " + order.id() + " was cancelled at " + order.updatedAt() + " because it was not paid in time");
	}

}

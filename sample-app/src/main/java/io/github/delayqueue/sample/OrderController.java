package io.github.delayqueue.sample;

import java.math.BigDecimal;
import java.net.URI;

import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.server.ResponseStatusException;

/**
 * The REST API: create an order, pay it, look at it.
 */
@RestController
@RequestMapping("/orders")
public class OrderController {

	private final OrderService orders;

	private final OrderStore store;

	/**
	 * Creates the controller.
	 * @param orders creates and pays orders
	 * @param store looks orders up
	 */
	public OrderController(OrderService orders, OrderStore store) {
		this.orders = orders;
		this.store = store;
	}

	/**
	 * Creates an order that is cancelled unless paid within {@code sample.order-timeout}.
	 * @param request the item and amount
	 * @return 201 with the order
	 */
	@PostMapping
	public ResponseEntity<Order> create(@RequestBody NewOrder request) {
		if (request.item() == null || request.item().isBlank() || request.amount() == null
				|| request.amount().signum() <= 0) {
			throw new ResponseStatusException(HttpStatus.BAD_REQUEST, "Give an item and a positive amount");
		}
		Order order = this.orders.create(request.item(), request.amount());
		return ResponseEntity.created(URI.create("/orders/" + order.id())).body(order);
	}

	/**
	 * Pays an order; paying it again changes nothing.
	 * @param id the order id
	 * @return the paid order; 404 if unknown, 409 if it was cancelled
	 */
	@PostMapping("/{id}/pay")
	public Order pay(@PathVariable String id) {
		return this.orders.pay(id).orElseThrow(() -> notFound(id));
	}

	/**
	 * Shows an order.
	 * @param id the order id
	 * @return the order; 404 if unknown
	 */
	@GetMapping("/{id}")
	public Order get(@PathVariable String id) {
		return this.store.find(id).orElseThrow(() -> notFound(id));
	}

	private static ResponseStatusException notFound(String id) {
		return new ResponseStatusException(HttpStatus.NOT_FOUND, "No order " + id);
	}

	/**
	 * The body of {@code POST /orders}.
	 *
	 * @param item what is ordered
	 * @param amount the price, positive
	 */
	public record NewOrder(String item, BigDecimal amount) {
	}

}

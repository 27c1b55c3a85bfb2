package io.github.delayqueue.sample;

import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.UnaryOperator;

import org.springframework.stereotype.Component;

/**
 * Keeps the orders in memory; a real application would use a database. Each change is
 * atomic, so a payment and a timeout arriving together cannot both win.
 */
@Component
public class OrderStore {

	private final Map<String, Order> orders = new ConcurrentHashMap<>();

	/**
	 * Stores a new order.
	 * @param order the order
	 */
	public void add(Order order) {
		this.orders.put(order.id(), order);
	}

	/**
	 * Looks an order up.
	 * @param id the order id
	 * @return the order, or empty if there is none with this id
	 */
	public Optional<Order> find(String id) {
		return Optional.ofNullable(this.orders.get(id));
	}

	/**
	 * Changes an order, if it exists.
	 * @param id the order id
	 * @param change what to change
	 * @return the changed order, or empty if there is none with this id
	 */
	public Optional<Order> update(String id, UnaryOperator<Order> change) {
		return Optional.ofNullable(this.orders.computeIfPresent(id, (key, order) -> change.apply(order)));
	}

	/**
	 * Moves an order from one status to another, if it is in the first.
	 * @param id the order id
	 * @param from the status the order must be in
	 * @param to the new status
	 * @return whether the order was moved; {@code false} if it is unknown or in another
	 * status
	 */
	public boolean transition(String id, OrderStatus from, OrderStatus to) {
		AtomicBoolean moved = new AtomicBoolean();
		this.orders.computeIfPresent(id, (key, order) -> {
			if (order.status() != from) {
				return order;
			}
			moved.set(true);
			return order.withStatus(to);
		});
		return moved.get();
	}

	/**
	 * Removes an order.
	 * @param id the order id
	 */
	public void remove(String id) {
		this.orders.remove(id);
	}

}

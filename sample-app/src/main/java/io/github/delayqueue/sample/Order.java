package io.github.delayqueue.sample;

import java.math.BigDecimal;
import java.time.Instant;
import java.time.temporal.ChronoUnit;

import org.jspecify.annotations.Nullable;

/**
 * An order, as stored and as returned by the REST API.
 *
 * @param id the order id, also the id of its timeout message
 * @param item what was ordered
 * @param amount the price
 * @param status where the order is in its life
 * @param createdAt when the order was created
 * @param timeoutAt when the order is cancelled unless paid before; {@code null} only
 * while the timeout is being scheduled
 * @param updatedAt when the status last changed
 */
public record Order(String id, String item, BigDecimal amount, OrderStatus status, Instant createdAt,
		@Nullable Instant timeoutAt, Instant updatedAt) {

	/**
	 * Creates a new, unpaid order.
	 * @param id the order id
	 * @param item what was ordered
	 * @param amount the price
	 * @return the order, {@link OrderStatus#CREATED}
	 */
	public static Order create(String id, String item, BigDecimal amount) {
		Instant now = now();
		return new Order(id, item, amount, OrderStatus.CREATED, now, null, now);
	}

	/**
	 * Returns this order with its timeout set.
	 * @param timeoutAt when the timeout message is due
	 * @return the changed order
	 */
	public Order withTimeoutAt(Instant timeoutAt) {
		return new Order(this.id, this.item, this.amount, this.status, this.createdAt, timeoutAt, this.updatedAt);
	}

	/**
	 * Returns this order in a new status.
	 * @param status the new status
	 * @return the changed order, updated now
	 */
	public Order withStatus(OrderStatus status) {
		return new Order(this.id, this.item, this.amount, status, this.createdAt, this.timeoutAt, now());
	}

	private static Instant now() {
		return Instant.now().truncatedTo(ChronoUnit.MILLIS);
	}

}

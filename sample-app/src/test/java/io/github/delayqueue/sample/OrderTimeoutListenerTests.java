package io.github.delayqueue.sample;

import java.math.BigDecimal;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;

import io.github.delayqueue.listener.Delivery;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The timeout listener on its own: what a delivery does to an order, and that a second
 * delivery does nothing more.
 */
class OrderTimeoutListenerTests {

	private final OrderStore store = new OrderStore();

	private final OrderTimeoutListener listener = new OrderTimeoutListener(this.store);

	@Test
	void aDeliveryCancelsAnUnpaidOrderAndASecondDeliveryChangesNothing() {
		this.store.add(Order.create("o-1", "book", new BigDecimal("12.5")));

		this.listener.onTimeout(delivery("o-1", 1));
		Order cancelled = this.store.find("o-1").orElseThrow();
		this.listener.onTimeout(delivery("o-1", 2));

		assertThat(cancelled.status()).isEqualTo(OrderStatus.CANCELLED);
		assertThat(this.store.find("o-1")).contains(cancelled);
	}

	@Test
	void aDeliveryLeavesAPaidOrderPaid() {
		Order paid = Order.create("o-2", "book", new BigDecimal("12.5")).withStatus(OrderStatus.PAID);
		this.store.add(paid);

		this.listener.onTimeout(delivery("o-2", 1));

		assertThat(this.store.find("o-2")).contains(paid);
	}

	@Test
	void aDeliveryForAnUnknownOrderIsAcknowledged() {
		this.listener.onTimeout(delivery("gone", 1));

		assertThat(this.store.find("gone")).isEmpty();
	}

	private static Delivery<OrderTimeout> delivery(String orderId, int attempt) {
		return new Delivery<>(orderId, OrderService.TIMEOUT_TOPIC, new OrderTimeout(orderId), Instant.now(), attempt,
				Map.of(), Duration.ZERO);
	}

}

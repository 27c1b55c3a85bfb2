package io.github.delayqueue.sample;

import java.math.BigDecimal;
import java.time.Duration;
import java.util.Optional;
import java.util.UUID;

import io.github.delayqueue.producer.DelayMessage;
import io.github.delayqueue.producer.DelayQueueTemplate;
import io.github.delayqueue.producer.SendResult;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.stereotype.Service;

/**
 * Creates orders with a timeout message, and pays them, cancelling the timeout message.
 */
@Service
public class OrderService {

	/** The topic of the timeout messages; each message's id is its order's id. */
	public static final String TIMEOUT_TOPIC = "order-timeout";

	private static final Log logger = LogFactory.getLog(OrderService.class);

	private final OrderStore store;

	private final DelayQueueTemplate delayQueue;

	private final Duration timeout;

	/**
	 * Creates the service.
	 * @param store the orders
	 * @param delayQueue sends and cancels the timeout messages
	 * @param properties gives the order timeout
	 */
	public OrderService(OrderStore store, DelayQueueTemplate delayQueue, SampleProperties properties) {
		this.store = store;
		this.delayQueue = delayQueue;
		this.timeout = properties.orderTimeout();
	}

	/**
	 * Creates an order and schedules its timeout. If the timeout cannot be scheduled, no
	 * order is kept and the exception is rethrown.
	 * @param item what is ordered
	 * @param amount the price
	 * @return the new order, with its timeout
	 */
	public Order create(String item, BigDecimal amount) {
		Order order = Order.create(UUID.randomUUID().toString(), item, amount);
		this.store.add(order);
		SendResult timeout;
		try {
			timeout = this.delayQueue.send(DelayMessage.builder(TIMEOUT_TOPIC, new OrderTimeout(order.id()))
				.id(order.id())
				.delay(this.timeout)
				.build());
		}
		catch (RuntimeException ex) {
			this.store.remove(order.id());
			throw ex;
		}
		logger.info("Order " + order.id() + " created, cancelled at " + timeout.dueAt() + " unless paid before");
		return this.store.update(order.id(), created -> created.withTimeoutAt(timeout.dueAt())).orElseThrow();
	}

	/**
	 * Pays an order and cancels its timeout message. Paying a paid order changes nothing.
	 * @param id the order id
	 * @return the paid order, or empty if there is none with this id
	 * @throws OrderCancelledException if the order timed out before it was paid
	 */
	public Optional<Order> pay(String id) {
		if (this.store.transition(id, OrderStatus.CREATED, OrderStatus.PAID)) {
			boolean cancelled = this.delayQueue.cancel(TIMEOUT_TOPIC, id);
			logger.info("Order " + id + " paid, " + (cancelled ? "timeout cancelled"
					: "timeout already being delivered: its listener will find the order paid"));
		}
		Optional<Order> order = this.store.find(id);
		if (order.isPresent() && order.get().status() == OrderStatus.CANCELLED) {
			throw new OrderCancelledException(order.get());
		}
		return order;
	}

}

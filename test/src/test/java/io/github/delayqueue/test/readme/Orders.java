package io.github.delayqueue.test.readme;

import java.time.Duration;

import io.github.delayqueue.producer.DelayMessage;
import io.github.delayqueue.producer.DelayQueueTemplate;
import io.github.delayqueue.listener.DelayListener;
import io.github.delayqueue.listener.Delivery;

import org.springframework.stereotype.Service;

@Service
class Orders {

	private final DelayQueueTemplate delayQueue;

	Orders(DelayQueueTemplate delayQueue) {
		this.delayQueue = delayQueue;
	}

	void place(String orderId) {
		this.delayQueue.send(DelayMessage.builder("order-timeout", new OrderTimeout(orderId))
			.id(orderId) // optional: makes the send idempotent
			.delay(Duration.ofMinutes(30))
			.build());
	}

	void paid(String orderId) {
		this.delayQueue.cancel("order-timeout", orderId);
	}

	@DelayListener(topic = "order-timeout", concurrency = "4")
	void onTimeout(Delivery<OrderTimeout> delivery) {
		// cancel the order if still unpaid; throwing asks for a retry
	}

	record OrderTimeout(String orderId) {
	}

}

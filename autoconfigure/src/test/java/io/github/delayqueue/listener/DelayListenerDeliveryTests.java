package io.github.delayqueue.listener;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import io.github.delayqueue.producer.DelayMessage;
import io.github.delayqueue.producer.DelayQueueTemplate;
import io.github.delayqueue.producer.SendResult;
import io.github.delayqueue.store.redis.RedisMessageStore;
import io.github.delayqueue.testsupport.QueueContexts;
import io.github.delayqueue.testsupport.Transitions;
import org.junit.jupiter.api.Test;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Delivery of delayed messages to {@link DelayListener} methods, on real Redis.
 */
class DelayListenerDeliveryTests {

	@Test
	void messageIsDeliveredWithItsPayloadHeadersAndAttemptAtOrAfterItsDueTime() {
		QueueContexts.runner(QueueContexts.uniquePrefix())
			.withUserConfiguration(OrderListenerConfig.class)
			.run((context) -> {
				DelayQueueTemplate template = context.getBean(DelayQueueTemplate.class);
				OrderListener listener = context.getBean(OrderListener.class);
				SendResult sent = template.send(DelayMessage.builder("orders", new Order("o-1", 42))
					.delay(Duration.ofMillis(300))
					.header("tenant", "acme")
					.build());
				await().atMost(Duration.ofSeconds(10)).until(() -> listener.deliveries.size() == 1);
				Received received = listener.deliveries.get(0);
				assertThat(received.delivery.id()).isEqualTo(sent.id());
				assertThat(received.delivery.topic()).isEqualTo("orders");
				assertThat(received.delivery.payload()).isEqualTo(new Order("o-1", 42));
				assertThat(received.delivery.headers()).containsEntry("tenant", "acme");
				assertThat(received.delivery.attempt()).isEqualTo(1);
				assertThat(received.delivery.dueAt()).isEqualTo(sent.dueAt());
				assertThat(received.at).isAfterOrEqualTo(sent.dueAt());
			});
	}

	@Test
	void wakeUpSignalsFromAnotherApplicationDeliverMessagesWithoutAnyPolling() {
		String prefix = QueueContexts.uniquePrefix();
		// Brokers and listeners that would otherwise sleep for an hour: only signals can
		// wake them.
		QueueContexts.runner(prefix)
			.withBean(SequenceListener.class)
			.withPropertyValues("delay-queue.broker.max-sleep=1h", "delay-queue.listener.idle-check-interval=1h")
			.run((consumer) -> QueueContexts.runner(prefix).run((producer) -> {
				SequenceListener listener = consumer.getBean(SequenceListener.class);
				DelayQueueTemplate template = producer.getBean(DelayQueueTemplate.class);
				template.send("sequence", "first", Duration.ofMillis(300));
				await().atMost(Duration.ofSeconds(10)).until(() -> listener.received.contains("first"));
				template.send("sequence", "later", Duration.ofMillis(800));
				template.send("sequence", "earlier", Duration.ofMillis(100));
				await().atMost(Duration.ofSeconds(10)).until(() -> listener.received.size() == 3);
				assertThat(listener.received).containsExactly("first", "earlier", "later");
			}));
	}

	@Test
	void liveMessageBehindThousandsOfCancelledOnesIsDeliveredWithoutWaitingForTheIdleCheck() {
		String prefix = QueueContexts.uniquePrefix();
		QueueContexts.runner(prefix).run((producer) -> {
			DelayQueueTemplate template = producer.getBean(DelayQueueTemplate.class);
			RedisMessageStore store = producer.getBean(RedisMessageStore.class);
			List<DelayMessage> messages = new ArrayList<>();
			for (int i = 0; i < 2500; i++) {
				messages.add(DelayMessage.builder("sequence", "cancelled").id("c" + i).build());
			}
			template.sendAll(messages);
			Transitions.promote(store, "sequence", 5000, Duration.ZERO);
			messages.forEach((message) -> template.cancel("sequence", message.id()));
			template.send("sequence", "live", Duration.ZERO);
		});
		QueueContexts.runner(prefix)
			.withBean(SequenceListener.class)
			.withPropertyValues("delay-queue.broker.max-sleep=1h", "delay-queue.listener.idle-check-interval=1h")
			.run((consumer) -> {
				SequenceListener listener = consumer.getBean(SequenceListener.class);
				await().atMost(Duration.ofSeconds(10)).until(() -> listener.received.contains("live"));
				assertThat(listener.received).containsExactly("live");
			});
	}

	@Test
	void messagesDueInTheSameMillisecondAreDeliveredInTheOrderTheyWereSent() {
		QueueContexts.runner(QueueContexts.uniquePrefix()).withBean(SequenceListener.class).run((context) -> {
			DelayQueueTemplate template = context.getBean(DelayQueueTemplate.class);
			Instant dueAt = Instant.now().plusMillis(500);
			List<DelayMessage> messages = new ArrayList<>();
			for (int i = 0; i < 200; i++) {
				messages.add(DelayMessage.builder("sequence", Integer.toString(i)).dueAt(dueAt).build());
			}
			template.sendAll(messages.subList(0, 100));
			for (DelayMessage message : messages.subList(100, 200)) {
				template.send(message);
			}
			SequenceListener listener = context.getBean(SequenceListener.class);
			await().atMost(Duration.ofSeconds(10)).until(() -> listener.received.size() == 200);
			assertThat(listener.received).isSortedAccordingTo(Comparator.comparingInt(Integer::parseInt));
		});
	}

	static class SequenceListener {

		final List<String> received = new CopyOnWriteArrayList<>();

		@DelayListener(topic = "sequence")
		void on(String payload) {
			this.received.add(payload);
		}

	}

	record Order(String id, int amount) {
	}

	record Received(Delivery<Order> delivery, Instant at) {
	}

	static class OrderListener {

		final List<Received> deliveries = new CopyOnWriteArrayList<>();

		@DelayListener(topic = "orders")
		void onOrder(Delivery<Order> delivery) {
			this.deliveries.add(new Received(delivery, Instant.now()));
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class OrderListenerConfig {

		@Bean
		OrderListener orderListener() {
			return new OrderListener();
		}

	}

}

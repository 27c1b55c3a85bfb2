package io.github.delayqueue.listener;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;

import io.github.delayqueue.producer.DelayQueueTemplate;
import io.github.delayqueue.producer.SendResult;
import io.github.delayqueue.store.redis.RedisMessageStore;
import io.github.delayqueue.store.redis.TopicKeys;
import io.github.delayqueue.testsupport.QueueContexts;
import io.github.delayqueue.testsupport.Transitions;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A consumer that stops in the middle of handling a message loses its lease, and the
 * message is delivered again.
 */
class LeaseExpiryTests {

	@Test
	void messageOfAConsumerThatDiedMidHandlingIsDeliveredAgainAfterItsLease() {
		String prefix = QueueContexts.uniquePrefix();
		String[] id = new String[1];
		// A consumer that claims the message and dies: it never acknowledges nor hands it
		// back.
		QueueContexts.runner(prefix).run((dying) -> {
			RedisMessageStore store = dying.getBean(RedisMessageStore.class);
			id[0] = dying.getBean(DelayQueueTemplate.class).send("jobs", "work", Duration.ZERO).id();
			assertThat(Transitions.promote(store, "jobs", 10).moved()).isEqualTo(1);
			assertThat(Transitions.claim(store, "jobs", 1, Duration.ofMillis(500))).hasSize(1);
		});
		QueueContexts.runner(prefix)
			.withBean(HealthyListener.class)
			.withPropertyValues("delay-queue.broker.max-sleep=200ms")
			.run((context) -> {
				HealthyListener healthy = context.getBean(HealthyListener.class);
				await().atMost(Duration.ofSeconds(15)).until(() -> healthy.deliveries.size() == 1);
				Delivery<String> again = healthy.deliveries.get(0);
				assertThat(again.id()).isEqualTo(id[0]);
				assertThat(again.attempt()).isEqualTo(2);
				assertThat(again.payload()).isEqualTo("work");
			});
	}

	@Test
	void consumerThatLostItsLeaseCannotAcknowledgeAndTheMessageIsHandledAgain() {
		String prefix = QueueContexts.uniquePrefix();
		StuckListener stuck = new StuckListener();
		QueueContexts.runner(prefix)
			.withBean(StuckListener.class, () -> stuck)
			.withPropertyValues("delay-queue.listener.visibility-timeout=500ms", "delay-queue.broker.max-sleep=100ms",
					"delay-queue.listener.max-handling-time=300ms", "delay-queue.listener.shutdown-timeout=5s")
			.run((context) -> {
				StringRedisTemplate redis = context.getBean(StringRedisTemplate.class);
				TopicKeys keys = context.getBean(RedisMessageStore.class).keys("jobs");
				SendResult sent = context.getBean(DelayQueueTemplate.class).send("jobs", "work", Duration.ZERO);
				await().atMost(Duration.ofSeconds(10)).until(() -> stuck.started.getCount() == 0);
				// The only handler thread is stuck past its lease: the message goes back
				// to ready.
				await().atMost(Duration.ofSeconds(10))
					.until(() -> redis.opsForZSet().score(keys.inFlight(), sent.id()) == null);
				stuck.release.countDown();
				await().atMost(Duration.ofSeconds(10)).until(() -> stuck.calls.size() == 2);
				assertThat(stuck.calls).containsExactly(1, 2);
				await().atMost(Duration.ofSeconds(10)).until(() -> !Boolean.TRUE.equals(redis.hasKey(keys.messages())));
			});
	}

	static class StuckListener {

		final CountDownLatch started = new CountDownLatch(1);

		final CountDownLatch release = new CountDownLatch(1);

		final List<Integer> calls = new CopyOnWriteArrayList<>();

		@DelayListener(topic = "jobs")
		void on(Delivery<String> delivery) {
			this.calls.add(delivery.attempt());
			this.started.countDown();
			if (delivery.attempt() > 1) {
				return;
			}
			boolean released = false;
			while (!released) {
				try {
					this.release.await();
					released = true;
				}
				catch (InterruptedException ex) {
					// A dead consumer does not react: keep blocking like a hung handler.
				}
			}
		}

	}

	static class HealthyListener {

		final List<Delivery<String>> deliveries = new CopyOnWriteArrayList<>();

		@DelayListener(topic = "jobs")
		void on(Delivery<String> delivery) {
			this.deliveries.add(delivery);
		}

	}

}

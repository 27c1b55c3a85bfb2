package io.github.delayqueue.failover;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import io.github.delayqueue.autoconfigure.DelayQueueProperties;
import io.github.delayqueue.producer.DelayMessage;
import io.github.delayqueue.producer.DelayQueueTemplate;
import io.github.delayqueue.producer.SendResult;
import io.github.delayqueue.listener.DelayListener;
import io.github.delayqueue.listener.Delivery;
import io.github.delayqueue.store.redis.RedisMessageStore;
import io.github.delayqueue.store.redis.ScriptClock;
import io.github.delayqueue.testsupport.QueueContexts;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * What a step of the Redis clock does, as after a failover to a replica whose clock
 * differs (simulated with an offset clock): a step forward delivers messages due within
 * the step at once, with their due time unchanged; a step back delays them by the step.
 * Either way, nothing stalls: brokers sleep at most {@code delay-queue.broker.max-sleep}
 * and wake to the new time.
 */
@Tag("failover")
class ClockStepTests {

	private static final String PREFIX = QueueContexts.uniquePrefix();

	private static final String OFFSET_KEY = PREFIX + ":clock-offset";

	@Test
	void aStepForwardDeliversMessagesDueWithinTheStepAtOnceWithTheirDueTime() {
		QueueContexts.runner(PREFIX)
			.withUserConfiguration(SteppingStore.class)
			.withPropertyValues("delay-queue.broker.max-sleep=500ms")
			.run((context) -> {
				SendResult sent = context.getBean(DelayQueueTemplate.class)
					.send(DelayMessage.builder("steps", "ahead").delay(Duration.ofMinutes(1)).build());
				step(context.getBean(StringRedisTemplate.class), Duration.ofMinutes(1));
				Listener listener = context.getBean(Listener.class);
				await().atMost(Duration.ofSeconds(10)).until(() -> listener.deliveries.size() == 1);
				assertThat(listener.deliveries.get(0).dueAt()).isEqualTo(sent.dueAt());
			});
	}

	@Test
	void aStepBackDelaysMessagesByTheStepAndNothingStalls() {
		QueueContexts.runner(PREFIX)
			.withUserConfiguration(SteppingStore.class)
			.withPropertyValues("delay-queue.broker.max-sleep=500ms")
			.run((context) -> {
				step(context.getBean(StringRedisTemplate.class), Duration.ofSeconds(-2));
				long sentAt = System.nanoTime();
				context.getBean(DelayQueueTemplate.class)
					.send(DelayMessage.builder("steps", "behind").delay(Duration.ofSeconds(1)).build());
				step(context.getBean(StringRedisTemplate.class), Duration.ofSeconds(-4));
				Listener listener = context.getBean(Listener.class);
				await().atMost(Duration.ofSeconds(15)).until(() -> listener.deliveries.size() == 1);
				assertThat(listener.receivedAtNanos.get(0) - sentAt)
					.as("delivered after its delay plus the step back, not before")
					.isGreaterThanOrEqualTo(Duration.ofSeconds(3).toNanos());
			});
	}

	/** Moves the store's clock by the given step from where it stands. */
	private static void step(StringRedisTemplate redis, Duration step) {
		String current = redis.opsForValue().get(OFFSET_KEY);
		long offset = ((current != null) ? Long.parseLong(current) : 0) + step.toNanos() / 1000;
		redis.opsForValue().set(OFFSET_KEY, Long.toString(offset));
	}

	@Configuration(proxyBeanMethods = false)
	static class SteppingStore {

		@Bean
		RedisMessageStore steppingStore(RedisConnectionFactory connectionFactory, DelayQueueProperties properties) {
			return new RedisMessageStore(connectionFactory, properties.getKeyPrefix(),
					properties.getProducer().getSendTimeout(), ScriptClock.offsetBy(OFFSET_KEY));
		}

		@Bean
		Listener stepsListener() {
			return new Listener();
		}

	}

	static class Listener {

		final List<Delivery<String>> deliveries = new CopyOnWriteArrayList<>();

		final List<Long> receivedAtNanos = new CopyOnWriteArrayList<>();

		@DelayListener(topic = "steps")
		void on(Delivery<String> delivery) {
			this.receivedAtNanos.add(System.nanoTime());
			this.deliveries.add(delivery);
		}

	}

}

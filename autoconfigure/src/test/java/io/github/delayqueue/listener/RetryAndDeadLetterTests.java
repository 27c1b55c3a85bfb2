package io.github.delayqueue.listener;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.delayqueue.producer.DelayQueueTemplate;
import io.github.delayqueue.producer.SendResult;
import io.github.delayqueue.store.MessageFormat;
import io.github.delayqueue.store.StoredMessage;
import io.github.delayqueue.store.redis.RedisMessageStore;
import io.github.delayqueue.store.redis.TopicKeys;
import io.github.delayqueue.testsupport.QueueContexts;
import org.junit.jupiter.api.Test;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Failed deliveries: retries with backoff, the dead-letter set after the last attempt,
 * and payloads that cannot be read.
 */
class RetryAndDeadLetterTests {

	@Test
	void failedDeliveryIsRetriedAfterBackoffWithTheAttemptCountedUp() {
		QueueContexts.runner(QueueContexts.uniquePrefix())
			.withUserConfiguration(FlakyListenerConfig.class)
			.withPropertyValues("delay-queue.listener.backoff.initial-interval=200ms",
					"delay-queue.listener.backoff.multiplier=2", "delay-queue.listener.backoff.max-interval=1s")
			.run((context) -> {
				FlakyListener listener = context.getBean(FlakyListener.class);
				context.getBean(DelayQueueTemplate.class).send("flaky", "hello", Duration.ZERO);
				await().atMost(Duration.ofSeconds(15)).until(() -> listener.succeeded.get() == 1);
				List<Delivery<String>> deliveries = listener.deliveries;
				assertThat(deliveries).extracting(Delivery::attempt).containsExactly(1, 2, 3);
				assertThat(deliveries).extracting(Delivery::id).containsOnly(deliveries.get(0).id());
				// Each retry is due one backoff after the failure: 200 ms, then 400 ms.
				assertThat(Duration.between(deliveries.get(0).dueAt(), deliveries.get(1).dueAt()))
					.isGreaterThanOrEqualTo(Duration.ofMillis(200));
				assertThat(Duration.between(deliveries.get(1).dueAt(), deliveries.get(2).dueAt()))
					.isGreaterThanOrEqualTo(Duration.ofMillis(400));
				// Acknowledged shortly after the handler returned: then nothing is left
				// of the topic.
				await().atMost(Duration.ofSeconds(5))
					.untilAsserted(() -> assertThat(topicKeys(context.getBean(RedisMessageStore.class), "flaky",
							context.getBean(StringRedisTemplate.class)))
						.isEmpty());
			});
	}

	@Test
	void messageThatFailsEveryAttemptEndsInTheDeadLetterSetWithPayloadAttemptsAndLastError() {
		QueueContexts.runner(QueueContexts.uniquePrefix())
			.withUserConfiguration(FailingListenerConfig.class)
			.withPropertyValues("delay-queue.topics.failing.max-attempts=3")
			.run((context) -> {
				FailingListener listener = context.getBean(FailingListener.class);
				RedisMessageStore store = context.getBean(RedisMessageStore.class);
				StringRedisTemplate redis = context.getBean(StringRedisTemplate.class);
				SendResult sent = context.getBean(DelayQueueTemplate.class).send("failing", "doomed", Duration.ZERO);
				TopicKeys keys = store.keys("failing");
				await().atMost(Duration.ofSeconds(15))
					.until(() -> Boolean.TRUE.equals(redis.opsForHash().hasKey(keys.deadErrors(), sent.id())));
				assertThat(listener.attempts.get()).isEqualTo(3);
				assertThat(redis.opsForZSet().score(keys.dead(), sent.id())).isNotNull();
				assertThat((String) redis.opsForHash().get(keys.deadErrors(), sent.id()))
					.contains("IllegalStateException")
					.contains("always fails");
				StoredMessage dead = deadMessage(context.getBean(RedisConnectionFactory.class), keys, sent.id());
				assertThat(dead.attempts()).isEqualTo(3);
				assertThat(new String(dead.payload(), StandardCharsets.UTF_8)).isEqualTo("doomed");
				assertThat(redis.hasKey(keys.messages())).isFalse();
				assertThat(redis.hasKey(keys.inFlight())).isFalse();
				assertThat(redis.hasKey(keys.scheduled())).isFalse();
			});
	}

	@Test
	void unreadablePayloadIsDeadLetteredAtOnceWithoutBlockingTheTopic() {
		QueueContexts.runner(QueueContexts.uniquePrefix())
			.withUserConfiguration(TypedListenerConfig.class)
			.run((context) -> {
				TypedListener listener = context.getBean(TypedListener.class);
				DelayQueueTemplate template = context.getBean(DelayQueueTemplate.class);
				StringRedisTemplate redis = context.getBean(StringRedisTemplate.class);
				TopicKeys keys = context.getBean(RedisMessageStore.class).keys("typed");
				SendResult garbage = template.send("typed", "this is not JSON", Duration.ZERO);
				template.send("typed", new Amount("EUR", 12), Duration.ZERO);
				await().atMost(Duration.ofSeconds(10)).until(() -> listener.received.size() == 1);
				assertThat(listener.received).containsExactly(new Amount("EUR", 12));
				await().atMost(Duration.ofSeconds(10))
					.until(() -> Boolean.TRUE.equals(redis.opsForHash().hasKey(keys.deadErrors(), garbage.id())));
				assertThat((String) redis.opsForHash().get(keys.deadErrors(), garbage.id()))
					.contains("Cannot read payload as")
					.contains(Amount.class.getName());
				StoredMessage dead = deadMessage(context.getBean(RedisConnectionFactory.class), keys, garbage.id());
				assertThat(dead.attempts()).isEqualTo(1);
			});
	}

	@Test
	void messageClaimedLaterThanTheLateThresholdIsDeadLetteredUnderTheDeadLetterLatePolicy() {
		String prefix = QueueContexts.uniquePrefix();
		String[] ids = new String[2];
		// Sent while no application listens: both are late by the time a listener starts.
		QueueContexts.runner(prefix).run((context) -> {
			DelayQueueTemplate template = context.getBean(DelayQueueTemplate.class);
			ids[0] = template.sendAt("typed", new Amount("EUR", 1), Instant.now().minusSeconds(60)).id();
			ids[1] = template.sendAt("typed", new Amount("EUR", 2), Instant.now()).id();
		});
		QueueContexts.runner(prefix)
			.withUserConfiguration(TypedListenerConfig.class)
			.withPropertyValues("delay-queue.topics.typed.late-policy=dead-letter",
					"delay-queue.topics.typed.late-threshold=30s")
			.run((context) -> {
				TypedListener listener = context.getBean(TypedListener.class);
				StringRedisTemplate redis = context.getBean(StringRedisTemplate.class);
				TopicKeys keys = context.getBean(RedisMessageStore.class).keys("typed");
				await().atMost(Duration.ofSeconds(10)).until(() -> listener.received.size() == 1);
				assertThat(listener.received).containsExactly(new Amount("EUR", 2));
				await().atMost(Duration.ofSeconds(10))
					.until(() -> Boolean.TRUE.equals(redis.opsForHash().hasKey(keys.deadErrors(), ids[0])));
				assertThat((String) redis.opsForHash().get(keys.deadErrors(), ids[0])).contains("late threshold");
			});
	}

	@Test
	void handlerThrowingAnErrorOrInterruptedExceptionIsRetriedLikeAnyFailure() {
		QueueContexts.runner(QueueContexts.uniquePrefix()).withBean(ThrowingListener.class).run((context) -> {
			ThrowingListener listener = context.getBean(ThrowingListener.class);
			context.getBean(DelayQueueTemplate.class).send("throwing", "error", Duration.ZERO);
			context.getBean(DelayQueueTemplate.class).send("throwing", "interrupted", Duration.ZERO);
			await().atMost(Duration.ofSeconds(15)).until(() -> listener.handled.size() == 2);
			assertThat(listener.handled).containsExactlyInAnyOrder("error", "interrupted");
			assertThat(listener.failures.get()).isEqualTo(2);
		});
	}

	@Test
	void deliveryTellsHowLateTheMessageWasClaimed() {
		QueueContexts.runner(QueueContexts.uniquePrefix())
			.withUserConfiguration(FlakyListenerConfig.class)
			.run((context) -> {
				FlakyListener listener = context.getBean(FlakyListener.class);
				context.getBean(DelayQueueTemplate.class).sendAt("flaky", "late", Instant.now().minusSeconds(10));
				await().atMost(Duration.ofSeconds(15)).until(() -> listener.deliveries.size() >= 1);
				assertThat(listener.deliveries.get(0).lateness()).isGreaterThanOrEqualTo(Duration.ofSeconds(9));
			});
	}

	private static List<String> topicKeys(RedisMessageStore store, String topic, StringRedisTemplate redis) {
		return store.keys(topic).all().stream().filter((key) -> Boolean.TRUE.equals(redis.hasKey(key))).toList();
	}

	private static StoredMessage deadMessage(RedisConnectionFactory connectionFactory, TopicKeys keys, String id) {
		try (var connection = connectionFactory.getConnection()) {
			byte[] stored = connection.hashCommands()
				.hGet(keys.deadMessages().getBytes(StandardCharsets.UTF_8), id.getBytes(StandardCharsets.UTF_8));
			assertThat(stored).isNotNull();
			return MessageFormat.decode(id, stored);
		}
	}

	record Amount(String currency, int cents) {
	}

	static class FlakyListener {

		final List<Delivery<String>> deliveries = new CopyOnWriteArrayList<>();

		final AtomicInteger succeeded = new AtomicInteger();

		@DelayListener(topic = "flaky")
		void on(Delivery<String> delivery) {
			this.deliveries.add(delivery);
			if (delivery.attempt() < 3) {
				throw new IllegalStateException("fails on attempt " + delivery.attempt());
			}
			this.succeeded.incrementAndGet();
		}

	}

	static class FailingListener {

		final AtomicInteger attempts = new AtomicInteger();

		@DelayListener(topic = "failing")
		void on(String payload) {
			this.attempts.incrementAndGet();
			throw new IllegalStateException("always fails");
		}

	}

	static class ThrowingListener {

		final List<String> handled = new CopyOnWriteArrayList<>();

		final AtomicInteger failures = new AtomicInteger();

		@DelayListener(topic = "throwing")
		void on(Delivery<String> delivery) throws InterruptedException {
			if (delivery.attempt() == 1) {
				this.failures.incrementAndGet();
				if (delivery.payload().equals("error")) {
					throw new AssertionError("an Error from the handler");
				}
				throw new InterruptedException("interrupted handler");
			}
			this.handled.add(delivery.payload());
		}

	}

	static class TypedListener {

		final List<Amount> received = new CopyOnWriteArrayList<>();

		@DelayListener(topic = "typed")
		void on(Amount amount) {
			this.received.add(amount);
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class FlakyListenerConfig {

		@Bean
		FlakyListener flakyListener() {
			return new FlakyListener();
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class FailingListenerConfig {

		@Bean
		FailingListener failingListener() {
			return new FailingListener();
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class TypedListenerConfig {

		@Bean
		TypedListener typedListener() {
			return new TypedListener();
		}

	}

}

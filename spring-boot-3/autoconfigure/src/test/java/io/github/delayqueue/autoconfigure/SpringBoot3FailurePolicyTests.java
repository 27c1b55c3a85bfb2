package io.github.delayqueue.autoconfigure;

import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;

import io.github.delayqueue.producer.DelayMessage;
import io.github.delayqueue.producer.DelayQueueTemplate;
import io.github.delayqueue.listener.DelayListener;
import io.github.delayqueue.listener.DelayListenerErrorHandler;
import io.github.delayqueue.listener.Delivery;
import io.github.delayqueue.listener.FailureAction;
import io.github.delayqueue.runtime.DelayQueueRuntime;
import io.github.delayqueue.store.redis.RedisMessageStore;
import io.github.delayqueue.test.redis.TestRedis;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.data.redis.RedisAutoConfiguration;
import org.springframework.boot.autoconfigure.jackson.JacksonAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Issue 24's features on Spring Boot 3.5: exception classes bound from the properties,
 * the application's error-handler bean, the previous error of a retry, a listener of dead
 * letters, and a deduplication window.
 */
class SpringBoot3FailurePolicyTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(RedisAutoConfiguration.class, JacksonAutoConfiguration.class,
				DelayQueueAutoConfiguration.class))
		.withPropertyValues(TestRedis.shared().springProperties())
		.withPropertyValues("delay-queue.key-prefix=boot3-" + UUID.randomUUID().toString().substring(0, 8));

	@Test
	void exceptionsNotRetriedAndTheErrorHandlerBeanShapeWhatAFailureDoes() {
		this.runner.withUserConfiguration(Reminders.class)
			.withPropertyValues("delay-queue.topics.reminders.no-retry-for=java.lang.UnsupportedOperationException")
			.run((context) -> {
				DelayQueueTemplate queue = context.getBean(DelayQueueTemplate.class);
				queue.send(DelayMessage.builder("reminders", "unsupported").id("r-1").build());
				queue.send(DelayMessage.builder("reminders", "flaky").id("r-2").build());
				Reminders reminders = context.getBean(Reminders.class);
				RedisMessageStore store = context.getBean(RedisMessageStore.class);
				await().atMost(Duration.ofSeconds(10)).until(() -> store.stats("reminders").dead() == 2);
				assertThat(reminders.deliveries).filteredOn((delivery) -> delivery.id().equals("r-1")).hasSize(1);
				assertThat(reminders.deliveries).filteredOn((delivery) -> delivery.id().equals("r-2"))
					.extracting(Delivery::previousError)
					.containsExactly(null, "java.lang.IllegalStateException: flaky");
			});
	}

	@Test
	void anIdSentWithAWindowIsNotDeliveredAgainAfterItsMessageWasHandled() {
		this.runner.withUserConfiguration(Reminders.class).run((context) -> {
			DelayQueueTemplate queue = context.getBean(DelayQueueTemplate.class);
			Reminders reminders = context.getBean(Reminders.class);
			queue.send(DelayMessage.builder("reminders", "ok").id("r-3").deduplicateFor(Duration.ofHours(1)).build());
			await().atMost(Duration.ofSeconds(10))
				.until(() -> context.getBean(RedisMessageStore.class).stats("reminders").rememberedIds() == 1);
			assertThat(queue
				.send(DelayMessage.builder("reminders", "ok").id("r-3").deduplicateFor(Duration.ofHours(1)).build())
				.duplicate()).isTrue();
			assertThat(reminders.deliveries).hasSize(1);
		});
	}

	@Test
	void aListenerOfDeadLettersGetsEachWithItsLastErrorWithSettingsFromTheBracketedProperty() {
		this.runner.withUserConfiguration(Reminders.class, DeadReminders.class)
			.withPropertyValues("delay-queue.topics.reminders.no-retry-for=java.lang.UnsupportedOperationException",
					"delay-queue.topics[reminders#dead].concurrency=2")
			.run((context) -> {
				RedisMessageStore store = context.getBean(RedisMessageStore.class);
				DeadReminders dead = context.getBean(DeadReminders.class);
				await().atMost(Duration.ofSeconds(10))
					.until(() -> context.getBean(StringRedisTemplate.class)
						.hasKey(store.keys("reminders").deadLettersWatch()));
				context.getBean(DelayQueueTemplate.class)
					.send(DelayMessage.builder("reminders", "unsupported").id("r-4").build());
				await().atMost(Duration.ofSeconds(10)).until(() -> dead.deliveries.size() == 1);
				assertThat(dead.deliveries.get(0).deadLetter().error())
					.isEqualTo("java.lang.UnsupportedOperationException: unsupported");
				assertThat(context.getBean(DelayQueueRuntime.class)
					.getEndpoints()
					.get("reminders#dead")
					.settings()
					.concurrency()).isEqualTo(2);
			});
	}

	@Configuration(proxyBeanMethods = false)
	static class DeadReminders {

		final List<Delivery<String>> deliveries = new CopyOnWriteArrayList<>();

		@DelayListener(topic = "reminders", deadLetters = true)
		void on(Delivery<String> delivery) {
			this.deliveries.add(delivery);
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class Reminders {

		final List<Delivery<String>> deliveries = new CopyOnWriteArrayList<>();

		@DelayListener(topic = "reminders", maxAttempts = 5)
		void on(Delivery<String> delivery) {
			this.deliveries.add(delivery);
			switch (delivery.payload()) {
				case "unsupported" -> throw new UnsupportedOperationException(delivery.payload());
				case "flaky" -> throw new IllegalStateException(delivery.payload());
				default -> {
				}
			}
		}

		/**
		 * Where the built-in policy retries, retries at once, and gives up after the
		 * second attempt.
		 */
		@Bean
		DelayListenerErrorHandler reminderFailures() {
			return (failure) -> (failure.defaultAction().kind() != FailureAction.Kind.RETRY) ? failure.defaultAction()
					: (failure.attempt() < 2) ? FailureAction.retryAfter(Duration.ZERO) : FailureAction.deadLetter();
		}

	}

}

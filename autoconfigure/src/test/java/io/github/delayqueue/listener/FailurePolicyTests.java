package io.github.delayqueue.listener;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

import io.github.delayqueue.producer.DelayMessage;
import io.github.delayqueue.actuate.DelayQueueEndpoint;
import io.github.delayqueue.actuate.DelayQueueEndpoint.MessageDescriptor;
import io.github.delayqueue.producer.DelayQueueTemplate;
import io.github.delayqueue.producer.InvalidMessageException;
import io.github.delayqueue.runtime.DelayQueueRuntime;
import io.github.delayqueue.schedule.DelayQueueSchedules;
import io.github.delayqueue.store.MessageState;
import io.github.delayqueue.store.MessageSummary;
import io.github.delayqueue.store.redis.RedisMessageStore;
import io.github.delayqueue.testsupport.QueueContexts;
import org.junit.jupiter.api.Test;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * The failure policy users shape, on real Redis: exceptions not retried (from the
 * annotation, the topic's and the listener's properties, found in the cause chain), an
 * error-handler bean's decisions, and what a retried delivery knows of the attempt before
 * and of its priority.
 */
class FailurePolicyTests {

	@Test
	void anExceptionNotRetriedByTheAnnotationIsDeadLetteredAtItsFirstFailureWithItsError() {
		QueueContexts.runner(QueueContexts.uniquePrefix()).withUserConfiguration(Validations.class).run((context) -> {
			context.getBean(DelayQueueTemplate.class).send(DelayMessage.builder("validated", "bad").id("v-1").build());
			Validations listener = context.getBean(Validations.class);
			RedisMessageStore store = context.getBean(RedisMessageStore.class);
			await().atMost(Duration.ofSeconds(10))
				.until(() -> !store.page("validated", MessageState.DEAD, 0, 10).messages().isEmpty());
			assertThat(listener.attempts).containsExactly(1);
			assertThat(store.page("validated", MessageState.DEAD, 0, 10).messages())
				.extracting(MessageSummary::lastError)
				.singleElement()
				.asString()
				.startsWith("java.lang.IllegalStateException: rejected");
		});
	}

	@Test
	void exceptionsNotRetriedByTheTopicsAndTheListenersPropertiesApplyTogether() {
		QueueContexts.runner(QueueContexts.uniquePrefix())
			.withUserConfiguration(Unsupported.class)
			.withPropertyValues("delay-queue.listener.no-retry-for=java.lang.UnsupportedOperationException",
					"delay-queue.topics.unsupported.no-retry-for=java.lang.ArithmeticException",
					"delay-queue.topics.unsupported.max-attempts=5",
					"delay-queue.topics.unsupported.backoff.initial-interval=10ms")
			.run((context) -> {
				DelayQueueTemplate queue = context.getBean(DelayQueueTemplate.class);
				queue.send(DelayMessage.builder("unsupported", "unsupported").id("u-1").build());
				queue.send(DelayMessage.builder("unsupported", "arithmetic").id("u-2").build());
				queue.send(DelayMessage.builder("unsupported", "state").id("u-3").build());
				RedisMessageStore store = context.getBean(RedisMessageStore.class);
				await().atMost(Duration.ofSeconds(15))
					.until(() -> store.page("unsupported", MessageState.DEAD, 0, 10).total() == 3);
				Unsupported listener = context.getBean(Unsupported.class);
				assertThat(listener.calls).filteredOn("unsupported"::equals).hasSize(1);
				assertThat(listener.calls).filteredOn("arithmetic"::equals).hasSize(1);
				assertThat(listener.calls).filteredOn("state"::equals).hasSize(5);
			});
	}

	@Test
	void aClassThatIsNoExceptionIsRefusedAtStartupNamingTheProperty() {
		QueueContexts.runner(QueueContexts.uniquePrefix())
			.withPropertyValues("delay-queue.topics.orders.no-retry-for=java.lang.String")
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.rootCause()
				.hasMessageContaining("delay-queue.topics.orders.no-retry-for must name exception classes, but"
						+ " java.lang.String is not a Throwable"));
	}

	@Test
	void anUnknownClassIsRefusedAtStartupNamingTheProperty() {
		QueueContexts.runner(QueueContexts.uniquePrefix())
			.withPropertyValues("delay-queue.listener.no-retry-for=com.example.NoSuchException")
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.hasStackTraceContaining("Failed to bind properties under 'delay-queue.listener.no-retry-for'")
				.hasStackTraceContaining("com.example.NoSuchException"));
	}

	@Test
	void theErrorHandlerBeanDecidesAndARetriedDeliveryKnowsThePreviousErrorAndItsPriority() {
		QueueContexts.runner(QueueContexts.uniquePrefix()).withUserConfiguration(Webhooks.class).run((context) -> {
			context.getBean(DelayQueueTemplate.class)
				.send(DelayMessage.builder("webhooks", "hook").id("w-1").priority(6).header("tenant", "acme").build());
			Webhooks webhooks = context.getBean(Webhooks.class);
			await().atMost(Duration.ofSeconds(10)).until(() -> webhooks.deliveries.size() == 3);
			assertThat(webhooks.deliveries).extracting(Delivery::attempt).containsExactly(1, 2, 3);
			assertThat(webhooks.deliveries).extracting(Delivery::priority).containsOnly(6);
			assertThat(webhooks.deliveries).extracting(Delivery::previousError)
				.containsExactly(null, "java.lang.IllegalStateException: HTTP 503 on attempt 1",
						"java.lang.IllegalStateException: HTTP 503 on attempt 2");
			assertThat(webhooks.deliveries)
				.allSatisfy((delivery) -> assertThat(delivery.headers()).containsExactly(Map.entry("tenant", "acme")));
			assertThat(webhooks.failures).extracting(ListenerFailure::priority).containsOnly(6);
			RedisMessageStore store = context.getBean(RedisMessageStore.class);
			await().atMost(Duration.ofSeconds(10))
				.until(() -> store.page("webhooks", MessageState.DEAD, 0, 10).total() == 1);
		});
	}

	@Test
	void theEndpointShowsARetriedMessagesLastErrorAndOnlyTheHeadersItWasSentWith() {
		QueueContexts.runner(QueueContexts.uniquePrefix())
			.withUserConfiguration(Unsupported.class)
			.withPropertyValues("delay-queue.topics.unsupported.backoff.initial-interval=1h",
					"delay-queue.topics.unsupported.backoff.max-interval=1h")
			.run((context) -> {
				DelayQueueTemplate template = context.getBean(DelayQueueTemplate.class);
				template
					.send(DelayMessage.builder("unsupported", "state").id("e-1").priority(4).header("a", "b").build());
				RedisMessageStore store = context.getBean(RedisMessageStore.class);
				await().atMost(Duration.ofSeconds(10))
					.until(() -> store.inspect("unsupported", "e-1", 1000).state() == MessageState.SCHEDULED
							&& context.getBean(Unsupported.class).calls.size() == 1);
				DelayQueueEndpoint endpoint = new DelayQueueEndpoint(store, template,
						context.getBean(DelayQueueRuntime.class), context.getBean(DelayQueueSchedules.class));
				MessageDescriptor message = endpoint.message("unsupported", "e-1");
				assertThat(message.lastError()).isEqualTo("java.lang.IllegalStateException: state");
				assertThat(message.headers()).containsExactly(Map.entry("a", "b"));
				assertThat(message.priority()).isEqualTo(4);
				assertThat(message.attempts()).isEqualTo(1);
			});
	}

	@Test
	void aSenderCannotUseTheQueuesOwnHeaderNames() {
		assertThatExceptionOfType(InvalidMessageException.class)
			.isThrownBy(() -> DelayMessage.builder("orders", "x").header("delay-queue-error", "forged"))
			.withMessage("Header 'delay-queue-error' is reserved: names starting with 'delay-queue-' are the"
					+ " queue's own");
	}

	@Configuration(proxyBeanMethods = false)
	static class Validations {

		final List<Integer> attempts = new CopyOnWriteArrayList<>();

		@DelayListener(topic = "validated", maxAttempts = 5, noRetryFor = IllegalArgumentException.class)
		void onOrder(Delivery<String> delivery) {
			this.attempts.add(delivery.attempt());
			throw new IllegalStateException("rejected", new IllegalArgumentException("no such product"));
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class Unsupported {

		final List<String> calls = new CopyOnWriteArrayList<>();

		@DelayListener(topic = "unsupported")
		void on(String payload) {
			this.calls.add(payload);
			switch (payload) {
				case "unsupported" -> throw new UnsupportedOperationException(payload);
				case "arithmetic" -> throw new ArithmeticException(payload);
				default -> throw new IllegalStateException(payload);
			}
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class Webhooks {

		final List<Delivery<String>> deliveries = new CopyOnWriteArrayList<>();

		final List<ListenerFailure> failures = new CopyOnWriteArrayList<>();

		@DelayListener(topic = "webhooks", maxAttempts = 10)
		void on(Delivery<String> delivery) {
			this.deliveries.add(delivery);
			throw new IllegalStateException("HTTP 503 on attempt " + delivery.attempt());
		}

		/**
		 * Retries quickly twice, then gives up: the built-in policy would retry 10 times.
		 */
		@Bean
		DelayListenerErrorHandler webhookErrors() {
			return (failure) -> {
				this.failures.add(failure);
				return (failure.attempt() < 3) ? FailureAction.retryAfter(Duration.ofMillis(20))
						: FailureAction.deadLetter();
			};
		}

	}

}

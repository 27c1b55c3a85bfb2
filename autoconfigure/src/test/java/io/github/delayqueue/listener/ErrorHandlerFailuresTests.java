package io.github.delayqueue.listener;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;

import io.github.delayqueue.producer.DelayMessage;
import io.github.delayqueue.producer.DelayQueueTemplate;
import io.github.delayqueue.store.MessageState;
import io.github.delayqueue.store.MessageSummary;
import io.github.delayqueue.store.redis.RedisMessageStore;
import io.github.delayqueue.testsupport.QueueContexts;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.NoUniqueBeanDefinitionException;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * An error handler that fails itself, and the failure policy at its edges, on real Redis:
 * two handler beans, a handler throwing an {@code Error} or a checked exception (alone
 * and in a batch), a stop while it blocks, retries past the maximum attempts, and the
 * previous error across a slow-down.
 */
class ErrorHandlerFailuresTests {

	private static final String[] FAST = { "delay-queue.listener.backoff.initial-interval=10ms",
			"delay-queue.listener.visibility-timeout=30s", "delay-queue.broker.max-sleep=200ms" };

	@Test
	void twoErrorHandlerBeansFailStartupNamingBoth() {
		QueueContexts.runner(QueueContexts.uniquePrefix())
			.withUserConfiguration(TwoHandlers.class)
			.withPropertyValues(FAST)
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.hasRootCauseInstanceOf(NoUniqueBeanDefinitionException.class)
				.hasStackTraceContaining("DelayListenerErrorHandler"));
	}

	@Test
	void anErrorHandlerThrowingAnAssertionErrorFallsBackToTheBuiltInPolicy() {
		assertFallsBack(ThrowingHandler.class, "throwing");
	}

	@Test
	void anErrorHandlerThrowingACheckedExceptionSneakilyFallsBackToTheBuiltInPolicy() {
		assertFallsBack(SneakyHandler.class, "sneaky");
	}

	private static void assertFallsBack(Class<?> config, String topic) {
		QueueContexts.runner(QueueContexts.uniquePrefix())
			.withUserConfiguration(config)
			.withPropertyValues(FAST)
			.run((context) -> {
				context.getBean(DelayQueueTemplate.class).send(DelayMessage.builder(topic, "x").id("f-1").build());
				Recorder recorder = (Recorder) context.getBean(config);
				// The built-in policy retries after 10 ms; a lease expiry would take 30
				// s.
				await().dontCatchUncaughtExceptions()
					.atMost(Duration.ofSeconds(5))
					.until(() -> recorder.deliveries.size() >= 2);
				assertThat(recorder.deliveries.get(1).previousError()).startsWith("java.lang.IllegalStateException");
			});
	}

	@Test
	void aBatchWhoseErrorHandlerThrowsAnErrorDoesNotRedeliverTheMessagesThatSucceeded() {
		QueueContexts.runner(QueueContexts.uniquePrefix())
			.withUserConfiguration(BatchWithThrowingHandler.class)
			.withPropertyValues(FAST)
			.withPropertyValues("delay-queue.listener.visibility-timeout=2s")
			.run((context) -> {
				DelayQueueTemplate queue = context.getBean(DelayQueueTemplate.class);
				queue.sendAll(List.of(DelayMessage.builder("batch", "bad").id("b-1").build(),
						DelayMessage.builder("batch", "good").id("b-2").build()));
				BatchWithThrowingHandler listener = context.getBean(BatchWithThrowingHandler.class);
				await().dontCatchUncaughtExceptions()
					.atMost(Duration.ofSeconds(3))
					.until(() -> listener.calls.size() >= 1);
				// Longer than two leases: a message left unsettled would be delivered
				// again.
				await().dontCatchUncaughtExceptions()
					.during(Duration.ofSeconds(5))
					.atMost(Duration.ofSeconds(7))
					.until(() -> listener.calls.stream().filter((ids) -> ids.contains("b-2")).count() == 1);
			});
	}

	@Test
	void stopWhileTheErrorHandlerBlocksIsBoundedByTheShutdownTimeout() {
		AtomicLong closeMillis = new AtomicLong();
		String prefix = QueueContexts.uniquePrefix();
		QueueContexts.runner(prefix)
			.withUserConfiguration(BlockingHandler.class)
			.withPropertyValues(FAST)
			.withPropertyValues("delay-queue.listener.shutdown-timeout=2s")
			.run((context) -> {
				context.getBean(DelayQueueTemplate.class).send(DelayMessage.builder("blocking", "x").id("s-1").build());
				BlockingHandler config = context.getBean(BlockingHandler.class);
				await().atMost(Duration.ofSeconds(5)).until(() -> config.entered.get() > 0);
				long start = System.nanoTime();
				((ConfigurableApplicationContext) context.getSourceApplicationContext()).close();
				closeMillis.set((System.nanoTime() - start) / 1_000_000);
			});
		assertThat(closeMillis.get()).as("close took ms").isLessThan(8000);
		QueueContexts.runner(prefix).run((context) -> {
			RedisMessageStore store = context.getBean(RedisMessageStore.class);
			assertThat(store.inspect("blocking", "s-1", 10)).as("message kept").isNotNull();
		});
	}

	@Test
	void retriesPastMaxAttemptsEndInADeadLetterWithTheirAttempts() {
		QueueContexts.runner(QueueContexts.uniquePrefix())
			.withUserConfiguration(PastMax.class)
			.withPropertyValues(FAST)
			.run((context) -> {
				context.getBean(DelayQueueTemplate.class).send(DelayMessage.builder("pastmax", "x").id("p-1").build());
				RedisMessageStore store = context.getBean(RedisMessageStore.class);
				await().atMost(Duration.ofSeconds(10))
					.until(() -> store.page("pastmax", MessageState.DEAD, 0, 10).total() == 1);
				PastMax listener = context.getBean(PastMax.class);
				assertThat(listener.deliveries).extracting(Delivery::attempt).containsExactly(1, 2, 3, 4, 5);
				assertThat(store.page("pastmax", MessageState.DEAD, 0, 10).messages())
					.extracting(MessageSummary::attempts)
					.containsExactly(5);
			});
	}

	@Test
	void aSlowDownKeepsThePreviousError() {
		QueueContexts.runner(QueueContexts.uniquePrefix())
			.withUserConfiguration(SlowAfterFailure.class)
			.withPropertyValues(FAST)
			.run((context) -> {
				context.getBean(DelayQueueTemplate.class).send(DelayMessage.builder("slow", "x").id("d-1").build());
				SlowAfterFailure listener = context.getBean(SlowAfterFailure.class);
				await().atMost(Duration.ofSeconds(10)).until(() -> listener.deliveries.size() >= 3);
				assertThat(listener.deliveries).extracting(Delivery::attempt).containsExactly(1, 2, 2);
				assertThat(listener.deliveries.get(2).previousError())
					.isEqualTo("java.lang.IllegalStateException: one");
			});
	}

	abstract static class Recorder {

		final List<Delivery<String>> deliveries = new CopyOnWriteArrayList<>();

	}

	@Configuration(proxyBeanMethods = false)
	static class TwoHandlers {

		final List<String> calls = new CopyOnWriteArrayList<>();

		@DelayListener(topic = "two", maxAttempts = 2)
		void on(String payload) {
			throw new IllegalStateException(payload);
		}

		@Bean
		DelayListenerErrorHandler first() {
			return (failure) -> {
				this.calls.add("first");
				return failure.defaultAction();
			};
		}

		@Bean
		DelayListenerErrorHandler second() {
			return (failure) -> {
				this.calls.add("second");
				return failure.defaultAction();
			};
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class ThrowingHandler extends Recorder {

		@DelayListener(topic = "throwing", maxAttempts = 5)
		void on(Delivery<String> delivery) {
			this.deliveries.add(delivery);
			throw new IllegalStateException("fails");
		}

		@Bean
		DelayListenerErrorHandler handler() {
			return (failure) -> {
				throw new AssertionError("a bug in the handler");
			};
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class SneakyHandler extends Recorder {

		@DelayListener(topic = "sneaky", maxAttempts = 5)
		void on(Delivery<String> delivery) {
			this.deliveries.add(delivery);
			throw new IllegalStateException("fails");
		}

		@Bean
		DelayListenerErrorHandler handler() {
			return (failure) -> sneakyThrow(new java.io.IOException("lookup failed"));
		}

		@SuppressWarnings("unchecked")
		static <E extends Throwable> FailureAction sneakyThrow(Throwable ex) throws E {
			throw (E) ex;
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class BatchWithThrowingHandler {

		final List<List<String>> calls = new CopyOnWriteArrayList<>();

		@DelayListener(topic = "batch", maxBatchSize = "10", batchTimeout = "300ms", maxAttempts = 5)
		void on(List<Delivery<String>> batch) {
			this.calls.add(batch.stream().map(Delivery::id).toList());
			throw new BatchListenerFailedException("b-1 failed", List.of("b-1"), new IllegalStateException("bad"));
		}

		@Bean
		DelayListenerErrorHandler handler() {
			return (failure) -> {
				throw new AssertionError("a bug in the handler");
			};
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class BlockingHandler {

		final AtomicLong entered = new AtomicLong();

		@DelayListener(topic = "blocking", maxAttempts = 5)
		void on(String payload) {
			throw new IllegalStateException(payload);
		}

		@Bean
		DelayListenerErrorHandler handler() {
			return (failure) -> {
				this.entered.incrementAndGet();
				long end = System.nanoTime() + Duration.ofSeconds(30).toNanos();
				while (System.nanoTime() < end) {
					// Busy: ignores interrupts, like a handler blocked in
					// non-interruptible I/O.
					Thread.onSpinWait();
				}
				return failure.defaultAction();
			};
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class PastMax {

		final List<Delivery<String>> deliveries = new CopyOnWriteArrayList<>();

		@DelayListener(topic = "pastmax", maxAttempts = 2)
		void on(Delivery<String> delivery) {
			this.deliveries.add(delivery);
			throw new IllegalStateException("attempt " + delivery.attempt());
		}

		@Bean
		DelayListenerErrorHandler handler() {
			return (failure) -> (failure.attempt() < 5) ? FailureAction.retryAfter(Duration.ofMillis(10))
					: failure.defaultAction();
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class SlowAfterFailure {

		final List<Delivery<String>> deliveries = new CopyOnWriteArrayList<>();

		@DelayListener(topic = "slow", maxAttempts = 5)
		void on(Delivery<String> delivery) {
			this.deliveries.add(delivery);
			if (this.deliveries.size() == 1) {
				throw new IllegalStateException("one");
			}
			if (this.deliveries.size() == 2) {
				throw new SlowDownException(Duration.ofMillis(100));
			}
		}

	}

	static Map<String, String> none() {
		return Map.of();
	}

}

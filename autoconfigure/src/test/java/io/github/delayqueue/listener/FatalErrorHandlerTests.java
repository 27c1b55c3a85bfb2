package io.github.delayqueue.listener;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.delayqueue.producer.DelayMessage;
import io.github.delayqueue.producer.DelayQueueTemplate;
import io.github.delayqueue.testsupport.QueueContexts;
import org.junit.jupiter.api.Test;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static org.awaitility.Awaitility.await;

/**
 * An error handler that throws a {@link VirtualMachineError}: every message is settled
 * first (delivered again after the short backoff, not after the 30 s lease), and the
 * listener goes on delivering afterwards.
 */
class FatalErrorHandlerTests {

	@Test
	void aBatchWhoseErrorHandlerThrowsStackOverflowErrorSettlesAllAndKeepsListening() {
		QueueContexts.runner(QueueContexts.uniquePrefix())
			.withUserConfiguration(Batch.class)
			.withPropertyValues("delay-queue.listener.visibility-timeout=30s")
			.run((context) -> {
				DelayQueueTemplate queue = context.getBean(DelayQueueTemplate.class);
				Batch listener = context.getBean(Batch.class);
				queue.sendAll(List.of(DelayMessage.builder("fatal", "a").id("f-1").build(),
						DelayMessage.builder("fatal", "b").id("f-2").build()));
				await().dontCatchUncaughtExceptions()
					.atMost(Duration.ofSeconds(10))
					.until(() -> listener.calls.stream().filter((ids) -> ids.contains("f-1")).count() >= 2
							&& listener.calls.stream().filter((ids) -> ids.contains("f-2")).count() >= 2);
				queue.send(DelayMessage.builder("fatal", "c").id("f-3").build());
				await().dontCatchUncaughtExceptions()
					.atMost(Duration.ofSeconds(10))
					.until(() -> listener.calls.stream().anyMatch((ids) -> ids.contains("f-3")));
			});
	}

	@Test
	void aSingleListenerWhoseErrorHandlerThrowsOutOfMemoryErrorIsRetriedAndKeepsListening() {
		QueueContexts.runner(QueueContexts.uniquePrefix())
			.withUserConfiguration(Single.class)
			.withPropertyValues("delay-queue.listener.visibility-timeout=30s")
			.run((context) -> {
				DelayQueueTemplate queue = context.getBean(DelayQueueTemplate.class);
				Single listener = context.getBean(Single.class);
				queue.send(DelayMessage.builder("fatal1", "a").id("s-1").build());
				await().dontCatchUncaughtExceptions()
					.atMost(Duration.ofSeconds(10))
					.until(() -> listener.calls.stream().filter("s-1"::equals).count() >= 2);
				queue.send(DelayMessage.builder("fatal1", "b").id("s-2").build());
				await().dontCatchUncaughtExceptions()
					.atMost(Duration.ofSeconds(10))
					.until(() -> listener.calls.contains("s-2"));
			});
	}

	@Configuration(proxyBeanMethods = false)
	static class Batch {

		final List<List<String>> calls = new CopyOnWriteArrayList<>();

		final AtomicInteger fatal = new AtomicInteger();

		@DelayListener(topic = "fatal", maxBatchSize = "10", batchTimeout = "300ms", maxAttempts = 5)
		void on(List<Delivery<String>> batch) {
			List<String> ids = batch.stream().map(Delivery::id).toList();
			this.calls.add(ids);
			if (!ids.contains("f-3")) {
				throw new IllegalStateException("bad");
			}
		}

		@Bean
		DelayListenerErrorHandler handler() {
			return (failure) -> {
				if (this.fatal.getAndIncrement() < 2) {
					throw new StackOverflowError("handler");
				}
				return null;
			};
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class Single {

		final List<String> calls = new CopyOnWriteArrayList<>();

		final AtomicInteger fatal = new AtomicInteger();

		@DelayListener(topic = "fatal1", maxAttempts = 5)
		void on(Delivery<String> delivery) {
			this.calls.add(delivery.id());
			if (delivery.id().equals("s-1")) {
				throw new IllegalStateException("bad");
			}
		}

		@Bean
		DelayListenerErrorHandler handler() {
			return (failure) -> {
				if (this.fatal.getAndIncrement() < 1) {
					throw new OutOfMemoryError("handler");
				}
				return null;
			};
		}

	}

}

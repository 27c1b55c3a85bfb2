package io.github.delayqueue.listener;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.delayqueue.autoconfigure.DelayQueueAutoConfiguration;
import io.github.delayqueue.producer.DelayMessage;
import io.github.delayqueue.producer.DelayQueueTemplate;
import io.github.delayqueue.runtime.DelayQueueRuntime;
import io.github.delayqueue.testsupport.QueueContexts;
import org.junit.jupiter.api.Test;

import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A handler executor of the application's own that waits in {@code execute} for room (a
 * concurrency throttle, such as Spring's {@code SimpleAsyncTaskExecutor} with a
 * concurrency limit) never holds up a stop past its timeout: no message is handed to it
 * while a lock the stop needs is held, neither a message held until its due time (the
 * lookahead) nor a batch (a review found both).
 */
class HandlerExecutorStopTests {

	private static final Duration WAIT = Duration.ofSeconds(20);

	private static final Duration PATIENCE = Duration.ofSeconds(10);

	/**
	 * Concurrency 2 on an executor with room for 1: m1's handler runs until interrupted;
	 * m2, due a second later, is claimed early (lookahead 2 s), held, and at its due time
	 * handed to the executor under the lock of the fetcher's {@code DispatchQueue}, where
	 * it waits for room. The stop's {@code Fetcher.stop()} takes that lock: the stop
	 * takes about the executor's patience (10 s) instead of the 500 ms shutdown timeout.
	 */
	@Test
	void aHeldMessageWaitingForTheHandlerExecutorDoesNotHoldUpTheStopPastItsTimeout() {
		ThrottledExecutor throttled = new ThrottledExecutor(1, PATIENCE);
		RecordingListener listener = new RecordingListener();
		QueueContexts.runner(QueueContexts.uniquePrefix())
			.withBean(DelayQueueAutoConfiguration.HANDLER_EXECUTOR, Executor.class, () -> throttled)
			.withBean(RecordingListener.class, () -> listener)
			.withPropertyValues("delay-queue.listener.concurrency=2", "delay-queue.listener.shutdown-timeout=500ms",
					"delay-queue.broker.lookahead=2s", "delay-queue.broker.max-sleep=200ms")
			.run((context) -> {
				send(context, "m1", Duration.ZERO);
				await().atMost(WAIT).until(() -> listener.deliveries.size() == 1);
				// Made ready at once (within the lookahead), claimed early and held until
				// due; then handed to the executor, which has no room.
				send(context, "m2", Duration.ofSeconds(1));
				await().atMost(WAIT).until(() -> throttled.waiting.get() == 1);
				Duration stop = timedStop(context);
				assertThat(stop).as("the stop, with a 500 ms shutdown timeout").isLessThan(Duration.ofSeconds(2));
			});
	}

	/**
	 * The same with a batch listener (batches of one): m2's batch is handed to the
	 * executor under the {@code BatchAssembler}'s monitor, which
	 * {@code BatchAssembler.stop()} takes.
	 */
	@Test
	void aBatchWaitingForTheHandlerExecutorDoesNotHoldUpTheStopPastItsTimeout() {
		ThrottledExecutor throttled = new ThrottledExecutor(1, PATIENCE);
		BatchListener listener = new BatchListener();
		QueueContexts.runner(QueueContexts.uniquePrefix())
			.withBean(DelayQueueAutoConfiguration.HANDLER_EXECUTOR, Executor.class, () -> throttled)
			.withBean(BatchListener.class, () -> listener)
			.withPropertyValues("delay-queue.listener.concurrency=2", "delay-queue.listener.shutdown-timeout=500ms",
					"delay-queue.broker.max-sleep=200ms")
			.run((context) -> {
				send(context, "batched", "m1");
				await().atMost(WAIT).until(() -> listener.batches.size() == 1);
				send(context, "batched", "m2");
				await().atMost(WAIT).until(() -> throttled.waiting.get() == 1);
				Duration stop = timedStop(context);
				assertThat(stop).as("the stop, with a 500 ms shutdown timeout").isLessThan(Duration.ofSeconds(2));
			});
	}

	private static Duration timedStop(ConfigurableApplicationContext context) {
		long started = System.nanoTime();
		CompletableFuture.runAsync(context.getBean(DelayQueueRuntime.class)::stop).join();
		return Duration.ofNanos(System.nanoTime() - started);
	}

	private static void send(ConfigurableApplicationContext context, String id, Duration delay) {
		context.getBean(DelayQueueTemplate.class)
			.send(DelayMessage.builder("recorded", id).id(id).delay(delay).build());
	}

	private static void send(ConfigurableApplicationContext context, String topic, String id) {
		context.getBean(DelayQueueTemplate.class).send(DelayMessage.builder(topic, id).id(id).build());
	}

	/**
	 * Runs each task on a new daemon thread, at most {@code limit} at once: a task waits
	 * in {@code execute} for room, like a concurrency throttle, and is refused after a
	 * while. Counts the callers waiting.
	 */
	static final class ThrottledExecutor implements Executor {

		final AtomicInteger waiting = new AtomicInteger();

		private final Semaphore room;

		private final Duration patience;

		ThrottledExecutor(int limit, Duration patience) {
			this.room = new Semaphore(limit);
			this.patience = patience;
		}

		@Override
		public void execute(Runnable task) {
			this.waiting.incrementAndGet();
			try {
				if (!this.room.tryAcquire(this.patience.toMillis(), TimeUnit.MILLISECONDS)) {
					throw new RejectedExecutionException("No room within " + this.patience);
				}
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw new RejectedExecutionException(ex);
			}
			finally {
				this.waiting.decrementAndGet();
			}
			Thread thread = new Thread(() -> {
				try {
					task.run();
				}
				finally {
					this.room.release();
				}
			});
			thread.setDaemon(true);
			thread.start();
		}

	}

	/** Handles each message until interrupted (by the stop's deadline). */
	static class RecordingListener {

		final List<String> deliveries = new CopyOnWriteArrayList<>();

		final CountDownLatch release = new CountDownLatch(1);

		@DelayListener(topic = "recorded")
		void on(Delivery<String> delivery) throws InterruptedException {
			this.deliveries.add(delivery.id());
			this.release.await(1, TimeUnit.MINUTES);
		}

	}

	/** Handles each batch (of one) until interrupted (by the stop's deadline). */
	static class BatchListener {

		final List<List<String>> batches = new CopyOnWriteArrayList<>();

		final CountDownLatch release = new CountDownLatch(1);

		@DelayListener(topic = "batched", maxBatchSize = "1")
		void on(List<Delivery<String>> batch) throws InterruptedException {
			this.batches.add(batch.stream().map(Delivery::id).toList());
			this.release.await(1, TimeUnit.MINUTES);
		}

	}

}

package io.github.delayqueue.listener;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

import io.github.delayqueue.autoconfigure.DelayQueueAutoConfiguration;
import io.github.delayqueue.producer.DelayMessage;
import io.github.delayqueue.producer.DelayQueueTemplate;
import io.github.delayqueue.runtime.DelayQueueRuntime;
import io.github.delayqueue.runtime.ListenerState;
import io.github.delayqueue.store.TopicInspector;
import io.github.delayqueue.store.redis.RedisMessageStore;
import io.github.delayqueue.testsupport.QueueContexts;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A handler executor of the application's own (a bean named
 * {@code delayQueueHandlerExecutor}), which the README offers in place of the pool: one
 * that refuses a task has the message handed back and handled once it has room, and one
 * whose {@code execute} waits for room neither deadlocks the topic nor holds up its stop.
 */
@ExtendWith(OutputCaptureExtension.class)
class HandlerExecutorTests {

	private static final Duration WAIT = Duration.ofSeconds(20);

	/**
	 * Before, a task the executor refused (a bounded pool with the usual AbortPolicy) was
	 * taken for "stopping": the message stayed in hand unhandled, its lease extended for
	 * {@code max-handling-time}, with no log line, and its handler slot was lost for
	 * good. Now it is handed back at once, attempts unchanged, with a WARN naming it, and
	 * claims pause briefly before it is claimed again.
	 */
	@Test
	void aMessageTheHandlerExecutorRefusesIsHandedBackAndHandledOnceTheExecutorHasRoom(CapturedOutput output) {
		ThreadPoolExecutor oneThread = new ThreadPoolExecutor(1, 1, 1, TimeUnit.MINUTES, new SynchronousQueue<>());
		try {
			RecordingListener listener = new RecordingListener();
			QueueContexts.runner(QueueContexts.uniquePrefix())
				.withBean(DelayQueueAutoConfiguration.HANDLER_EXECUTOR, Executor.class, () -> oneThread)
				.withBean(RecordingListener.class, () -> listener)
				.withPropertyValues("delay-queue.listener.concurrency=2", "delay-queue.broker.max-sleep=200ms")
				.run((context) -> {
					send(context, "m1");
					await().atMost(WAIT).until(() -> listener.deliveries.size() == 1);
					// The pool's one thread is busy: m2's task is refused.
					send(context, "m2");
					await().atMost(WAIT)
						.until(() -> output.getOut()
							.contains(
									"Topic 'recorded' message [m2]: the handler executor refused to run the listener"));
					assertThat(context.getBean(DelayQueueRuntime.class).getListenerStates()).containsEntry("recorded",
							ListenerState.RUNNING);
					listener.release.countDown();
					await().atMost(WAIT).until(() -> listener.deliveries.size() == 2);
					assertThat(listener.deliveries).containsExactly("m1", "m2");
					assertThat(listener.attempts).as("attempts unchanged by the refusals").containsExactly(1, 1);
				});
		}
		finally {
			oneThread.shutdownNow();
		}
	}

	/**
	 * Before, the topic's executor handed tasks to the application's executor while
	 * holding its own monitor, which a finishing task takes before it returns: an
	 * executor whose {@code execute} waits for room (a concurrency throttle such as
	 * {@code SimpleAsyncTaskExecutor.setConcurrencyLimit}) with less room than the
	 * topic's concurrency deadlocked. The topic stopped delivering, and the stop waited
	 * on the same monitor far past its timeout. (The executor here gives up waiting after
	 * 10 s, so that the test ends.)
	 */
	@Test
	void aHandlerExecutorThatWaitsForRoomNeitherDeadlocksTheTopicNorHoldsUpItsStop() {
		ThrottledExecutor throttled = new ThrottledExecutor(1, Duration.ofSeconds(10));
		RecordingListener listener = new RecordingListener();
		QueueContexts.runner(QueueContexts.uniquePrefix())
			.withBean(DelayQueueAutoConfiguration.HANDLER_EXECUTOR, Executor.class, () -> throttled)
			.withBean(RecordingListener.class, () -> listener)
			.withPropertyValues("delay-queue.listener.concurrency=2", "delay-queue.listener.shutdown-timeout=500ms",
					"delay-queue.broker.max-sleep=200ms")
			.run((context) -> {
				TopicInspector topic = context.getBean(RedisMessageStore.class).inspector("recorded");
				send(context, "m1");
				await().atMost(WAIT).until(() -> listener.deliveries.size() == 1);
				// m2 is claimed and waits in the executor's execute for m1's room.
				send(context, "m2");
				await().atMost(WAIT).until(() -> topic.stats().inFlight() == 2);
				await().during(Duration.ofMillis(300)).atMost(WAIT).until(() -> listener.deliveries.size() == 1);
				listener.release.countDown();
				await().atMost(WAIT).until(() -> listener.deliveries.size() == 2);
				long started = System.nanoTime();
				CompletableFuture.runAsync(context.getBean(DelayQueueRuntime.class)::stop).join();
				Duration stop = Duration.ofNanos(System.nanoTime() - started);
				assertThat(stop).as("the stop, with a 500 ms shutdown timeout").isLessThan(Duration.ofSeconds(2));
			});
	}

	private static void send(ConfigurableApplicationContext context, String id) {
		context.getBean(DelayQueueTemplate.class).send(DelayMessage.builder("recorded", id).id(id).build());
	}

	/**
	 * Runs each task on a new daemon thread, at most {@code limit} at once: a task waits
	 * in {@code execute} for room, like a concurrency throttle, and is refused after a
	 * while.
	 */
	static final class ThrottledExecutor implements Executor {

		private final Semaphore room;

		private final Duration patience;

		ThrottledExecutor(int limit, Duration patience) {
			this.room = new Semaphore(limit);
			this.patience = patience;
		}

		@Override
		public void execute(Runnable task) {
			try {
				if (!this.room.tryAcquire(this.patience.toMillis(), TimeUnit.MILLISECONDS)) {
					throw new RejectedExecutionException("No room within " + this.patience);
				}
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw new RejectedExecutionException(ex);
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

	static class RecordingListener {

		final List<String> deliveries = new CopyOnWriteArrayList<>();

		final List<Integer> attempts = new CopyOnWriteArrayList<>();

		final CountDownLatch release = new CountDownLatch(1);

		@DelayListener(topic = "recorded")
		void on(Delivery<String> delivery) throws InterruptedException {
			this.deliveries.add(delivery.id());
			this.attempts.add(delivery.attempt());
			this.release.await(1, TimeUnit.MINUTES);
		}

	}

}

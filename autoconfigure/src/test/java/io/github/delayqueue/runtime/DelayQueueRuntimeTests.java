package io.github.delayqueue.runtime;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executor;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.delayqueue.autoconfigure.DelayQueueAutoConfiguration;
import io.github.delayqueue.producer.DelayQueueTemplate;
import io.github.delayqueue.listener.DelayListener;
import io.github.delayqueue.testsupport.QueueContexts;
import org.junit.jupiter.api.Test;

import org.springframework.scheduling.concurrent.CustomizableThreadFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The runtime's threads: a few shared ones however many topics listen, which keep an
 * application whose only work is its listeners running, and handler threads only while
 * there is work.
 */
class DelayQueueRuntimeTests {

	@Test
	void runningListenersKeepTheJvmAliveWithNonDaemonSchedulerThreads() {
		QueueContexts.runner(QueueContexts.uniquePrefix()).withBean(Notes.class).run((context) -> {
			context.getBean(DelayQueueTemplate.class).send("notes", "hello", Duration.ZERO);
			await().atMost(Duration.ofSeconds(10)).until(() -> context.getBean(Notes.class).received.contains("hello"));
			assertThat(threads("delay-queue-scheduler-")).isNotEmpty().noneMatch(Thread::isDaemon);
		});
		await().atMost(Duration.ofSeconds(10)).until(() -> threads("delay-queue-scheduler-").isEmpty());
	}

	@Test
	void manyTopicsShareTheSchedulerThreads() {
		QueueContexts.runner(QueueContexts.uniquePrefix())
			.withBean(Notes.class)
			.withBean(Orders.class)
			.run((context) -> {
				int schedulerThreads = Math.max(4, 4 * Runtime.getRuntime().availableProcessors());
				assertThat(threads("delay-queue-scheduler-")).hasSizeLessThanOrEqualTo(schedulerThreads);
				assertThat(threads("delay-queue-handler-")).as("no handler thread before there is work").isEmpty();
			});
	}

	@Test
	void topicsShareTheHandlerThreadsWhichEndWithTheRuntime() {
		QueueContexts.runner(QueueContexts.uniquePrefix())
			.withBean(Notes.class)
			.withBean(Orders.class)
			.run((context) -> {
				DelayQueueTemplate template = context.getBean(DelayQueueTemplate.class);
				for (int i = 0; i < 5; i++) {
					template.send("notes", "n" + i, Duration.ZERO);
					template.send("orders", "o" + i, Duration.ZERO);
				}
				Notes notes = context.getBean(Notes.class);
				Orders orders = context.getBean(Orders.class);
				await().atMost(Duration.ofSeconds(10))
					.until(() -> notes.received.size() == 5 && orders.threads.size() == 5);
				assertThat(notes.threads).allMatch((name) -> name.startsWith("delay-queue-handler-"));
				assertThat(orders.threads).allMatch((name) -> name.startsWith("delay-queue-handler-"));
			});
		await().atMost(Duration.ofSeconds(10)).until(() -> threads("delay-queue-handler-").isEmpty());
	}

	@Test
	void handlersRunOnTheApplicationsHandlerExecutorWithinEachTopicsConcurrency() {
		QueueContexts.runner(QueueContexts.uniquePrefix())
			.withBean(SlowNotes.class)
			.withBean(DelayQueueAutoConfiguration.HANDLER_EXECUTOR, Executor.class,
					() -> Executors.newCachedThreadPool(new CustomizableThreadFactory("own-handler-")))
			.withPropertyValues("delay-queue.topics.slow-notes.concurrency=2", "delay-queue.listener.prefetch=10")
			.run((context) -> {
				DelayQueueTemplate template = context.getBean(DelayQueueTemplate.class);
				for (int i = 0; i < 8; i++) {
					template.send("slow-notes", "n" + i, Duration.ZERO);
				}
				SlowNotes notes = context.getBean(SlowNotes.class);
				await().atMost(Duration.ofSeconds(10)).until(() -> notes.received.size() == 8);
				assertThat(notes.threads).allMatch((name) -> name.startsWith("own-handler-"));
				assertThat(notes.mostAtOnce.get()).isBetween(1, 2);
				assertThat(notes.threads).noneMatch((name) -> name.startsWith("delay-queue-handler-"));
			});
	}

	private static List<Thread> threads(String prefix) {
		return Thread.getAllStackTraces()
			.keySet()
			.stream()
			.filter((thread) -> thread.getName().startsWith(prefix) && thread.isAlive())
			.toList();
	}

	static class Notes {

		final List<String> received = new CopyOnWriteArrayList<>();

		final List<String> threads = new CopyOnWriteArrayList<>();

		@DelayListener(topic = "notes")
		void on(String payload) {
			this.threads.add(Thread.currentThread().getName());
			this.received.add(payload);
		}

	}

	static class SlowNotes {

		final List<String> received = new CopyOnWriteArrayList<>();

		final List<String> threads = new CopyOnWriteArrayList<>();

		final AtomicInteger running = new AtomicInteger();

		final AtomicInteger mostAtOnce = new AtomicInteger();

		@DelayListener(topic = "slow-notes")
		void on(String payload) throws InterruptedException {
			this.mostAtOnce.accumulateAndGet(this.running.incrementAndGet(), Math::max);
			this.threads.add(Thread.currentThread().getName());
			Thread.sleep(50);
			this.running.decrementAndGet();
			this.received.add(payload);
		}

	}

	static class Orders {

		final List<String> threads = new CopyOnWriteArrayList<>();

		@DelayListener(topic = "orders")
		void on(String payload) {
			this.threads.add(Thread.currentThread().getName());
		}

	}

}

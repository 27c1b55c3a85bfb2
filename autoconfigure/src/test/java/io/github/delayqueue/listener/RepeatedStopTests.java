package io.github.delayqueue.listener;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import io.github.delayqueue.producer.DelayMessage;
import io.github.delayqueue.producer.DelayQueueTemplate;
import io.github.delayqueue.runtime.DelayQueueRuntime;
import io.github.delayqueue.store.TopicStats;
import io.github.delayqueue.store.redis.RedisMessageStore;
import io.github.delayqueue.testsupport.QueueContexts;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A stop asked while another stop still waits for the handlers (the application stops the
 * runtime itself, say from an endpoint, and its context closes meanwhile) returned at
 * once, "not running": the context then destroyed the Redis connection factory under the
 * first stop, whose hand-back of the unfinished message failed, and the message stayed
 * leased until its lease expired and, on its last attempt, was dead-lettered though its
 * handler had been cut off. A second stop must return only once the first has finished,
 * within the shutdown timeout, as a second pause does.
 */
class RepeatedStopTests {

	private static final Duration WAIT = Duration.ofSeconds(20);

	@Test
	void aSecondStopWhileTheFirstWaitsForTheHandlersReturnsOnlyOnceTheUnfinishedMessageIsHandedBack() {
		BlockingListener listener = new BlockingListener();
		QueueContexts.runner(QueueContexts.uniquePrefix())
			.withBean(BlockingListener.class, () -> listener)
			.withPropertyValues("delay-queue.listener.shutdown-timeout=2s", "delay-queue.broker.max-sleep=200ms")
			.run((context) -> {
				DelayQueueRuntime runtime = context.getBean(DelayQueueRuntime.class);
				RedisMessageStore store = context.getBean(RedisMessageStore.class);
				context.getBean(DelayQueueTemplate.class).send(DelayMessage.builder("stopped", "m1").id("m1").build());
				await().atMost(WAIT).until(() -> listener.deliveries.size() == 1);
				CompletableFuture<Void> first = CompletableFuture.runAsync(runtime::stop);
				await().pollInterval(Duration.ofMillis(5)).atMost(WAIT).until(() -> !runtime.isRunning());
				runtime.stop();
				TopicStats stats = store.inspector("stopped").stats();
				assertThat(stats.ready()).as("handed back when the second stop returned").isOne();
				// The first stop's future completes on its own thread, just after the
				// stop
				// it ran has finished: what the second waited for.
				assertThat(first).as("the first stop").succeedsWithin(Duration.ofSeconds(1));
			});
	}

	static class BlockingListener {

		final List<String> deliveries = new CopyOnWriteArrayList<>();

		@DelayListener(topic = "stopped")
		void on(Delivery<String> delivery) throws InterruptedException {
			this.deliveries.add(delivery.id());
			// Works until interrupted by the stop's deadline.
			new CountDownLatch(1).await(5, TimeUnit.MINUTES);
		}

	}

}

package io.github.delayqueue.listener;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import io.github.delayqueue.producer.DelayMessage;
import io.github.delayqueue.producer.DelayQueueTemplate;
import io.github.delayqueue.runtime.DelayQueueRuntime;
import io.github.delayqueue.test.redis.FaultyRedisProxy;
import io.github.delayqueue.test.redis.TestRedis;
import io.github.delayqueue.testsupport.QueueContexts;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The wake-up signals across an outage (review 21b): stops and starts while Redis does
 * not answer stay within their timeouts, and messages are delivered once it answers.
 */
class WakeUpSignalOutageTests {

	@Test
	void restartsWhileRedisDoesNotAnswerStayWithinTheirTimeoutsAndDeliverOnceRedisAnswers() throws Exception {
		TestRedis redis = TestRedis.shared();
		Listener listener = new Listener();
		try (FaultyRedisProxy proxy = FaultyRedisProxy.start(redis.host(), redis.port())) {
			QueueContexts.runner(QueueContexts.uniquePrefix(), proxy)
				.withBean(Listener.class, () -> listener)
				.withPropertyValues("delay-queue.producer.send-timeout=1s", "delay-queue.listener.shutdown-timeout=2s",
						"delay-queue.broker.max-sleep=200ms")
				.run((context) -> {
					DelayQueueRuntime runtime = context.getBean(DelayQueueRuntime.class);
					proxy.pause();
					runtime.stop();
					for (int i = 0; i < 3; i++) {
						long start = System.nanoTime();
						runtime.start();
						runtime.stop();
						assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(5));
					}
					proxy.resume();
					runtime.start();
					context.getBean(DelayQueueTemplate.class)
						.send(DelayMessage.builder("outage", "m1").id("m1").build());
					await().atMost(Duration.ofSeconds(30)).until(() -> listener.deliveries.contains("m1"));
				});
		}
	}

	static class Listener {

		final List<String> deliveries = new CopyOnWriteArrayList<>();

		@DelayListener(topic = "outage")
		void on(Delivery<String> delivery) {
			this.deliveries.add(delivery.id());
		}

	}

}

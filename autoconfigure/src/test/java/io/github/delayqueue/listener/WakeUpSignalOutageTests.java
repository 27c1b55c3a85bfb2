package io.github.delayqueue.listener;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import io.github.delayqueue.core.DelayMessage;
import io.github.delayqueue.core.DelayQueueTemplate;
import io.github.delayqueue.runtime.DelayQueueRuntime;
import io.github.delayqueue.test.redis.TestRedis;
import io.github.delayqueue.testsupport.FaultyRedisProxy;
import io.github.delayqueue.testsupport.QueueContexts;
import io.github.delayqueue.testsupport.TcpForwarder;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The wake-up signals across an outage (review 21b): an application started while Redis
 * was down is woken by signals once it is back, not only by its own schedule, and stops
 * and starts while Redis does not answer stay within their timeouts.
 */
class WakeUpSignalOutageTests {

	@Test
	void anApplicationStartedWhileRedisRefusedConnectionsIsWokenBySignalsOnceRedisIsBack() throws Exception {
		TestRedis redis = TestRedis.shared();
		int port = TcpForwarder.freePort();
		Listener listener = new Listener();
		QueueContexts
			.runner(QueueContexts.uniquePrefix(), "spring.data.redis.host=127.0.0.1", "spring.data.redis.port=" + port,
					"spring.data.redis.database=" + redis.database(),
					"spring.data.redis.username=" + ((redis.username() != null) ? redis.username() : ""),
					"spring.data.redis.password=" + ((redis.password() != null) ? redis.password() : ""))
			.withBean(Listener.class, () -> listener)
			// Their own schedule would wake them only after 30 s.
			.withPropertyValues("delay-queue.producer.send-timeout=1s", "delay-queue.listener.shutdown-timeout=2s",
					"delay-queue.broker.max-sleep=30s", "delay-queue.listener.idle-check-interval=30s")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				try (TcpForwarder redisBack = TcpForwarder.start(port, redis.host(), redis.port())) {
					DelayQueueTemplate template = context.getBean(DelayQueueTemplate.class);
					await().atMost(Duration.ofSeconds(20))
						.ignoreExceptions()
						.until(() -> template.send(DelayMessage.builder("outage", "warm").id("warm").build()) != null);
					await().atMost(Duration.ofSeconds(40)).until(() -> listener.deliveries.contains("warm"));
					long sent = System.nanoTime();
					template.send(DelayMessage.builder("outage", "m1").id("m1").build());
					await().atMost(Duration.ofSeconds(10)).until(() -> listener.deliveries.contains("m1"));
					assertThat(Duration.ofNanos(System.nanoTime() - sent)).isLessThan(Duration.ofSeconds(5));
				}
			});
	}

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

package io.github.delayqueue.listener;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;

import io.github.delayqueue.producer.DelayMessage;
import io.github.delayqueue.producer.DelayQueueTemplate;
import io.github.delayqueue.store.redis.RedisMessageStore;
import io.github.delayqueue.store.redis.TopicKeys;
import io.github.delayqueue.test.redis.FaultyRedisProxy;
import io.github.delayqueue.test.redis.TestRedis;
import io.github.delayqueue.testsupport.QueueContexts;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Leases of many messages in hand, with Redis a few milliseconds away (through a proxy
 * that holds every reply): all of them are kept while their handlers run for several
 * visibility timeouts.
 */
@ExtendWith(OutputCaptureExtension.class)
class LeasesAtLatencyTests {

	private static final int MESSAGES = 1000;

	@Test
	void aThousandMessagesInHandFourMillisecondsFromRedisKeepTheirLeasesAndAreDeliveredOnce(CapturedOutput output) {
		TestRedis redis = TestRedis.shared();
		try (FaultyRedisProxy proxy = FaultyRedisProxy.start(redis.host(), redis.port())) {
			proxy.latency(Duration.ofMillis(4));
			String prefix = QueueContexts.uniquePrefix();
			List<String> ids = IntStream.range(0, MESSAGES).mapToObj((i) -> "m" + i).toList();
			QueueContexts.runner(prefix, proxy)
				.run((context) -> context.getBean(DelayQueueTemplate.class)
					.sendAll(ids.stream().map((id) -> DelayMessage.builder("held", id).id(id).build()).toList()));
			// Two batch listeners of 500 hold all 1,000 for three visibility timeouts.
			QueueContexts.runner(prefix, proxy)
				.withUserConfiguration(HoldingListener.class)
				.withPropertyValues("delay-queue.topics.held.concurrency=2",
						"delay-queue.topics.held.max-batch-size=500", "delay-queue.topics.held.batch-timeout=2s",
						"delay-queue.listener.visibility-timeout=3s", "delay-queue.broker.max-sleep=200ms")
				.run((context) -> {
					HoldingListener listener = context.getBean(HoldingListener.class);
					await().atMost(Duration.ofSeconds(60)).until(() -> listener.finished.getCount() == 0);
					TopicKeys keys = context.getBean(RedisMessageStore.class).keys("held");
					StringRedisTemplate template = context.getBean(StringRedisTemplate.class);
					// Until all are acknowledged, or a message came twice.
					await().atMost(Duration.ofSeconds(30))
						.until(() -> !Boolean.TRUE.equals(template.hasKey(keys.messages()))
								|| listener.deliveries.values().stream().anyMatch((count) -> count.get() > 1));
					assertThat(listener.deliveries).as("every message delivered").hasSize(MESSAGES);
					assertThat(listener.deliveries.values()).as("each once")
						.allSatisfy((count) -> assertThat(count).hasValue(1));
					assertThat(output).doesNotContain("lost its lease").doesNotContain("lease expired");
				});
		}
	}

	@Configuration(proxyBeanMethods = false)
	static class HoldingListener {

		final Map<String, AtomicInteger> deliveries = new ConcurrentHashMap<>();

		final CountDownLatch finished = new CountDownLatch(MESSAGES);

		@DelayListener(topic = "held")
		void on(List<Delivery<String>> batch) throws InterruptedException {
			batch.forEach((delivery) -> this.deliveries.computeIfAbsent(delivery.id(), (id) -> new AtomicInteger())
				.incrementAndGet());
			// Stands for slow work: three visibility timeouts.
			new CountDownLatch(1).await(9, TimeUnit.SECONDS);
			batch.forEach((delivery) -> this.finished.countDown());
		}

	}

}

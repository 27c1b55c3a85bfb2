package io.github.delayqueue.listener;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
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

import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Review 21: with Redis 5-10 ms away and replies to script calls lost after Redis ran
 * them, the listener still delivers every message, never the same one to two handlers at
 * once, and stops within its shutdown timeout.
 */
class LostRepliesTests {

	private static final int MESSAGES = 150;

	@Test
	void lostScriptRepliesAtSevenMillisecondsLatencyLoseNothingNeverOverlapADeliveryAndStopInTime() {
		TestRedis redis = TestRedis.shared();
		try (FaultyRedisProxy proxy = FaultyRedisProxy.start(redis.host(), redis.port())) {
			proxy.latency(Duration.ofMillis(7));
			String prefix = QueueContexts.uniquePrefix();
			List<String> ids = IntStream.range(0, MESSAGES).mapToObj((i) -> "m" + i).toList();
			QueueContexts.runner(prefix, proxy)
				.run((context) -> context.getBean(DelayQueueTemplate.class)
					.sendAll(ids.stream().map((id) -> DelayMessage.builder("lossy", id).id(id).build()).toList()));
			QueueContexts.runner(prefix, proxy)
				.withUserConfiguration(Listener.class)
				.withPropertyValues("delay-queue.topics.lossy.concurrency=4",
						"delay-queue.listener.visibility-timeout=2s", "delay-queue.listener.shutdown-timeout=2s",
						"delay-queue.broker.max-sleep=200ms")
				.run((context) -> {
					Listener listener = context.getBean(Listener.class);
					int fired = 0;
					for (int i = 0; i < 6; i++) {
						FaultyRedisProxy.Fault fault = proxy.dropNextReplyTo(FaultyRedisProxy.named("EVALSHA", "EVAL"));
						if (fault.awaitFired(Duration.ofSeconds(5))) {
							fired++;
						}
						else {
							fault.cancel();
						}
						Thread.sleep(150);
					}
					TopicKeys keys = context.getBean(RedisMessageStore.class).keys("lossy");
					StringRedisTemplate template = context.getBean(StringRedisTemplate.class);
					await().atMost(Duration.ofSeconds(60))
						.until(() -> !Boolean.TRUE.equals(template.hasKey(keys.messages())));
					assertThat(fired).as("lost replies").isPositive();
					assertThat(listener.deliveries).as("every message delivered").hasSize(MESSAGES);
					assertThat(listener.overlaps).as("deliveries of one message at once").hasValue(0);
					// Messages come in flight for 60 ms each; stopping must take at most
					// the shutdown timeout (2 s) plus a margin.
					proxy.dropNextReplyTo(FaultyRedisProxy.named("EVALSHA", "EVAL"));
					long started = System.nanoTime();
					context.close();
					assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(4));
				});
		}
	}

	@Configuration(proxyBeanMethods = false)
	static class Listener {

		final Map<String, AtomicInteger> deliveries = new ConcurrentHashMap<>();

		final Set<String> inHand = ConcurrentHashMap.newKeySet();

		final AtomicInteger overlaps = new AtomicInteger();

		@DelayListener(topic = "lossy")
		void on(Delivery<String> delivery) throws InterruptedException {
			if (!this.inHand.add(delivery.id())) {
				this.overlaps.incrementAndGet();
			}
			try {
				this.deliveries.computeIfAbsent(delivery.id(), (id) -> new AtomicInteger()).incrementAndGet();
				Thread.sleep(60);
			}
			finally {
				this.inHand.remove(delivery.id());
			}
		}

	}

}

package io.github.delayqueue.listener;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;

import io.github.delayqueue.producer.DelayMessage;
import io.github.delayqueue.producer.DelayQueueTemplate;
import io.github.delayqueue.testsupport.QueueContexts;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import io.github.delayqueue.store.redis.RedisMessageStore;
import io.github.delayqueue.store.redis.TopicKeys;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Messages claimed ahead that wait for a handler (prefetch, or held until due by the
 * lookahead) are never delivered twice when the handlers turn slow: a message that waited
 * longer than the maximum handling time, after which its lease is no longer extended, is
 * not started here but delivered again once its lease expires. Scaled down (lease 1 s,
 * maximum handling time 1.5 s, 30 handlers of 100 ms after 100 fast ones: the last slow
 * ones wait twice the maximum handling time).
 */
class WaitingForAHandlerTests {

	/** 100 fast ones, then 30 slow ones. */
	private static final int MESSAGES = 130;

	@ParameterizedTest
	@CsvSource({ "256, 0", "0, 0", "0, 20ms" })
	void aMessageWaitingForAHandlerIsNotDeliveredTwice(int prefetch, String lookahead) {
		QueueContexts.runner(QueueContexts.uniquePrefix())
			.withBean(FastThenSlowListener.class)
			.withPropertyValues("delay-queue.listener.prefetch=" + prefetch,
					"delay-queue.listener.visibility-timeout=1s", "delay-queue.listener.max-handling-time=1500ms",
					"delay-queue.broker.lookahead=" + lookahead)
			.run((context) -> {
				FastThenSlowListener listener = context.getBean(FastThenSlowListener.class);
				Instant dueAt = Instant.now().plusMillis(500);
				List<DelayMessage> messages = IntStream.range(0, MESSAGES)
					.mapToObj((i) -> DelayMessage.builder("jobs", (i < 100) ? "fast" : "slow")
						.dueAt(dueAt.plusMillis(i))
						.build())
					.toList();
				StringRedisTemplate redis = context.getBean(StringRedisTemplate.class);
				TopicKeys keys = context.getBean(RedisMessageStore.class).keys("jobs");
				long[] mostInFlight = new long[1];
				context.getBean(DelayQueueTemplate.class).sendAll(messages);
				await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(20)).until(() -> {
					Long inFlight = redis.opsForZSet().zCard(keys.inFlight());
					mostInFlight[0] = Math.max(mostInFlight[0], (inFlight != null) ? inFlight : 0);
					return listener.deliveries.size() == MESSAGES;
				});
				// Lapsed leases would bring messages back, to be delivered again: wait
				// until none is in flight for a while.
				await().during(Duration.ofSeconds(2))
					.atMost(Duration.ofSeconds(60))
					.until(() -> Long.valueOf(0).equals(redis.opsForZSet().zCard(keys.inFlight())));
				long twice = listener.deliveries.values().stream().filter((count) -> count.get() > 1).count();
				assertThat(twice).isZero();
			});
	}

	static class FastThenSlowListener {

		final Map<String, AtomicInteger> deliveries = new ConcurrentHashMap<>();

		@DelayListener(topic = "jobs")
		void on(Delivery<String> delivery) throws InterruptedException {
			this.deliveries.computeIfAbsent(delivery.id(), (id) -> new AtomicInteger()).incrementAndGet();
			if (delivery.payload().equals("slow")) {
				// Stands for slow work.
				Thread.sleep(100);
			}
		}

	}

}

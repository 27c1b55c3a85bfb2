package io.github.delayqueue.store.redis;

import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import io.github.delayqueue.store.WakeUpListener;
import io.github.delayqueue.test.redis.TestRedis;
import io.github.delayqueue.testsupport.FaultyRedisProxy;
import io.github.delayqueue.testsupport.QueueContexts;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The wake-up signal subscription on the prefix's channel: it never holds up its caller
 * longer than the store's timeout, Redis answering or not (review 21), and once Redis
 * answers the signals arrive.
 */
class RedisSignalsTests {

	@Test
	void aSubscriptionRedisDoesNotAnswerReturnsWithinTheTimeoutAndSubscribesOnceRedisAnswers() throws Exception {
		TestRedis redis = TestRedis.shared();
		try (FaultyRedisProxy proxy = FaultyRedisProxy.start(redis.host(), redis.port())) {
			QueueContexts.runner(QueueContexts.uniquePrefix(), proxy)
				.withPropertyValues("delay-queue.producer.send-timeout=1s")
				.run((context) -> {
					RedisMessageStore store = context.getBean(RedisMessageStore.class);
					store.ping();
					Signals signals = new Signals();
					proxy.pause();
					long start = System.nanoTime();
					AutoCloseable subscription = store.subscribe(List.of("orders"), signals);
					try {
						assertThat(Duration.ofNanos(System.nanoTime() - start))
							.isLessThan(store.timeout().plusSeconds(2));
						proxy.resume();
						StringRedisTemplate template = context.getBean(StringRedisTemplate.class);
						await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
							template.convertAndSend(store.signalChannel(), "rorders");
							assertThat(signals.ready).contains("orders");
						});
					}
					finally {
						subscription.close();
					}
				});
		}
	}

	@Test
	void signalsReachTheListenerByKind() throws Exception {
		QueueContexts.runner(QueueContexts.uniquePrefix()).run((context) -> {
			RedisMessageStore store = context.getBean(RedisMessageStore.class);
			Signals signals = new Signals();
			try (AutoCloseable subscription = store.subscribe(List.of("orders"), signals)) {
				StringRedisTemplate template = context.getBean(StringRedisTemplate.class);
				template.convertAndSend(store.signalChannel(), "borders");
				template.convertAndSend(store.signalChannel(), "rinvoices");
				template.convertAndSend(store.signalChannel(), "");
				template.convertAndSend(store.signalChannel(), "xorders");
				await().atMost(Duration.ofSeconds(10))
					.untilAsserted(() -> assertThat(signals.ready).containsExactly("invoices"));
				assertThat(signals.earlier).containsExactly("orders");
			}
		});
	}

	static final class Signals implements WakeUpListener {

		final Set<String> earlier = ConcurrentHashMap.newKeySet();

		final Set<String> ready = ConcurrentHashMap.newKeySet();

		@Override
		public void earlierMessage(String partition) {
			this.earlier.add(partition);
		}

		@Override
		public void readyMessages(String partition) {
			this.ready.add(partition);
		}

	}

}

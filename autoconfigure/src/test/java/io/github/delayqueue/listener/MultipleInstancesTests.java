package io.github.delayqueue.listener;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.delayqueue.producer.DelayMessage;
import io.github.delayqueue.producer.DelayQueueTemplate;
import io.github.delayqueue.producer.SendResult;
import io.github.delayqueue.store.redis.RedisMessageStore;
import io.github.delayqueue.testsupport.QueueContexts;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Two independent application contexts, each with four consumer threads, a prefetch of
 * eight and its own broker, on one Redis: every message is delivered exactly once, never
 * before its due time.
 */
class MultipleInstancesTests {

	private static final int MESSAGES = 10_000;

	@Test
	void tenThousandMessagesWithRandomDelaysAreDeliveredExactlyOnceAcrossTwoInstances() {
		String prefix = QueueContexts.uniquePrefix();
		Ledger ledger = new Ledger();
		ApplicationContextRunner runner = QueueContexts.runner(prefix)
			.withBean(Ledger.class, () -> ledger)
			.withBean(LedgerListener.class)
			.withPropertyValues("delay-queue.listener.concurrency=4", "delay-queue.listener.prefetch=8");
		runner.run((first) -> runner.run((second) -> {
			DelayQueueTemplate template = first.getBean(DelayQueueTemplate.class);
			Random random = new Random(42);
			List<DelayMessage> batch = new ArrayList<>();
			for (int i = 0; i < MESSAGES; i++) {
				batch.add(
						DelayMessage.builder("ledger", "m" + i).delay(Duration.ofMillis(random.nextInt(3000))).build());
				if (batch.size() == 500) {
					record(ledger, template.sendAll(batch));
					batch.clear();
				}
			}
			await().atMost(Duration.ofSeconds(90)).until(() -> ledger.deliveries.get() >= MESSAGES);
			assertThat(ledger.counts).hasSize(MESSAGES);
			assertThat(ledger.counts.values()).containsOnly(1);
			assertThat(ledger.early).isEmpty();
			assertThat(ledger.instances).hasSize(2);
			assertThat(remainingKeys(first, prefix)).isEmpty();
		}));
	}

	@Test
	void withTheDefaultPrefetchSlowHandlersClaimNothingAheadSoTwoInstancesShareABacklog() {
		String prefix = QueueContexts.uniquePrefix();
		Map<Object, AtomicInteger> handledBy = new ConcurrentHashMap<>();
		ApplicationContextRunner runner = QueueContexts.runner(prefix)
			.withBean(SlowListener.class, () -> new SlowListener(handledBy));
		runner.run((first) -> runner.run((second) -> {
			List<DelayMessage> backlog = new ArrayList<>();
			for (int i = 0; i < 20; i++) {
				backlog.add(DelayMessage.builder("slow", "m" + i).build());
			}
			first.getBean(DelayQueueTemplate.class).sendAll(backlog);
			await().atMost(Duration.ofSeconds(30))
				.until(() -> handledBy.values().stream().mapToInt(AtomicInteger::get).sum() == 20);
			// A listener that kept 256 ahead would have taken nearly all of them.
			assertThat(handledBy).hasSize(2);
			assertThat(handledBy.values()).allSatisfy((count) -> assertThat(count.get()).isGreaterThanOrEqualTo(5));
		}));
	}

	private static void record(Ledger ledger, List<SendResult> results) {
		for (SendResult result : results) {
			assertThat(result.duplicate()).isFalse();
			ledger.dueAt.put(result.id(), result.dueAt());
		}
	}

	private static List<String> remainingKeys(ConfigurableApplicationContext context, String prefix) {
		StringRedisTemplate redis = context.getBean(StringRedisTemplate.class);
		return context.getBean(RedisMessageStore.class)
			.keys("ledger")
			.all()
			.stream()
			.filter((key) -> Boolean.TRUE.equals(redis.hasKey(key)))
			.toList();
	}

	static class Ledger {

		final Map<String, Instant> dueAt = new ConcurrentHashMap<>();

		final Map<String, Integer> counts = new ConcurrentHashMap<>();

		final Map<String, Instant> early = new ConcurrentHashMap<>();

		final Map<Object, Boolean> instances = new ConcurrentHashMap<>();

		final AtomicInteger deliveries = new AtomicInteger();

	}

	/** Takes 100 ms a message, and counts the messages of each instance. */
	static class SlowListener {

		private final Map<Object, AtomicInteger> handledBy;

		SlowListener(Map<Object, AtomicInteger> handledBy) {
			this.handledBy = handledBy;
		}

		@DelayListener(topic = "slow")
		void on(String payload) throws InterruptedException {
			Thread.sleep(100);
			this.handledBy.computeIfAbsent(this, (instance) -> new AtomicInteger()).incrementAndGet();
		}

	}

	static class LedgerListener {

		private final Ledger ledger;

		LedgerListener(Ledger ledger) {
			this.ledger = ledger;
		}

		@DelayListener(topic = "ledger")
		void on(Delivery<String> delivery) {
			Instant now = Instant.now();
			// Due times come from the Redis clock, which is this machine's clock here.
			if (now.isBefore(delivery.dueAt())) {
				this.ledger.early.put(delivery.id(), now);
			}
			this.ledger.counts.merge(delivery.id(), 1, Integer::sum);
			this.ledger.instances.put(this, true);
			this.ledger.deliveries.incrementAndGet();
		}

	}

}

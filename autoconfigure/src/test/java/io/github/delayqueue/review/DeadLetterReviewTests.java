package io.github.delayqueue.review;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import io.github.delayqueue.producer.DelayMessage;
import io.github.delayqueue.producer.DelayQueueTemplate;
import io.github.delayqueue.listener.DelayListener;
import io.github.delayqueue.store.ClaimedMessage;
import io.github.delayqueue.store.ReplayResult;
import io.github.delayqueue.store.TopicStats;
import io.github.delayqueue.store.redis.RedisMessageStore;
import io.github.delayqueue.testsupport.QueueContexts;
import io.github.delayqueue.testsupport.Transitions;
import org.junit.jupiter.api.Test;

import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Adversarial review of the dead-letter side of issue 34 (retention, dead-letter queues,
 * remembered ids), on real Redis: each test is a hole the review looked for.
 */
class DeadLetterReviewTests {

	private static final Duration WAIT = Duration.ofSeconds(15);

	@Test
	void aPartitionedTopicKeepsNoMoreDeadLettersThanItsMaxCount() {
		QueueContexts.runner(QueueContexts.uniquePrefix())
			.withUserConfiguration(RefusedOrders.class)
			.withPropertyValues("delay-queue.topics.orders.partitions=3",
					"delay-queue.topics.orders.dead-letters.max-count=5")
			.run((context) -> {
				DelayQueueTemplate template = context.getBean(DelayQueueTemplate.class);
				RedisMessageStore store = context.getBean(RedisMessageStore.class);
				List<DelayMessage> messages = new ArrayList<>();
				for (int i = 0; i < 30; i++) {
					messages.add(DelayMessage.builder("orders", "order " + i).id("o-" + i).build());
				}
				template.sendAll(messages);
				RefusedOrders refused = context.getBean(RefusedOrders.class);
				await().atMost(WAIT).until(() -> refused.seen.size() == 30 && pending(store.stats("orders")) == 0);
				assertThat(store.stats("orders").dead()).as("dead letters kept by the topic").isLessThanOrEqualTo(5);
			});
	}

	@Test
	void anOlderDeadLetterOfARememberedIdIsNotReplayedUnderTheNameItWasKeptAs() {
		QueueContexts.runner(QueueContexts.uniquePrefix()).run((context) -> {
			DelayQueueTemplate template = context.getBean(DelayQueueTemplate.class);
			RedisMessageStore store = context.getBean(RedisMessageStore.class);
			// pay-1 dies twice: the first dead letter is kept as pay-1~<time it died>.
			template.send(payment("first"));
			settle(store, false);
			template.send(payment("second"));
			settle(store, false);
			// Sent a third time and handled: pay-1 is remembered for a day.
			template.send(payment("third"));
			settle(store, true);
			assertThat(store.stats("payments").rememberedIds()).isOne();
			List<String> dead = new ArrayList<>(context.getBean(StringRedisTemplate.class)
				.opsForZSet()
				.range(store.keys("payments").dead(), 0, -1));
			assertThat(dead).hasSize(2).contains("pay-1").anyMatch((name) -> name.startsWith("pay-1~"));
			ReplayResult replayed = store.replayDead("payments", dead);
			assertThat(replayed.replayed()).as("replayed though pay-1 was handled within its window").isEmpty();
			assertThat(replayed.skipped()).isEqualTo(2);
		});
	}

	@Test
	void aDeadLetterOfAHigherPriorityIsClaimedFirstFromTheDeadLetterQueue() {
		QueueContexts.runner(QueueContexts.uniquePrefix()).run((context) -> {
			DelayQueueTemplate template = context.getBean(DelayQueueTemplate.class);
			RedisMessageStore store = context.getBean(RedisMessageStore.class);
			store.watchDeadLetters("orders");
			List<DelayMessage> messages = new ArrayList<>();
			for (int i = 0; i < 5; i++) {
				messages.add(DelayMessage.builder("orders", "low " + i).id("low-" + i).build());
			}
			messages.add(DelayMessage.builder("orders", "urgent").id("urgent").priority(9).build());
			template.sendAll(messages);
			Transitions.promote(store, "orders", 100);
			List<ClaimedMessage> claimed = new ArrayList<>(
					Transitions.claim(store, "orders", 100, Duration.ofMinutes(1)));
			assertThat(claimed).extracting(ClaimedMessage::id).first().isEqualTo("urgent");
			// The urgent one dies last, behind five dead letters of no priority.
			claimed.add(claimed.remove(0));
			for (ClaimedMessage message : claimed) {
				assertThat(Transitions.deadLetter(store, "orders", message.id(), message.leaseToken(), "failed"))
					.isTrue();
			}
			List<ClaimedMessage> fromQueue = Transitions.claim(store, "orders#dead", 1, Duration.ofMinutes(1));
			assertThat(fromQueue).extracting(ClaimedMessage::id).containsExactly("urgent");
		});
	}

	private static DelayMessage payment(String body) {
		return DelayMessage.builder("payments", body).id("pay-1").deduplicateFor(Duration.ofDays(1)).build();
	}

	/** Claims the one message of the topic and acknowledges or dead-letters it. */
	private static void settle(RedisMessageStore store, boolean ack) {
		Transitions.promote(store, "payments", 10);
		List<ClaimedMessage> claimed = Transitions.claim(store, "payments", 10, Duration.ofMinutes(1));
		assertThat(claimed).hasSize(1);
		ClaimedMessage message = claimed.get(0);
		if (ack) {
			assertThat(Transitions.ack(store, "payments", message.id(), message.leaseToken())).isTrue();
		}
		else {
			assertThat(Transitions.deadLetter(store, "payments", message.id(), message.leaseToken(), "refused"))
				.isTrue();
		}
	}

	private static long pending(TopicStats stats) {
		return stats.scheduled() + stats.ready() + stats.inFlight();
	}

	@Configuration(proxyBeanMethods = false)
	static class RefusedOrders {

		final List<String> seen = new CopyOnWriteArrayList<>();

		@DelayListener(topic = "orders", maxAttempts = 1)
		void on(String payload) {
			this.seen.add(payload);
			throw new IllegalStateException("refused " + payload);
		}

	}

}

package io.github.delayqueue.listener;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;

import io.github.delayqueue.producer.DelayMessage;
import io.github.delayqueue.producer.DelayQueueTemplate;
import io.github.delayqueue.store.MessageState;
import io.github.delayqueue.store.TopicPartitions;
import io.github.delayqueue.store.redis.RedisMessageStore;
import io.github.delayqueue.testsupport.QueueContexts;
import org.junit.jupiter.api.Test;

import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A handler that throws {@link SlowDownException} (say after an HTTP 429) gets its
 * message again after the pause, as the same attempt, and the topic's listener claims
 * nothing new meanwhile, in any of its partitions.
 */
class SlowDownTests {

	private static final Duration PAUSE = Duration.ofMillis(800);

	@Test
	void theMessageComesAgainAfterThePauseAsTheSameAttemptAndNothingNewIsClaimedMeanwhile() {
		QueueContexts.runner(QueueContexts.uniquePrefix())
			.withUserConfiguration(RateLimitedPartner.class)
			.withPropertyValues("delay-queue.topics.partner.max-attempts=1")
			.run((context) -> {
				DelayQueueTemplate queue = context.getBean(DelayQueueTemplate.class);
				RateLimitedPartner partner = context.getBean(RateLimitedPartner.class);
				queue.send(DelayMessage.builder("partner", "first").id("first").build());
				await().atMost(Duration.ofSeconds(10)).until(() -> partner.calls.size() == 1);
				queue.send(DelayMessage.builder("partner", "second").id("second").build());
				await().atMost(Duration.ofSeconds(10)).until(() -> partner.calls.size() == 3);
				Call refused = partner.calls.get(0);
				// After the pause, in due order: "second" was due first.
				assertThat(partner.calls).extracting(Call::id).containsExactly("first", "second", "first");
				assertThat(partner.calls).extracting(Call::attempt).containsExactly(1, 1, 1);
				for (Call later : partner.calls.subList(1, 3)) {
					assertThat(later.nanos() - refused.nanos()).isGreaterThanOrEqualTo(PAUSE.toNanos());
				}
			});
	}

	@Test
	void aSlowDownPausesTheClaimsOfEveryPartitionOfTheTopic() {
		QueueContexts.runner(QueueContexts.uniquePrefix())
			.withUserConfiguration(RateLimitedPartner.class)
			.withPropertyValues("delay-queue.topics.partner.partitions=3")
			.run((context) -> {
				DelayQueueTemplate queue = context.getBean(DelayQueueTemplate.class);
				RateLimitedPartner partner = context.getBean(RateLimitedPartner.class);
				RedisMessageStore store = context.getBean(RedisMessageStore.class);
				queue.send(DelayMessage.builder("partner", "first").id("first").build());
				await().atMost(Duration.ofSeconds(10)).until(() -> partner.calls.size() == 1);
				// Postponed once its handler asked for the pause: the pause has begun.
				await().atMost(Duration.ofSeconds(10))
					.until(() -> store.inspect("partner", "first", 10).state() == MessageState.SCHEDULED);
				List<DelayMessage> messages = new ArrayList<>();
				for (int i = 0; i < 30; i++) {
					messages.add(DelayMessage.builder("partner", "m" + i).id("m" + i).build());
				}
				assertThat(messages).extracting((message) -> TopicPartitions.indexOf(message.id(), 3))
					.contains(0, 1, 2);
				queue.sendAll(messages);
				await().atMost(Duration.ofSeconds(10)).until(() -> partner.calls.size() == 32);
				Call refused = partner.calls.get(0);
				for (Call later : partner.calls.subList(1, 32)) {
					assertThat(later.nanos() - refused.nanos()).as("%s started after the pause", later.id())
						.isGreaterThanOrEqualTo(PAUSE.toNanos());
				}
			});
	}

	record Call(String id, int attempt, long nanos) {
	}

	@Configuration(proxyBeanMethods = false)
	static class RateLimitedPartner {

		final List<Call> calls = new CopyOnWriteArrayList<>();

		private final AtomicBoolean refusedOnce = new AtomicBoolean();

		@DelayListener(topic = "partner")
		void call(Delivery<String> delivery) {
			this.calls.add(new Call(delivery.id(), delivery.attempt(), System.nanoTime()));
			if (this.refusedOnce.compareAndSet(false, true)) {
				throw new SlowDownException(PAUSE);
			}
		}

	}

}

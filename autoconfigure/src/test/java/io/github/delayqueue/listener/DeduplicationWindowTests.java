package io.github.delayqueue.listener;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import io.github.delayqueue.actuate.DelayQueueEndpoint;
import io.github.delayqueue.producer.DelayMessage;
import io.github.delayqueue.producer.DelayQueueTemplate;
import io.github.delayqueue.producer.InvalidMessageException;
import io.github.delayqueue.producer.SendResult;
import io.github.delayqueue.runtime.DelayQueueRuntime;
import io.github.delayqueue.schedule.DelayQueueSchedules;
import io.github.delayqueue.store.redis.RedisMessageStore;
import io.github.delayqueue.testsupport.QueueContexts;
import org.junit.jupiter.api.Test;

import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * Deduplication that outlives delivery, on real Redis: an id sent with a window is
 * remembered that long after its message was acknowledged, so a producer sending it again
 * causes no second delivery; ids of messages sent without one, and dead letters, are not
 * remembered; each partition remembers at most a bounded number of ids.
 */
class DeduplicationWindowTests {

	@Test
	void anIdSentAgainWithinItsWindowAfterItsMessageWasHandledIsNotDeliveredAgain() {
		QueueContexts.runner(QueueContexts.uniquePrefix())
			.withUserConfiguration(Payments.class)
			.withPropertyValues("delay-queue.topics.payments.partitions=3")
			.run((context) -> {
				DelayQueueTemplate queue = context.getBean(DelayQueueTemplate.class);
				Payments payments = context.getBean(Payments.class);
				queue.send(payment("pay-1", Duration.ofHours(1)));
				await().atMost(Duration.ofSeconds(10)).until(() -> payments.handled.size() == 1);
				RedisMessageStore store = context.getBean(RedisMessageStore.class);
				await().atMost(Duration.ofSeconds(10)).until(() -> store.stats("payments").rememberedIds() == 1);
				Instant before = Instant.now();
				SendResult again = queue.send(payment("pay-1", Duration.ofHours(1)));
				assertThat(again.duplicate()).isTrue();
				assertThat(again.dueAt()).as("when the id stops being remembered")
					.isBetween(before.plus(Duration.ofMinutes(59)), before.plus(Duration.ofMinutes(61)));
				assertThat(store.inspect("payments", "pay-1", 100)).isNull();
				queue.send(payment("pay-2", Duration.ofHours(1)));
				await().atMost(Duration.ofSeconds(10)).until(() -> payments.handled.size() == 2);
				assertThat(payments.handled).containsExactly("pay-1", "pay-2");
			});
	}

	@Test
	void onceTheWindowHasEndedTheIdIsStoredAndDeliveredAgain() {
		QueueContexts.runner(QueueContexts.uniquePrefix()).withUserConfiguration(Payments.class).run((context) -> {
			DelayQueueTemplate queue = context.getBean(DelayQueueTemplate.class);
			Payments payments = context.getBean(Payments.class);
			queue.send(payment("pay-1", Duration.ofMillis(300)));
			await().atMost(Duration.ofSeconds(10)).until(() -> payments.handled.size() == 1);
			await().atMost(Duration.ofSeconds(10))
				.pollInterval(Duration.ofMillis(100))
				.until(() -> !queue.send(payment("pay-1", Duration.ofMillis(300))).duplicate());
			await().atMost(Duration.ofSeconds(10)).until(() -> payments.handled.size() == 2);
			assertThat(context.getBean(RedisMessageStore.class).stats("payments").rememberedIds())
				.isLessThanOrEqualTo(1);
		});
	}

	@Test
	void idsOfMessagesWithoutAWindowAndOfDeadLettersAreNotRemembered() {
		QueueContexts.runner(QueueContexts.uniquePrefix()).withUserConfiguration(Payments.class).run((context) -> {
			DelayQueueTemplate queue = context.getBean(DelayQueueTemplate.class);
			Payments payments = context.getBean(Payments.class);
			queue.send(DelayMessage.builder("payments", "plain").id("plain").build());
			queue.send(DelayMessage.builder("payments", "refused")
				.id("refused")
				.deduplicateFor(Duration.ofHours(1))
				.build());
			RedisMessageStore store = context.getBean(RedisMessageStore.class);
			await().atMost(Duration.ofSeconds(10))
				.until(() -> payments.handled.contains("plain") && store.stats("payments").dead() == 1);
			assertThat(queue.send(DelayMessage.builder("payments", "plain").id("plain").build()).duplicate()).isFalse();
			assertThat(queue.send(DelayMessage.builder("payments", "refused").id("refused").build()).duplicate())
				.isFalse();
			assertThat(store.stats("payments").rememberedIds()).isZero();
		});
	}

	@Test
	void eachPartitionRemembersAtMostTheConfiguredNumberOfIdsForgettingThoseWhoseWindowsEndFirst() {
		QueueContexts.runner(QueueContexts.uniquePrefix())
			.withUserConfiguration(Payments.class)
			.withPropertyValues("delay-queue.producer.max-remembered-ids=3")
			.run((context) -> {
				DelayQueueTemplate queue = context.getBean(DelayQueueTemplate.class);
				Payments payments = context.getBean(Payments.class);
				for (int i = 1; i <= 5; i++) {
					queue.send(payment("pay-" + i, Duration.ofHours(i)));
				}
				await().atMost(Duration.ofSeconds(10)).until(() -> payments.handled.size() == 5);
				RedisMessageStore store = context.getBean(RedisMessageStore.class);
				await().atMost(Duration.ofSeconds(10)).until(() -> store.stats("payments").rememberedIds() == 3);
				assertThat(new DelayQueueEndpoint(store, queue, context.getBean(DelayQueueRuntime.class),
						context.getBean(DelayQueueSchedules.class))
					.topic("payments", null, null, null)
					.rememberedIds()).isEqualTo(3);
				assertThat(queue.send(payment("pay-1", Duration.ofHours(1))).duplicate()).isFalse();
				assertThat(queue.send(payment("pay-5", Duration.ofHours(1))).duplicate()).isTrue();
			});
	}

	@Test
	void aWindowNeedsAnIdAndALengthWithinBounds() {
		assertThatExceptionOfType(InvalidMessageException.class)
			.isThrownBy(() -> DelayMessage.builder("payments", "x").deduplicateFor(Duration.ofHours(1)).build())
			.withMessage("A message with a deduplication window needs an id (DelayMessage.Builder.id)");
		assertThatExceptionOfType(InvalidMessageException.class)
			.isThrownBy(() -> DelayMessage.builder("payments", "x").id("a").deduplicateFor(Duration.ZERO).build())
			.withMessage("A deduplication window must be from 1ms to 365d, but was 0s");
		assertThatExceptionOfType(InvalidMessageException.class)
			.isThrownBy(
					() -> DelayMessage.builder("payments", "x").id("a").deduplicateFor(Duration.ofDays(366)).build())
			.withMessageContaining("but was 366d");
	}

	@Test
	void aBadBoundIsRefusedAtStartupNamingTheProperty() {
		QueueContexts.runner(QueueContexts.uniquePrefix())
			.withPropertyValues("delay-queue.producer.max-remembered-ids=0")
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.hasStackTraceContaining(
						"delay-queue.producer.max-remembered-ids must be from 1 to 10000000, but was 0"));
	}

	private static DelayMessage payment(String id, Duration window) {
		return DelayMessage.builder("payments", id).id(id).deduplicateFor(window).build();
	}

	@Configuration(proxyBeanMethods = false)
	static class Payments {

		final List<String> handled = new CopyOnWriteArrayList<>();

		@DelayListener(topic = "payments", maxAttempts = 1)
		void on(String id) {
			if (id.equals("refused")) {
				throw new IllegalStateException("refused");
			}
			this.handled.add(id);
		}

	}

}

package io.github.delayqueue.listener;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import io.github.delayqueue.producer.DelayQueueTemplate;
import io.github.delayqueue.store.redis.RedisMessageStore;
import io.github.delayqueue.store.redis.TopicKeys;
import io.github.delayqueue.testsupport.QueueContexts;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Leases of running handlers: extended in the background, up to the maximum handling
 * time; and handed back at once when the application stops.
 */
class LeaseExtensionTests {

	@Test
	void handlerRunningManyTimesItsVisibilityTimeoutIsNotDeliveredTwice() {
		String prefix = QueueContexts.uniquePrefix();
		SlowListener slow = new SlowListener(Duration.ofSeconds(2));
		ApplicationContextRunner runner = QueueContexts.runner(prefix)
			.withBean(SlowListener.class, () -> slow)
			.withPropertyValues("delay-queue.listener.visibility-timeout=300ms", "delay-queue.listener.concurrency=2",
					"delay-queue.broker.max-sleep=100ms");
		// Two applications, so a lost lease would show as a second, concurrent delivery.
		runner.run((first) -> runner.run((second) -> {
			first.getBean(DelayQueueTemplate.class).send("slow", "long job", Duration.ZERO);
			await().atMost(Duration.ofSeconds(15)).until(() -> slow.finished.getCount() == 0);
			TopicKeys keys = first.getBean(RedisMessageStore.class).keys("slow");
			StringRedisTemplate redis = first.getBean(StringRedisTemplate.class);
			await().atMost(Duration.ofSeconds(5)).until(() -> !Boolean.TRUE.equals(redis.hasKey(keys.messages())));
			assertThat(slow.attempts).containsExactly(1);
		}));
	}

	@Test
	void handlerRunningPastTheMaxHandlingTimeLosesItsLeaseAndTheMessageIsDeliveredAgain() {
		SlowListener slow = new SlowListener(Duration.ofSeconds(3));
		QueueContexts.runner(QueueContexts.uniquePrefix())
			.withBean(SlowListener.class, () -> slow)
			.withPropertyValues("delay-queue.listener.visibility-timeout=300ms",
					"delay-queue.listener.max-handling-time=500ms", "delay-queue.listener.concurrency=2",
					"delay-queue.broker.max-sleep=100ms")
			.run((context) -> {
				context.getBean(DelayQueueTemplate.class).send("slow", "stuck job", Duration.ZERO);
				await().atMost(Duration.ofSeconds(15)).until(() -> slow.attempts.size() == 2);
				assertThat(slow.attempts).containsExactly(1, 2);
			});
	}

	@Test
	void messageUnfinishedAtShutdownIsHandedBackAndDeliveredAgainBeforeItsLeaseEnds() {
		String prefix = QueueContexts.uniquePrefix();
		SlowListener slow = new SlowListener(Duration.ofMinutes(5));
		QueueContexts.runner(prefix)
			.withBean(SlowListener.class, () -> slow)
			.withPropertyValues("delay-queue.listener.visibility-timeout=1h",
					"delay-queue.listener.shutdown-timeout=200ms")
			.run((context) -> {
				context.getBean(DelayQueueTemplate.class).send("slow", "interrupted job", Duration.ZERO);
				await().atMost(Duration.ofSeconds(10)).until(() -> slow.attempts.size() == 1);
			});
		// The lease would last an hour: only the hand-back can make it ready again.
		SlowListener next = new SlowListener(Duration.ZERO);
		QueueContexts.runner(prefix).withBean(SlowListener.class, () -> next).run((context) -> {
			await().atMost(Duration.ofSeconds(10)).until(() -> next.finished.getCount() == 0);
			assertThat(next.payloads).containsExactly("interrupted job");
			assertThat(next.attempts).containsExactly(1);
		});
	}

	static class SlowListener {

		final Duration duration;

		final List<Integer> attempts = new CopyOnWriteArrayList<>();

		final List<String> payloads = new CopyOnWriteArrayList<>();

		final CountDownLatch finished = new CountDownLatch(1);

		SlowListener(Duration duration) {
			this.duration = duration;
		}

		@DelayListener(topic = "slow")
		void on(Delivery<String> delivery) throws InterruptedException {
			this.attempts.add(delivery.attempt());
			this.payloads.add(delivery.payload());
			// Stands for slow work; interrupted when its application stops.
			new CountDownLatch(1).await(this.duration.toMillis(), TimeUnit.MILLISECONDS);
			this.finished.countDown();
		}

	}

}

package io.github.delayqueue.listener;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import io.github.delayqueue.producer.DelayQueueTemplate;
import io.github.delayqueue.testsupport.QueueContexts;
import io.github.delayqueue.test.redis.RedisServerProcess;
import io.github.delayqueue.test.redis.TestRedis;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Brokers and listeners survive a Redis restart and resume by themselves.
 */
class RedisRestartTests {

	@Test
	void consumptionResumesAfterRedisIsRestartedWhileTheApplicationRuns() throws Exception {
		Assumptions.assumeTrue(TestRedis.canStartPrivateServer(), "needs a redis-server binary");
		try (RedisServerProcess redis = TestRedis.startPrivateServer()) {
			QueueContexts.runner(QueueContexts.uniquePrefix(), redis.springProperties())
				.withBean(NoteListener.class)
				.withPropertyValues("spring.data.redis.timeout=2s", "delay-queue.broker.max-sleep=500ms",
						"delay-queue.listener.idle-check-interval=500ms")
				.run((context) -> {
					DelayQueueTemplate template = context.getBean(DelayQueueTemplate.class);
					NoteListener listener = context.getBean(NoteListener.class);
					template.send("notes", "before", Duration.ZERO);
					await().atMost(Duration.ofSeconds(10)).until(() -> listener.received.contains("before"));

					redis.stop();
					await().atMost(Duration.ofSeconds(10))
						.untilAsserted(() -> assertThat(sendFails(template)).isTrue());
					redis.start();

					await().atMost(Duration.ofSeconds(30)).ignoreExceptions().until(() -> {
						template.send("notes", "after", Duration.ofMillis(100));
						return true;
					});
					await().atMost(Duration.ofSeconds(30)).until(() -> listener.received.contains("after"));
				});
		}
	}

	private static boolean sendFails(DelayQueueTemplate template) {
		try {
			template.send("notes", "during", Duration.ZERO);
			return false;
		}
		catch (RuntimeException ex) {
			return true;
		}
	}

	static class NoteListener {

		final List<String> received = new CopyOnWriteArrayList<>();

		@DelayListener(topic = "notes")
		void on(String payload) {
			this.received.add(payload);
		}

	}

}

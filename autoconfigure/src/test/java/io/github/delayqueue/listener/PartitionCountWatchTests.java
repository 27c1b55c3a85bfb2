package io.github.delayqueue.listener;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

import io.github.delayqueue.autoconfigure.DelayQueueActuatorAutoConfiguration;
import io.github.delayqueue.runtime.DelayQueueRuntime;
import io.github.delayqueue.store.NewMessage;
import io.github.delayqueue.store.TopicPartitions;
import io.github.delayqueue.store.redis.RedisMessageStore;
import io.github.delayqueue.test.redis.FaultyRedisProxy;
import io.github.delayqueue.test.redis.TestRedis;
import io.github.delayqueue.testsupport.QueueContexts;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.connection.RedisConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A listener's application learns when Redis spreads its topic over another number of
 * partitions than it does, and says so (an ERROR and a {@code DOWN} health naming the
 * topic) instead of consuming only some partitions in silence: when another application
 * changed the count while it ran, and when Redis did not answer as it started and had
 * another count once it did.
 */
class PartitionCountWatchTests {

	private static final String TOPIC = "clicks";

	private final String prefix = QueueContexts.uniquePrefix();

	@Test
	void aListenerWhoseCountAnotherApplicationChangedIsReportedUntilItAgreesAgain() {
		QueueContexts.runner(this.prefix)
			.withConfiguration(AutoConfigurations.of(DelayQueueActuatorAutoConfiguration.class))
			.withUserConfiguration(ClickListener.class)
			.withPropertyValues("delay-queue.broker.max-sleep=200ms")
			.run((context) -> {
				DelayQueueRuntime runtime = context.getBean(DelayQueueRuntime.class);
				RedisConnectionFactory redis = context.getBean(RedisConnectionFactory.class);
				assertThat(runtime.getPartitionCountProblems()).isEmpty();

				store(redis, 3).agreePartitions(TOPIC);

				await().atMost(Duration.ofSeconds(10))
					.until(() -> runtime.getPartitionCountProblems().containsKey(TOPIC));
				assertThat(runtime.getPartitionCountProblems().get(TOPIC))
					.contains("has 3 partitions in Redis, but 1 are configured here");
				Health health = context.getBean("delayQueueHealthIndicator", HealthIndicator.class).health(true);
				assertThat(health.getStatus()).isEqualTo(Status.DOWN);
				assertThat(health.getDetails()).containsKey("partitionCounts");

				store(redis, 1).agreePartitions(TOPIC);
				await().atMost(Duration.ofSeconds(15)).until(() -> runtime.getPartitionCountProblems().isEmpty());
			});
	}

	@Test
	void aListenerStartedWhileRedisDidNotAnswerComparesItsCountOnceRedisAnswers() {
		TestRedis redis = TestRedis.shared();
		QueueContexts.runner(this.prefix).run((context) -> {
			RedisMessageStore three = store(context.getBean(RedisConnectionFactory.class), 3);
			three.send(TOPIC, List
				.of(NewMessage.afterDelay("waiting", Duration.ofHours(1), "body".getBytes(StandardCharsets.UTF_8))));
		});
		try (FaultyRedisProxy proxy = FaultyRedisProxy.start(redis.host(), redis.port())) {
			// The first script call, the listener's count check, gets its reply after the
			// send timeout.
			proxy.delayNextReplyTo(FaultyRedisProxy.named("EVALSHA", "EVAL"), Duration.ofSeconds(2));
			QueueContexts.runner(this.prefix)
				.withUserConfiguration(ClickListener.class)
				.withPropertyValues("spring.data.redis.host=" + proxy.host(), "spring.data.redis.port=" + proxy.port(),
						"delay-queue.producer.send-timeout=500ms")
				.run((context) -> {
					assertThat(context).hasNotFailed();
					DelayQueueRuntime runtime = context.getBean(DelayQueueRuntime.class);
					assertThat(runtime.getPartitionCountProblems()).isEmpty();
					await().atMost(Duration.ofSeconds(20))
						.until(() -> runtime.getPartitionCountProblems().containsKey(TOPIC));
					assertThat(runtime.getPartitionCountProblems().get(TOPIC))
						.contains("has 3 partitions in Redis, but 1 are configured here");
				});
		}
	}

	private RedisMessageStore store(RedisConnectionFactory redis, int partitions) {
		RedisMessageStore store = new RedisMessageStore(redis, this.prefix);
		store.usePartitions(TopicPartitions.of(Map.of(TOPIC, partitions)));
		return store;
	}

	@Configuration(proxyBeanMethods = false)
	static class ClickListener {

		final List<String> received = new CopyOnWriteArrayList<>();

		@DelayListener(topic = TOPIC)
		void onClick(Delivery<String> delivery) {
			this.received.add(delivery.id());
		}

	}

}

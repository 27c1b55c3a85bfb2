package io.github.delayqueue.review;

import java.time.Duration;
import java.util.Map;

import io.github.delayqueue.actuate.DelayQueueHealthIndicator;
import io.github.delayqueue.autoconfigure.DelayQueueActuatorAutoConfiguration;
import io.github.delayqueue.producer.DelayQueueTemplate;
import io.github.delayqueue.store.redis.RedisMessageStore;
import io.github.delayqueue.testsupport.QueueContexts;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationContext;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Final review of the health check of topics the properties declare without a listener
 * here ({@code listener: none}).
 */
class FinalReviewHealthTests {

	private final ApplicationContextRunner runner = QueueContexts.runner(QueueContexts.uniquePrefix())
		.withConfiguration(AutoConfigurations.of(DelayQueueActuatorAutoConfiguration.class))
		.withPropertyValues("delay-queue.topics.clicks.partitions=3");

	@Test
	void aProducerOnlyApplicationIsUpWithTheTopicAfterItsFirstSend() {
		this.runner.run((context) -> {
			context.getBean(DelayQueueTemplate.class).send("clicks", "later", Duration.ofHours(1));

			Health health = health(context);

			assertThat(health.getStatus()).as("%s", health.getDetails()).isEqualTo(Status.UP);
			assertThat(topics(health).get("clicks")).containsEntry("listener", "none").containsEntry("scheduled", 1L);
		});
	}

	@Test
	void aDeclaredPartitionedTopicNothingWasSentToYetIsNotReportedDown() {
		this.runner.run((context) -> {
			Health health = health(context);

			assertThat(health.getStatus()).as("%s", health.getDetails()).isEqualTo(Status.UP);
		});
	}

	@Test
	void aDeclaredTopicWithAWrongTypeKeyIsDownWithRedisReasonNeverNull() {
		this.runner.run((context) -> {
			context.getBean(DelayQueueTemplate.class).send("clicks", "later", Duration.ofHours(1));
			StringRedisTemplate redis = new StringRedisTemplate(context.getBean(RedisConnectionFactory.class));
			redis.afterPropertiesSet();
			String schedule = context.getBean(RedisMessageStore.class).keys("clicks").scheduled();
			redis.delete(schedule);
			redis.opsForHash().put(schedule, "x", "y");

			Health health = health(context);

			assertThat(health.getStatus()).as("%s", health.getDetails()).isEqualTo(Status.DOWN);
			assertThat(String.valueOf(health.getDetails())).contains("WRONGTYPE").doesNotContain("null");
		});
	}

	private static Health health(ApplicationContext context) {
		return context.getBean(DelayQueueHealthIndicator.class).health();
	}

	@SuppressWarnings("unchecked")
	private static Map<String, Map<String, Object>> topics(Health health) {
		return (Map<String, Map<String, Object>>) health.getDetails().get("topics");
	}

}

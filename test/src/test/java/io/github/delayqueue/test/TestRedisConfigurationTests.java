package io.github.delayqueue.test;

import java.time.Duration;
import java.util.UUID;

import io.github.delayqueue.autoconfigure.DelayQueueAutoConfiguration;
import io.github.delayqueue.producer.DelayQueueTemplate;
import io.github.delayqueue.store.redis.RedisSettingsCheck;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link TestRedisConfiguration} runs an application on the test Redis, whatever its own
 * Redis settings, without warning that this Redis keeps nothing on disk.
 */
class TestRedisConfigurationTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, JacksonAutoConfiguration.class,
				DelayQueueAutoConfiguration.class))
		.withUserConfiguration(TestRedisConfiguration.class)
		.withPropertyValues("spring.data.redis.host=production-redis.invalid", "spring.data.redis.port=6390",
				"delay-queue.key-prefix=dev-" + UUID.randomUUID().toString().substring(0, 8));

	@Test
	void anApplicationSendsToTheTestRedisWhateverItsOwnRedisSettings() {
		this.runner.run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(context.getBean(DelayQueueTemplate.class).send("orders", "payload", Duration.ofMinutes(1)).id())
				.isNotBlank();
		});
	}

	@Test
	void theSettingsCheckDoesNotWarnThatTheTestRedisKeepsNothingOnDisk() {
		this.runner.run((context) -> assertThat(context).getBean(RedisSettingsCheck.class)
			.isInstanceOf(ThrowawayRedisSettingsCheck.class));
	}

}

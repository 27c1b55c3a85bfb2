package io.github.delayqueue.autoconfigure;

import java.time.Duration;

import io.github.delayqueue.store.redis.RedisMessageStore;
import io.github.delayqueue.test.redis.RedisServerProcess;
import io.github.delayqueue.test.redis.TestRedis;
import io.github.delayqueue.testsupport.QueueContexts;
import io.lettuce.core.resource.ClientResources;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * {@code delay-queue.redis-reconnect-max-delay}: the Lettuce client that Spring Boot
 * builds waits at most that long between attempts to reconnect, so the queue works again
 * soon after Redis is back.
 */
class RedisReconnectDelayTests {

	private static final Duration LETTUCE_DEFAULT_MAX_DELAY = Duration.ofSeconds(30);

	private final ApplicationContextRunner runner = QueueContexts.runner(QueueContexts.uniquePrefix());

	@Test
	void reconnectDelayGrowsFromAMillisecondToOneSecondByDefault() {
		this.runner.run((context) -> {
			assertThat(reconnectDelay(context, 1)).isEqualTo(Duration.ofMillis(1));
			assertThat(reconnectDelay(context, 5)).isEqualTo(Duration.ofMillis(16));
			assertThat(reconnectDelay(context, 30)).isEqualTo(Duration.ofSeconds(1));
		});
	}

	@Test
	void reconnectMaxDelayIsConfigurable() {
		this.runner.withPropertyValues("delay-queue.redis-reconnect-max-delay=250ms")
			.run((context) -> assertThat(reconnectDelay(context, 30)).isEqualTo(Duration.ofMillis(250)));
	}

	@Test
	void reconnectMaxDelayOfZeroLeavesTheClientsOwnBackoff() {
		this.runner.withPropertyValues("delay-queue.redis-reconnect-max-delay=0")
			.run((context) -> assertThat(reconnectDelay(context, 30)).isEqualTo(LETTUCE_DEFAULT_MAX_DELAY));
	}

	@Test
	void applicationsOwnClientResourcesAreLeftAlone() {
		this.runner.withUserConfiguration(OwnClientResourcesConfig.class).run((context) -> {
			assertThat(context).hasSingleBean(ClientResources.class);
			assertThat(reconnectDelay(context, 30)).isEqualTo(LETTUCE_DEFAULT_MAX_DELAY);
		});
	}

	@Test
	void queueWorksAgainWithinSecondsOfRedisComingBackOnTheSamePort() {
		Assumptions.assumeTrue(TestRedis.canStartPrivateServer(), "needs a redis-server binary");
		try (RedisServerProcess redis = TestRedis.startPrivateServer()) {
			QueueContexts.runner(QueueContexts.uniquePrefix(), redis.springProperties())
				.withPropertyValues("spring.data.redis.timeout=1s")
				.run((context) -> {
					RedisMessageStore store = context.getBean(RedisMessageStore.class);
					store.ping();

					redis.stop();
					// Long enough for Lettuce's own backoff to grow past eight seconds.
					await().during(Duration.ofSeconds(9)).atMost(Duration.ofSeconds(15)).until(() -> !answers(store));

					redis.start();
					await().atMost(Duration.ofSeconds(5)).until(() -> answers(store));
				});
		}
	}

	private static boolean answers(RedisMessageStore store) {
		try {
			store.ping();
			return true;
		}
		catch (RuntimeException ex) {
			return false;
		}
	}

	private static Duration reconnectDelay(ApplicationContext context, int attempt) {
		return context.getBean(ClientResources.class).reconnectDelay().createDelay(attempt);
	}

	@Configuration(proxyBeanMethods = false)
	static class OwnClientResourcesConfig {

		@Bean(destroyMethod = "shutdown")
		ClientResources ownClientResources() {
			return ClientResources.create();
		}

	}

}

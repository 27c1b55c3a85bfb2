package io.github.delayqueue.testsupport;

import java.util.UUID;

import io.github.delayqueue.autoconfigure.DelayQueueAutoConfiguration;
import io.github.delayqueue.test.redis.FaultyRedisProxy;
import io.github.delayqueue.test.redis.TestRedis;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.test.context.DynamicPropertyRegistry;

/**
 * Application contexts for queue tests: Boot's Redis and Jackson auto-configuration plus
 * ours, on the test Redis, with a key prefix of their own so that tests never see each
 * other's keys.
 */
public final class QueueContexts {

	private QueueContexts() {
	}

	/**
	 * @return a new unique key prefix
	 */
	public static String uniquePrefix() {
		return "t" + UUID.randomUUID().toString().substring(0, 8);
	}

	/**
	 * Points a {@code @SpringBootTest} at the shared test Redis with the given key
	 * prefix.
	 * @param registry the test's dynamic properties
	 * @param prefix the key prefix
	 */
	public static void register(DynamicPropertyRegistry registry, String prefix) {
		for (String property : TestRedis.shared().springProperties()) {
			int equals = property.indexOf('=');
			registry.add(property.substring(0, equals), () -> property.substring(equals + 1));
		}
		registry.add("delay-queue.key-prefix", () -> prefix);
	}

	/**
	 * A runner on the shared test Redis with the given key prefix.
	 * @param prefix the key prefix
	 * @return the runner
	 */
	public static ApplicationContextRunner runner(String prefix) {
		return runner(prefix, TestRedis.shared().springProperties());
	}

	/**
	 * A runner on the shared test Redis through a proxy, with the given key prefix.
	 * @param prefix the key prefix
	 * @param proxy a proxy in front of the shared test Redis
	 * @return the runner
	 */
	public static ApplicationContextRunner runner(String prefix, FaultyRedisProxy proxy) {
		TestRedis redis = TestRedis.shared();
		return runner(prefix, "spring.data.redis.host=" + proxy.host(), "spring.data.redis.port=" + proxy.port(),
				"spring.data.redis.database=" + redis.database(),
				"spring.data.redis.username=" + ((redis.username() != null) ? redis.username() : ""),
				"spring.data.redis.password=" + ((redis.password() != null) ? redis.password() : ""));
	}

	/**
	 * A runner on a given Redis with the given key prefix.
	 * @param prefix the key prefix
	 * @param redisProperties the {@code spring.data.redis.*} properties
	 * @return the runner
	 */
	public static ApplicationContextRunner runner(String prefix, String... redisProperties) {
		return new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, JacksonAutoConfiguration.class,
					DelayQueueAutoConfiguration.class))
			.withPropertyValues(redisProperties)
			.withPropertyValues("delay-queue.key-prefix=" + prefix,
					"delay-queue.listener.backoff.initial-interval=50ms",
					"delay-queue.listener.backoff.max-interval=200ms");
	}

}

package io.github.delayqueue.autoconfigure;

import java.util.UUID;

import io.github.delayqueue.test.redis.TestRedis;

import org.springframework.test.context.DynamicPropertyRegistry;

/**
 * The shared test Redis and a key prefix of its own, for a {@code @SpringBootTest} of
 * this line.
 */
final class TestRedisProperties {

	private TestRedisProperties() {
	}

	static void register(DynamicPropertyRegistry registry) {
		for (String property : TestRedis.shared().springProperties()) {
			int equals = property.indexOf('=');
			registry.add(property.substring(0, equals), () -> property.substring(equals + 1));
		}
		registry.add("delay-queue.key-prefix", () -> "boot3-" + UUID.randomUUID().toString().substring(0, 8));
	}

}

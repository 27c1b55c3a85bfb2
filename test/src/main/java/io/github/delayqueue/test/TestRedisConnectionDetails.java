package io.github.delayqueue.test;

import io.github.delayqueue.test.redis.TestRedis;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.data.redis.autoconfigure.DataRedisConnectionDetails;

/**
 * Points Spring Boot's Redis connection at the test Redis, over any
 * {@code spring.data.redis.*} property: a standalone node, no Sentinel, no Cluster.
 */
final class TestRedisConnectionDetails implements DataRedisConnectionDetails {

	private final TestRedis redis;

	TestRedisConnectionDetails(TestRedis redis) {
		this.redis = redis;
	}

	@Override
	public @Nullable String getUsername() {
		return this.redis.username();
	}

	@Override
	public @Nullable String getPassword() {
		return this.redis.password();
	}

	@Override
	public Standalone getStandalone() {
		return Standalone.of(this.redis.host(), this.redis.port(), this.redis.database());
	}

}

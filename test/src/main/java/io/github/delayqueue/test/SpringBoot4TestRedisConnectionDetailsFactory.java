package io.github.delayqueue.test;

import io.github.delayqueue.test.redis.TestRedis;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.data.redis.autoconfigure.DataRedisConnectionDetails;

/**
 * The test Redis as Spring Boot 4's {@link DataRedisConnectionDetails}; registered in
 * {@code META-INF/spring.factories}, where the test kit finds it; not for direct use.
 */
public final class SpringBoot4TestRedisConnectionDetailsFactory implements TestRedisConnectionDetailsFactory {

	/**
	 * Creates the factory; the test kit does.
	 */
	public SpringBoot4TestRedisConnectionDetailsFactory() {
	}

	@Override
	public Class<?> connectionDetailsType() {
		return DataRedisConnectionDetails.class;
	}

	@Override
	public Object connectionDetails(TestRedis redis) {
		return new TestRedisConnectionDetails(redis);
	}

	/**
	 * Points Spring Boot's Redis connection at the test Redis: a standalone node.
	 */
	private static final class TestRedisConnectionDetails implements DataRedisConnectionDetails {

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

}

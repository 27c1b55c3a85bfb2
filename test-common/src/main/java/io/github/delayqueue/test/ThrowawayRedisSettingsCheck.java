package io.github.delayqueue.test;

import io.github.delayqueue.store.redis.RedisServerInspector;
import io.github.delayqueue.store.redis.RedisSettingsCheck;

import org.springframework.data.redis.connection.RedisConnectionFactory;

/**
 * The check of Redis' settings for a test Redis, which is thrown away with the JVM: that
 * it keeps nothing on disk is no news worth a warning in every test or development run.
 */
final class ThrowawayRedisSettingsCheck extends RedisSettingsCheck {

	ThrowawayRedisSettingsCheck(RedisConnectionFactory connectionFactory) {
		super(new RedisServerInspector(connectionFactory));
	}

	@Override
	public void afterSingletonsInstantiated() {
	}

}

package io.github.delayqueue.testsupport;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;

import io.github.delayqueue.store.ClaimResult;
import io.github.delayqueue.store.RateLimit;
import io.github.delayqueue.store.WriteGate;
import io.github.delayqueue.store.redis.RedisMessageStore;
import org.jspecify.annotations.Nullable;

import org.springframework.core.env.Environment;
import org.springframework.data.redis.connection.RedisConnectionFactory;

/**
 * A store whose claims can be made to fail with an {@link Error}, for tests of a listener
 * that stops on one. Register it as the application's {@link RedisMessageStore} bean.
 */
public class FailingClaims extends RedisMessageStore {

	private volatile boolean failing;

	/**
	 * Creates the store with the key prefix of {@code delay-queue.key-prefix}.
	 * @param connectionFactory the Redis connection factory
	 * @param environment the environment
	 */
	public FailingClaims(RedisConnectionFactory connectionFactory, Environment environment) {
		super(connectionFactory, environment.getRequiredProperty("delay-queue.key-prefix"));
	}

	/** From now on every claim throws an {@link Error}. */
	public void failFromNowOn() {
		this.failing = true;
	}

	@Override
	public CompletableFuture<ClaimResult> claimAsync(String topic, String consumer, String token, int limit,
			int earlyLimit, Duration lease, @Nullable RateLimit rateLimit, WriteGate gate) {
		if (this.failing) {
			throw new AssertionError("claim failed with an Error, as the test asked");
		}
		return super.claimAsync(topic, consumer, token, limit, earlyLimit, lease, rateLimit, gate);
	}

}

package io.github.delayqueue.testsupport;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import io.github.delayqueue.store.ClaimResult;
import io.github.delayqueue.store.LeaseExpiryResult;
import io.github.delayqueue.store.PromoteResult;
import io.github.delayqueue.store.RateLimit;
import io.github.delayqueue.store.TopicStore;
import io.github.delayqueue.store.WriteGate;
import io.github.delayqueue.store.redis.RedisMessageStore;
import org.jspecify.annotations.Nullable;

import org.springframework.core.env.Environment;
import org.springframework.data.redis.connection.RedisConnectionFactory;

/**
 * A store whose claims (through {@link #topic(String)}, as the runtime makes them) can be
 * made to fail with an {@link Error}, for tests of a listener that stops on one. Register
 * it as the application's {@link RedisMessageStore} bean.
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
	public TopicStore topic(String topic) {
		TopicStore store = super.topic(topic);
		return new TopicStore() {

			@Override
			public String topic() {
				return store.topic();
			}

			@Override
			public CompletableFuture<PromoteResult> promote(int limit, Duration lookahead) {
				return store.promote(limit, lookahead);
			}

			@Override
			public CompletableFuture<ClaimResult> claim(String consumer, String token, int limit, int earlyLimit,
					Duration lease, @Nullable RateLimit rateLimit, int groupConcurrency, WriteGate gate) {
				if (FailingClaims.this.failing) {
					throw new AssertionError("claim failed with an Error, as the test asked");
				}
				return store.claim(consumer, token, limit, earlyLimit, lease, rateLimit, groupConcurrency, gate);
			}

			@Override
			public CompletableFuture<List<Boolean>> ack(List<String> ids, List<String> leaseTokens) {
				return store.ack(ids, leaseTokens);
			}

			@Override
			public long retry(String id, String leaseToken, Duration backoff, @Nullable String error) {
				return store.retry(id, leaseToken, backoff, error);
			}

			@Override
			public long postpone(String id, String leaseToken, Duration delay) {
				return store.postpone(id, leaseToken, delay);
			}

			@Override
			public boolean deadLetter(String id, String leaseToken, String error) {
				return store.deadLetter(id, leaseToken, error);
			}

			@Override
			public CompletableFuture<List<Boolean>> release(List<String> ids, List<String> leaseTokens) {
				return store.release(ids, leaseTokens);
			}

			@Override
			public CompletableFuture<List<String>> releaseClaim(String consumer, String token, Duration lease) {
				return store.releaseClaim(consumer, token, lease);
			}

			@Override
			public CompletableFuture<List<Long>> extendLeases(List<String> ids, List<String> leaseTokens,
					Duration length) {
				return store.extendLeases(ids, leaseTokens, length);
			}

			@Override
			public LeaseExpiryResult expireLeases(int limit, int maxAttempts) {
				return store.expireLeases(limit, maxAttempts);
			}

			@Override
			public List<String> repairAfter(RuntimeException failure) {
				return store.repairAfter(failure);
			}

		};
	}

}

package io.github.delayqueue.store.redis;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import io.github.delayqueue.store.ClaimResult;
import io.github.delayqueue.store.LeaseExpiryResult;
import io.github.delayqueue.store.MessagePage;
import io.github.delayqueue.store.MessageSnapshot;
import io.github.delayqueue.store.MessageState;
import io.github.delayqueue.store.PromoteResult;
import io.github.delayqueue.store.RateLimit;
import io.github.delayqueue.store.TopicInspector;
import io.github.delayqueue.store.TopicStats;
import io.github.delayqueue.store.TopicStore;
import io.github.delayqueue.store.WriteGate;
import org.jspecify.annotations.Nullable;

/**
 * One topic of a {@link RedisMessageStore}: its transitions and its read-only view.
 */
final class RedisTopicStore implements TopicStore, TopicInspector {

	private final RedisMessageStore store;

	private final String topic;

	RedisTopicStore(RedisMessageStore store, String topic) {
		this.store = store;
		this.topic = topic;
	}

	@Override
	public String topic() {
		return this.topic;
	}

	@Override
	public CompletableFuture<PromoteResult> promote(int limit, Duration lookahead) {
		return this.store.promoteAsync(this.topic, limit, lookahead);
	}

	@Override
	public CompletableFuture<ClaimResult> claim(String consumer, String token, int limit, int earlyLimit,
			Duration lease, @Nullable RateLimit rateLimit, WriteGate gate) {
		return this.store.claimAsync(this.topic, consumer, token, limit, earlyLimit, lease, rateLimit, gate);
	}

	@Override
	public CompletableFuture<List<Boolean>> ack(List<String> ids, List<String> leaseTokens) {
		return this.store.ackAsync(this.topic, ids, leaseTokens);
	}

	@Override
	public long retry(String id, String leaseToken, Duration backoff) {
		return this.store.retry(this.topic, id, leaseToken, backoff);
	}

	@Override
	public long postpone(String id, String leaseToken, Duration delay) {
		return this.store.postpone(this.topic, id, leaseToken, delay);
	}

	@Override
	public boolean deadLetter(String id, String leaseToken, String error) {
		return this.store.deadLetter(this.topic, id, leaseToken, error);
	}

	@Override
	public CompletableFuture<List<Boolean>> release(List<String> ids, List<String> leaseTokens) {
		return this.store.releaseAsync(this.topic, ids, leaseTokens);
	}

	@Override
	public CompletableFuture<List<String>> releaseClaim(String consumer, String token, Duration lease) {
		return this.store.releaseClaimAsync(this.topic, consumer, token, lease);
	}

	@Override
	public CompletableFuture<List<Long>> extendLeases(List<String> ids, List<String> leaseTokens, Duration length) {
		return this.store.extendLeasesAsync(this.topic, ids, leaseTokens, length);
	}

	@Override
	public LeaseExpiryResult expireLeases(int limit, int maxAttempts) {
		return this.store.expireLeases(this.topic, limit, maxAttempts);
	}

	@Override
	public List<String> repairAfter(RuntimeException failure) {
		return RedisMessageStore.isWrongType(failure) ? this.store.quarantineWrongTypes(this.topic) : List.of();
	}

	@Override
	public TopicStats stats() {
		return this.store.stats(this.topic);
	}

	@Override
	public MessagePage page(MessageState state, long offset, int limit) {
		return this.store.page(this.topic, state, offset, limit);
	}

	@Override
	public @Nullable MessageSnapshot inspect(String id, int maxBytes) {
		return this.store.inspect(this.topic, id, maxBytes);
	}

}

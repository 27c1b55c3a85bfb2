package io.github.delayqueue.store.redis;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import io.github.delayqueue.store.GroupView;
import io.github.delayqueue.store.MessagePage;
import io.github.delayqueue.store.PartialStats;
import io.github.delayqueue.store.MessageSnapshot;
import io.github.delayqueue.store.MessageState;
import io.github.delayqueue.store.TopicInspector;
import io.github.delayqueue.store.TopicStats;
import org.jspecify.annotations.Nullable;

/**
 * One topic's read-only view, over all its partitions.
 */
final class RedisTopicInspector implements TopicInspector {

	private final RedisQueries queries;

	private final String topic;

	RedisTopicInspector(RedisQueries queries, String topic) {
		this.queries = queries;
		this.topic = topic;
	}

	@Override
	public String topic() {
		return this.topic;
	}

	@Override
	public TopicStats stats() {
		return this.queries.stats(this.topic);
	}

	@Override
	public Map<String, CompletableFuture<TopicStats>> readPartitions() {
		return this.queries.readPartitions(this.topic);
	}

	@Override
	public PartialStats partialStats() {
		long deadline = System.nanoTime() + this.queries.timeout().toNanos();
		return PartialStats.await(this, readPartitions(), deadline, this.queries.timeout());
	}

	@Override
	public @Nullable String serverOf(String partition) {
		return this.queries.serverOf(partition);
	}

	@Override
	public MessagePage page(MessageState state, long offset, int limit) {
		return this.queries.page(this.topic, state, offset, limit);
	}

	@Override
	public MessagePage page(MessageState state, long offset, int limit, Duration within) {
		return this.queries.page(this.topic, state, offset, limit, within);
	}

	@Override
	public GroupView group(String group) {
		return this.queries.group(this.topic, group);
	}

	@Override
	public @Nullable MessageSnapshot inspect(String id, int maxBytes) {
		return this.queries.inspect(this.topic, id, maxBytes);
	}

}

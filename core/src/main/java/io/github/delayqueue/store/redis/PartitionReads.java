package io.github.delayqueue.store.redis;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

import io.github.delayqueue.store.TopicPartitions;
import io.github.delayqueue.store.TopicStats;
import io.github.delayqueue.time.Durations;
import io.lettuce.core.RedisURI;
import io.lettuce.core.cluster.SlotHash;
import io.lettuce.core.cluster.api.async.RedisAdvancedClusterAsyncCommands;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;
import org.jspecify.annotations.Nullable;

import org.springframework.dao.QueryTimeoutException;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.scheduling.concurrent.CustomizableThreadFactory;

/**
 * The reads of operations that go to every partition of a topic at once, so that a
 * partition whose server is down holds back none of the others, and where each partition
 * is served, from the Cluster's topology as the client knows it.
 */
final class PartitionReads {

	/** Agreements of a topic's partition count run at once; more wait their turn. */
	private static final int AGREEING_THREADS = 4;

	private final ScriptCalls calls;

	private final PartitionRouter router;

	private final RedisConnectionFactory connectionFactory;

	private final ThreadPoolExecutor agreeing;

	PartitionReads(ScriptCalls calls, PartitionRouter router, RedisConnectionFactory connectionFactory) {
		this.calls = calls;
		this.router = router;
		this.connectionFactory = connectionFactory;
		CustomizableThreadFactory threads = new CustomizableThreadFactory("delay-queue-read-");
		threads.setDaemon(true);
		this.agreeing = new ThreadPoolExecutor(AGREEING_THREADS, AGREEING_THREADS, 10, TimeUnit.SECONDS,
				new LinkedBlockingQueue<>(), threads);
		this.agreeing.allowCoreThreadTimeOut(true);
	}

	/**
	 * Starts reading the stats of each partition of a topic, once its partition count is
	 * agreed (which this application does once per topic, on a thread of its own); each
	 * read fails within the store's timeout, naming the partition.
	 * @param topic the topic
	 * @param stats the stats script of one partition
	 * @return the reads, by partition, partition 0 first
	 */
	Map<String, CompletableFuture<TopicStats>> stats(String topic, ScriptCodec<TopicStats> stats) {
		CompletableFuture<Void> agreed = agreed(topic);
		Map<String, CompletableFuture<TopicStats>> reads = new LinkedHashMap<>();
		for (String partition : this.router.partitions().names(topic)) {
			reads.put(partition, agreed.thenCompose((ignored) -> this.calls.submit(partition, stats)));
		}
		return reads;
	}

	private CompletableFuture<Void> agreed(String topic) {
		if (this.router.isAgreed(topic)) {
			return CompletableFuture.completedFuture(null);
		}
		long deadline = this.calls.deadline();
		return CompletableFuture.runAsync(() -> {
			if (System.nanoTime() - deadline > 0) {
				throw new QueryTimeoutException("The partition count of topic '" + TopicPartitions.topicOf(topic)
						+ "' was not read within " + Durations.format(this.calls.timeout()));
			}
			this.router.agree(TopicPartitions.topicOf(topic), false, deadline);
		}, this.agreeing);
	}

	/**
	 * Tells which primary serves a partition's keys, from the Cluster topology the client
	 * holds (no command is sent).
	 * @param partition the partition
	 * @return {@code host:port}, or {@code null} outside a Cluster or when the topology
	 * names no primary for its slot
	 */
	@Nullable String serverOf(String partition) {
		if (!(this.connectionFactory instanceof LettuceConnectionFactory lettuce) || !lettuce.isClusterAware()) {
			// Nothing to tell apart, and no connection to open while Redis may be down.
			return null;
		}
		int slot = SlotHash.getSlot(this.calls.keys(partition).messages());
		try (RedisConnection connection = this.connectionFactory.getConnection()) {
			if (!(connection.getNativeConnection() instanceof RedisAdvancedClusterAsyncCommands<?, ?> cluster)) {
				return null;
			}
			RedisClusterNode node = cluster.getStatefulConnection().getPartitions().getPartitionBySlot(slot);
			if (node == null || node.getUri() == null) {
				return null;
			}
			RedisURI uri = node.getUri();
			return uri.getHost() + ":" + uri.getPort();
		}
		catch (RuntimeException ex) {
			return null;
		}
	}

}

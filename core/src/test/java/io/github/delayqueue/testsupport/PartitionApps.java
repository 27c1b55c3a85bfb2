package io.github.delayqueue.testsupport;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;

import io.github.delayqueue.store.ClaimedMessage;
import io.github.delayqueue.store.NewMessage;
import io.github.delayqueue.store.TopicPartitions;
import io.github.delayqueue.store.redis.RedisMessageStore;
import io.github.delayqueue.test.redis.FaultyRedisProxy;
import io.github.delayqueue.test.redis.TestRedis;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Stores standing for applications of one topic on the test Redis, under one key prefix
 * of their own: each with the number of partitions its application configures, each on a
 * connection of its own, directly or through a {@link FaultyRedisProxy}.
 */
public final class PartitionApps implements AutoCloseable {

	public static final String TOPIC = "clicks";

	private final String prefix = TestStore.uniquePrefix();

	private final List<LettuceConnectionFactory> connections = new ArrayList<>();

	private final List<RedisMessageStore> stores = new ArrayList<>();

	private final StringRedisTemplate redis;

	public PartitionApps() {
		TestRedis shared = TestRedis.shared();
		this.redis = new StringRedisTemplate(connect(shared.host(), shared.port()));
		this.redis.afterPropertiesSet();
	}

	/**
	 * An application connected to Redis directly.
	 * @param partitions the number of partitions it configures for the topic
	 * @param timeout its send timeout
	 * @return its store
	 */
	public RedisMessageStore store(int partitions, Duration timeout) {
		TestRedis shared = TestRedis.shared();
		return store(connect(shared.host(), shared.port()), partitions, timeout);
	}

	/**
	 * An application connected to Redis through a proxy.
	 * @param proxy the proxy, in front of the test Redis
	 * @param partitions the number of partitions it configures for the topic
	 * @param timeout its send timeout
	 * @return its store
	 */
	public RedisMessageStore storeVia(FaultyRedisProxy proxy, int partitions, Duration timeout) {
		return store(connect(proxy.host(), proxy.port()), partitions, timeout);
	}

	private RedisMessageStore store(LettuceConnectionFactory connection, int partitions, Duration timeout) {
		RedisMessageStore store = new RedisMessageStore(connection, this.prefix, timeout);
		store.usePartitions(TopicPartitions.of(Map.of(TOPIC, partitions)));
		this.stores.add(store);
		return store;
	}

	private LettuceConnectionFactory connect(String host, int port) {
		LettuceConnectionFactory connection = TestStore.connect(host, port);
		this.connections.add(connection);
		return connection;
	}

	/**
	 * @return plain access to the test Redis
	 */
	public StringRedisTemplate redis() {
		return this.redis;
	}

	/**
	 * The key of a partition's count marker.
	 * @param store any store of these applications
	 * @param index the partition's index
	 * @param count the number of partitions
	 * @return the key
	 */
	public String markerOf(RedisMessageStore store, int index, int count) {
		return store.keys(TopicPartitions.names(TOPIC, count).get(index)).partitionCount();
	}

	/**
	 * Sends a message, lets it fail for good and returns the partition it died in.
	 */
	public static String deadLetter(RedisMessageStore store, String id) {
		store.send(TOPIC, List.of(message(id, Duration.ZERO)));
		String partition = store.partitions().nameFor(TOPIC, id);
		Transitions.promote(store, partition, 10);
		List<ClaimedMessage> claimed = Transitions.claim(store, partition, 10, Duration.ofMinutes(1));
		assertThat(claimed).extracting(ClaimedMessage::id).containsExactly(id);
		assertThat(Transitions.deadLetter(store, partition, id, claimed.get(0).leaseToken(), "failed")).isTrue();
		return partition;
	}

	public static NewMessage message(String id, Duration delay) {
		return NewMessage.afterDelay(id, delay, ("body of " + id).getBytes(StandardCharsets.UTF_8));
	}

	/** The first id with the prefix that falls in a partition of a count. */
	public static String idIn(int partition, int count, String prefix) {
		return IntStream.iterate(0, (i) -> i + 1)
			.mapToObj((i) -> prefix + i)
			.filter((id) -> TopicPartitions.indexOf(id, count) == partition)
			.findFirst()
			.orElseThrow();
	}

	@Override
	public void close() {
		this.stores.forEach(RedisMessageStore::close);
		this.connections.forEach(LettuceConnectionFactory::destroy);
	}

}

package io.github.delayqueue.runtime;

import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;
import io.lettuce.core.cluster.pubsub.RedisClusterPubSubAdapter;
import io.lettuce.core.cluster.pubsub.StatefulRedisClusterPubSubConnection;
import io.lettuce.core.codec.StringCodec;

import org.springframework.data.redis.RedisSystemException;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * Receives sharded wake-up signals on a Redis 7 Cluster: subscribes with
 * {@code SSUBSCRIBE} to the channel of each listened topic, on the node that holds the
 * topic, and passes each signal to {@link WakeUpSignals}. Lettuce only.
 */
final class ShardedSignalSubscription implements AutoCloseable {

	private final StatefulRedisClusterPubSubConnection<String, String> connection;

	private ShardedSignalSubscription(StatefulRedisClusterPubSubConnection<String, String> connection) {
		this.connection = connection;
	}

	/**
	 * Subscribes to the channels.
	 * @param connectionFactory a Lettuce connection factory of a Redis Cluster
	 * @param channels the topics' signal channels
	 * @param signals where the signals go
	 * @param timeout the longest wait for the subscription
	 * @return the subscription; close it to unsubscribe
	 * @throws IllegalStateException if the connection factory is not Lettuce's for a
	 * Cluster
	 * @throws RedisSystemException if the subscription fails or times out
	 */
	static ShardedSignalSubscription subscribe(RedisConnectionFactory connectionFactory, Collection<String> channels,
			WakeUpSignals signals, Duration timeout) {
		if (!(connectionFactory instanceof LettuceConnectionFactory lettuce)
				|| !(lettuce.getRequiredNativeClient() instanceof RedisClusterClient client)) {
			throw new IllegalStateException("Sharded wake-up signals need Lettuce on a Redis Cluster");
		}
		StatefulRedisClusterPubSubConnection<String, String> connection = client.connectPubSub(StringCodec.UTF8);
		connection.setNodeMessagePropagation(true);
		connection.addListener(new RedisClusterPubSubAdapter<>() {

			@Override
			public void smessage(RedisClusterNode node, String channel, String message) {
				signals.signal(message);
			}

		});
		try {
			// One channel per call: channels of different slots may not share one.
			List<CompletableFuture<Void>> subscribed = channels.stream()
				.map((channel) -> connection.async().ssubscribe(channel).toCompletableFuture())
				.toList();
			CompletableFuture.allOf(subscribed.toArray(CompletableFuture[]::new))
				.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
		}
		catch (InterruptedException ex) {
			connection.close();
			Thread.currentThread().interrupt();
			throw new RedisSystemException("Interrupted while subscribing to " + channels, ex);
		}
		catch (ExecutionException | TimeoutException ex) {
			connection.close();
			throw new RedisSystemException("Could not subscribe to the signal channels " + channels, ex);
		}
		return new ShardedSignalSubscription(connection);
	}

	@Override
	public void close() {
		this.connection.close();
	}

}

package io.github.delayqueue.runtime;

import java.time.Duration;
import java.util.Collection;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.event.ClusterTopologyChangedEvent;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;
import io.lettuce.core.cluster.pubsub.RedisClusterPubSubAdapter;
import io.lettuce.core.cluster.pubsub.StatefulRedisClusterPubSubConnection;
import io.lettuce.core.codec.StringCodec;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import reactor.core.Disposable;

import org.springframework.data.redis.RedisSystemException;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * Receives sharded wake-up signals on a Redis 7 Cluster: subscribes with
 * {@code SSUBSCRIBE} to the channel of each listened topic, on the node that holds the
 * topic, and passes each signal to {@link WakeUpSignals}. When the Cluster's topology
 * changes (a replica promoted after a failover, slots moved), it subscribes again, so
 * that each channel is heard on the node that holds it now. Lettuce only.
 */
final class ShardedSignalSubscription implements AutoCloseable {

	private static final Log logger = LogFactory.getLog(ShardedSignalSubscription.class);

	private final StatefulRedisClusterPubSubConnection<String, String> connection;

	private final Disposable topologyChanges;

	private ShardedSignalSubscription(StatefulRedisClusterPubSubConnection<String, String> connection,
			Disposable topologyChanges) {
		this.connection = connection;
		this.topologyChanges = topologyChanges;
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
			CompletableFuture.allOf(ssubscribe(connection, channels)).get(timeout.toMillis(), TimeUnit.MILLISECONDS);
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
		Disposable topologyChanges = client.getResources()
			.eventBus()
			.get()
			.filter(ClusterTopologyChangedEvent.class::isInstance)
			.subscribe((event) -> subscribeAgain(connection, channels));
		return new ShardedSignalSubscription(connection, topologyChanges);
	}

	/**
	 * Sends {@code SSUBSCRIBE} for each channel, one per call: channels of different
	 * slots may not share one.
	 */
	private static CompletableFuture<?>[] ssubscribe(StatefulRedisClusterPubSubConnection<String, String> connection,
			Collection<String> channels) {
		return channels.stream()
			.map((channel) -> connection.async().ssubscribe(channel).toCompletableFuture())
			.toArray(CompletableFuture[]::new);
	}

	private static void subscribeAgain(StatefulRedisClusterPubSubConnection<String, String> connection,
			Collection<String> channels) {
		logger.debug("The Redis Cluster topology changed: subscribing again to the signal channels " + channels);
		CompletableFuture.allOf(ssubscribe(connection, channels)).whenComplete((done, failure) -> {
			if (failure != null) {
				logger.warn("Could not subscribe again to the signal channels " + channels + " after a topology"
						+ " change; until the next change, brokers and listeners wake on their own schedule: "
						+ failure);
			}
		});
	}

	@Override
	public void close() {
		this.topologyChanges.dispose();
		this.connection.close();
	}

}

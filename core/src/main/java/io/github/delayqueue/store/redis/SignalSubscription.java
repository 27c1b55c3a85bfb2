package io.github.delayqueue.store.redis;

import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;

import io.github.delayqueue.store.WakeUpListener;
import io.github.delayqueue.time.Durations;
import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.RedisClient;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.event.ClusterTopologyChangedEvent;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;
import io.lettuce.core.cluster.pubsub.RedisClusterPubSubAdapter;
import io.lettuce.core.cluster.pubsub.StatefulRedisClusterPubSubConnection;
import io.lettuce.core.pubsub.RedisPubSubAdapter;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import io.lettuce.core.codec.StringCodec;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;

import org.springframework.data.redis.RedisSystemException;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * Receives the wake-up signals the scripts publish and passes each to a
 * {@link WakeUpListener}: {@code b<partition>} when a message became the earliest due
 * (wakes the partition's broker), {@code r<partition>} when messages became ready (wakes
 * its listener). Subscribes on a Lettuce pub/sub connection of its own, with
 * {@code SUBSCRIBE} to the prefix's channel, or, with sharded signals on a Redis 7
 * Cluster, with {@code SSUBSCRIBE} to the channel of each listened partition, on the node
 * that holds it. Lettuce subscribes again after it reconnects. On a Cluster, when the
 * topology changes (a replica promoted after a failover, slots moved), it subscribes anew
 * on a new connection, which finds each channel on the node that holds it now, and then
 * closes the old one. A try that fails or times out is made again a second later, until
 * one succeeds or the next change comes; the first subscription is made the same way, so
 * that Redis out of reach delays it, never the caller, and a close never waits for it.
 */
final class SignalSubscription implements AutoCloseable {

	private static final Log logger = LogFactory.getLog(SignalSubscription.class);

	private static final long RETRY_MILLIS = 1000;

	private static final int WARN_AFTER_FAILURES = 3;

	private final AbstractRedisClient client;

	private final boolean sharded;

	private final List<String> channels;

	private final WakeUpListener signals;

	private final Duration timeout;

	private final Executor retries = CompletableFuture.delayedExecutor(RETRY_MILLIS, TimeUnit.MILLISECONDS);

	/** Set while a renewal runs; a change meanwhile makes it run once more. */
	private final AtomicBoolean renewing = new AtomicBoolean();

	private final AtomicBoolean changedMeanwhile = new AtomicBoolean();

	/** Tries that failed since the last that worked. */
	private int failures;

	/** The subscribed connection; none until the first subscription worked. */
	private volatile @Nullable StatefulRedisPubSubConnection<String, String> connection;

	/** Completes when the first subscription worked. */
	private final CompletableFuture<Void> subscribed = new CompletableFuture<>();

	private volatile @Nullable Disposable topologyChanges;

	private volatile boolean closed;

	private SignalSubscription(AbstractRedisClient client, boolean sharded, Collection<String> channels,
			WakeUpListener signals, Duration timeout) {
		this.client = client;
		this.sharded = sharded;
		this.channels = List.copyOf(channels);
		this.signals = signals;
		this.timeout = timeout;
	}

	/**
	 * Subscribes to the channels, in the background: returns once subscribed, or after
	 * the timeout with the subscription tried again every second until it works, which is
	 * logged at WARN.
	 * @param connectionFactory a Lettuce connection factory
	 * @param sharded whether the channels are sharded ({@code SSUBSCRIBE}, a Redis 7
	 * Cluster) rather than plain ({@code SUBSCRIBE})
	 * @param channels the channels
	 * @param signals where the signals go
	 * @param timeout the longest wait for the subscription
	 * @return the subscription; close it to unsubscribe
	 * @throws IllegalStateException if the connection factory is not Lettuce's, or not
	 * for a Cluster with sharded signals
	 */
	static SignalSubscription subscribe(RedisConnectionFactory connectionFactory, boolean sharded,
			Collection<String> channels, WakeUpListener signals, Duration timeout) {
		if (!(connectionFactory instanceof LettuceConnectionFactory lettuce)) {
			throw new IllegalStateException("Wake-up signals need Lettuce, but the connection factory is a "
					+ connectionFactory.getClass().getName());
		}
		AbstractRedisClient client = lettuce.getRequiredNativeClient();
		if (sharded && !(client instanceof RedisClusterClient)) {
			throw new IllegalStateException("Sharded wake-up signals need Lettuce on a Redis Cluster");
		}
		SignalSubscription subscription = new SignalSubscription(client, sharded, channels, signals, timeout);
		if (client instanceof RedisClusterClient cluster) {
			subscription.topologyChanges = cluster.getResources()
				.eventBus()
				.get()
				.filter(ClusterTopologyChangedEvent.class::isInstance)
				.subscribe((event) -> subscription.topologyChanged());
		}
		subscription.topologyChanged();
		try {
			subscription.subscribed.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
		catch (ExecutionException | TimeoutException ex) {
			logger.warn("Could not subscribe to the signal channels " + subscription.channels + " within "
					+ Durations.format(timeout) + "; trying on every second, while brokers and listeners wake on"
					+ " their own schedule");
		}
		return subscription;
	}

	/**
	 * Passes one signal on; an empty or unknown one is ignored.
	 * @param body the signal: {@code b<partition>} or {@code r<partition>}
	 * @param listener where it goes
	 */
	static void deliver(String body, WakeUpListener listener) {
		if (body.isEmpty()) {
			return;
		}
		if (logger.isTraceEnabled()) {
			logger.trace("Wake-up signal " + body);
		}
		String partition = body.substring(1);
		switch (body.charAt(0)) {
			case 'b' -> listener.earlierMessage(partition);
			case 'r' -> listener.readyMessages(partition);
			default -> {
			}
		}
	}

	/**
	 * A new connection subscribed to every channel: one {@code SSUBSCRIBE} per sharded
	 * channel (channels of different slots may not share one), or one {@code SUBSCRIBE}.
	 */
	private StatefulRedisPubSubConnection<String, String> open() {
		WakeUpListener target = this.signals;
		StatefulRedisPubSubConnection<String, String> opened;
		List<CompletableFuture<?>> subscribed;
		if (this.client instanceof RedisClusterClient cluster) {
			StatefulRedisClusterPubSubConnection<String, String> clusterConnection = cluster
				.connectPubSub(StringCodec.UTF8);
			opened = clusterConnection;
			if (this.sharded) {
				clusterConnection.setNodeMessagePropagation(true);
				clusterConnection.addListener(new RedisClusterPubSubAdapter<>() {

					@Override
					public void smessage(RedisClusterNode node, String channel, String message) {
						deliver(message, target);
					}

				});
				subscribed = this.channels.stream()
					.<CompletableFuture<?>>map(
							(channel) -> clusterConnection.async().ssubscribe(channel).toCompletableFuture())
					.toList();
			}
			else {
				subscribed = plain(clusterConnection, target);
			}
		}
		else {
			opened = ((RedisClient) this.client).connectPubSub(StringCodec.UTF8);
			subscribed = plain(opened, target);
		}
		try {
			CompletableFuture.allOf(subscribed.toArray(CompletableFuture[]::new))
				.get(this.timeout.toMillis(), TimeUnit.MILLISECONDS);
			return opened;
		}
		catch (InterruptedException ex) {
			opened.closeAsync();
			Thread.currentThread().interrupt();
			throw new RedisSystemException("Interrupted while subscribing to " + this.channels, ex);
		}
		catch (ExecutionException | TimeoutException ex) {
			opened.closeAsync();
			throw new RedisSystemException("Could not subscribe to the signal channels " + this.channels, ex);
		}
	}

	/** Subscribes to the channels with {@code SUBSCRIBE}. */
	private List<CompletableFuture<?>> plain(StatefulRedisPubSubConnection<String, String> connection,
			WakeUpListener target) {
		connection.addListener(new RedisPubSubAdapter<>() {

			@Override
			public void message(String channel, String message) {
				deliver(message, target);
			}

		});
		return List.of(connection.async().subscribe(this.channels.toArray(String[]::new)).toCompletableFuture());
	}

	private void topologyChanged() {
		this.changedMeanwhile.set(true);
		if (this.renewing.compareAndSet(false, true)) {
			CompletableFuture.runAsync(this::renew);
		}
	}

	/**
	 * Subscribes on a new connection, and closes the old one once that has worked; tries
	 * again a second later if it did not, or if the topology changed meanwhile.
	 */
	private void renew() {
		this.changedMeanwhile.set(false);
		boolean again;
		try {
			StatefulRedisPubSubConnection<String, String> renewed = open();
			StatefulRedisPubSubConnection<String, String> old = this.connection;
			this.connection = renewed;
			if (old != null) {
				old.closeAsync();
			}
			if (this.closed) {
				renewed.closeAsync();
			}
			if (!this.subscribed.complete(null)) {
				logger.debug("Subscribed anew to the signal channels " + this.channels);
			}
			this.failures = 0;
			again = this.changedMeanwhile.get();
		}
		catch (RuntimeException ex) {
			if (++this.failures == WARN_AFTER_FAILURES) {
				logger.warn("Could not subscribe to the signal channels " + this.channels + ", " + this.failures
						+ " tries so far; trying on every second, while brokers and listeners wake on their own"
						+ " schedule: " + ex.getMessage());
			}
			again = true;
		}
		if (again && !this.closed) {
			this.retries.execute(this::renew);
		}
		else {
			this.renewing.set(false);
			if (this.changedMeanwhile.get() && !this.closed) {
				topologyChanged();
			}
		}
	}

	@Override
	public void close() {
		this.closed = true;
		Disposable changes = this.topologyChanges;
		if (changes != null) {
			changes.dispose();
		}
		StatefulRedisPubSubConnection<String, String> subscribedConnection = this.connection;
		if (subscribedConnection != null) {
			subscribedConnection.closeAsync();
		}
	}

}

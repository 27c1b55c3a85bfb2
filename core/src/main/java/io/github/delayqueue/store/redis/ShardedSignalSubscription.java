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
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.event.ClusterTopologyChangedEvent;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;
import io.lettuce.core.cluster.pubsub.RedisClusterPubSubAdapter;
import io.lettuce.core.cluster.pubsub.StatefulRedisClusterPubSubConnection;
import io.lettuce.core.codec.StringCodec;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;

import org.springframework.data.redis.RedisSystemException;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * Receives sharded wake-up signals on a Redis 7 Cluster: subscribes with
 * {@code SSUBSCRIBE} to the channel of each listened topic, on the node that holds the
 * topic, and passes each signal to a {@link WakeUpListener}. When the Cluster's topology
 * changes (a replica promoted after a failover, slots moved), it subscribes anew on a new
 * connection, which finds each channel on the node that holds it now, and then closes the
 * old one; a try that fails or times out (the topology may still be settling) is made
 * again a second later, until one succeeds or the next change comes. The first
 * subscription is made the same way, so that Redis out of reach at the start delays it,
 * never the caller. Lettuce only.
 */
final class ShardedSignalSubscription implements AutoCloseable {

	private static final Log logger = LogFactory.getLog(ShardedSignalSubscription.class);

	private static final long RETRY_MILLIS = 1000;

	private static final int WARN_AFTER_FAILURES = 3;

	private final RedisClusterClient client;

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
	private volatile @Nullable StatefulRedisClusterPubSubConnection<String, String> connection;

	/** Completes when the first subscription worked. */
	private final CompletableFuture<Void> subscribed = new CompletableFuture<>();

	private volatile @Nullable Disposable topologyChanges;

	private volatile boolean closed;

	private ShardedSignalSubscription(RedisClusterClient client, Collection<String> channels, WakeUpListener signals,
			Duration timeout) {
		this.client = client;
		this.channels = List.copyOf(channels);
		this.signals = signals;
		this.timeout = timeout;
	}

	/**
	 * Subscribes to the channels, in the background: returns once subscribed; fails if
	 * the first try fails (Redis refuses: a start without Redis gets a clear answer);
	 * returns after the timeout if Redis does not answer by then, the subscription tried
	 * again every second until it works, which is logged at WARN.
	 * @param connectionFactory a Lettuce connection factory of a Redis Cluster
	 * @param channels the topics' signal channels
	 * @param signals where the signals go
	 * @param timeout the longest wait for the subscription
	 * @return the subscription; close it to unsubscribe
	 * @throws IllegalStateException if the connection factory is not Lettuce's for a
	 * Cluster
	 * @throws RedisSystemException if the first try failed
	 */
	static ShardedSignalSubscription subscribe(RedisConnectionFactory connectionFactory, Collection<String> channels,
			WakeUpListener signals, Duration timeout) {
		if (!(connectionFactory instanceof LettuceConnectionFactory lettuce)
				|| !(lettuce.getRequiredNativeClient() instanceof RedisClusterClient client)) {
			throw new IllegalStateException("Sharded wake-up signals need Lettuce on a Redis Cluster");
		}
		ShardedSignalSubscription subscription = new ShardedSignalSubscription(client, channels, signals, timeout);
		subscription.topologyChanges = client.getResources()
			.eventBus()
			.get()
			.filter(ClusterTopologyChangedEvent.class::isInstance)
			.subscribe((event) -> subscription.topologyChanged());
		subscription.topologyChanged();
		try {
			subscription.subscribed.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
		catch (ExecutionException ex) {
			// Redis refused: a clear answer, as a start without Redis should get.
			subscription.close();
			if (ex.getCause() instanceof RuntimeException failure) {
				throw failure;
			}
			throw new RedisSystemException("Could not subscribe to the signal channels " + channels, ex.getCause());
		}
		catch (TimeoutException ex) {
			logger.warn("Could not subscribe to the signal channels " + subscription.channels + " within "
					+ Durations.format(timeout) + "; trying on every second, while brokers and listeners wake on"
					+ " their own schedule");
		}
		return subscription;
	}

	/**
	 * A new connection subscribed to every channel, one {@code SSUBSCRIBE} per channel
	 * (channels of different slots may not share one).
	 */
	private StatefulRedisClusterPubSubConnection<String, String> open() {
		StatefulRedisClusterPubSubConnection<String, String> opened = this.client.connectPubSub(StringCodec.UTF8);
		opened.setNodeMessagePropagation(true);
		WakeUpListener target = this.signals;
		opened.addListener(new RedisClusterPubSubAdapter<>() {

			@Override
			public void smessage(RedisClusterNode node, String channel, String message) {
				RedisSignals.deliver(message, target);
			}

		});
		try {
			CompletableFuture
				.allOf(this.channels.stream()
					.map((channel) -> opened.async().ssubscribe(channel).toCompletableFuture())
					.toArray(CompletableFuture[]::new))
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
		if (this.closed) {
			this.renewing.set(false);
			return;
		}
		this.changedMeanwhile.set(false);
		boolean again;
		try {
			StatefulRedisClusterPubSubConnection<String, String> renewed = open();
			StatefulRedisClusterPubSubConnection<String, String> old = this.connection;
			this.connection = renewed;
			if (old != null) {
				old.closeAsync();
			}
			if (this.closed) {
				renewed.closeAsync();
			}
			if (!this.subscribed.complete(null)) {
				logger.debug(
						"The Redis Cluster topology changed: subscribed anew to the signal channels " + this.channels);
			}
			this.failures = 0;
			again = this.changedMeanwhile.get();
		}
		catch (RuntimeException ex) {
			// The first try's failure is its caller's answer.
			this.subscribed.completeExceptionally(ex);
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
		StatefulRedisClusterPubSubConnection<String, String> subscribedConnection = this.connection;
		if (subscribedConnection != null) {
			subscribedConnection.close();
		}
	}

}

package io.github.delayqueue.store.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import io.github.delayqueue.store.WakeUpListener;
import io.github.delayqueue.time.Durations;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.core.task.SyncTaskExecutor;
import org.springframework.dao.DataAccessException;
import org.springframework.data.redis.RedisSystemException;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.listener.ChannelTopic;
import org.springframework.data.redis.listener.RedisMessageListenerContainer;

/**
 * The wake-up signals the scripts publish: {@code b<partition>} when a message became the
 * earliest due (wakes the partition's broker), {@code r<partition>} when messages became
 * ready (wakes its listener). Subscribes to the prefix's channel with {@code SUBSCRIBE}
 * and reads each signal; {@link ShardedSignalSubscription} does the same for sharded
 * channels.
 */
final class RedisSignals {

	private static final Log logger = LogFactory.getLog(RedisSignals.class);

	private RedisSignals() {
	}

	/**
	 * Subscribes to the prefix's signal channel, on a thread of its own: returns once
	 * subscribed; fails if Redis refuses (a start without Redis gets a clear answer);
	 * returns after the timeout if Redis does not answer by then, the subscription still
	 * being made in the background (Spring Data Redis' listener container tries again
	 * until Redis answers), which is logged at WARN. Closing returns at once.
	 * @param connectionFactory the Redis connection factory
	 * @param channel the prefix's signal channel
	 * @param listener where the signals go
	 * @param timeout the longest wait for the subscription
	 * @return the subscription; close it to unsubscribe
	 * @throws DataAccessException if Redis refused the subscription
	 */
	static AutoCloseable subscribe(RedisConnectionFactory connectionFactory, String channel, WakeUpListener listener,
			Duration timeout) {
		RedisMessageListenerContainer container = new RedisMessageListenerContainer();
		container.setConnectionFactory(connectionFactory);
		// A signal only queues a task on the scheduler: pass it on where it arrives,
		// rather than on a new thread per message (the container's default), which a
		// burst of signals would flood.
		container.setTaskExecutor(new SyncTaskExecutor());
		container.addMessageListener(
				(message, pattern) -> deliver(new String(message.getBody(), StandardCharsets.UTF_8), listener),
				new ChannelTopic(channel));
		container.afterPropertiesSet();
		CompletableFuture<Void> started = new CompletableFuture<>();
		Thread subscriber = new Thread(() -> {
			try {
				container.start();
				started.complete(null);
			}
			catch (Throwable ex) {
				started.completeExceptionally(ex);
			}
		}, "delay-queue-signals");
		subscriber.setDaemon(true);
		subscriber.start();
		try {
			started.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
		catch (TimeoutException ex) {
			logger.warn("Could not subscribe to the wake-up signal channel '" + channel + "' within "
					+ Durations.format(timeout) + "; subscribing in the background until Redis answers, while brokers"
					+ " and listeners wake on their own schedule");
		}
		catch (ExecutionException ex) {
			// Redis refused: a clear answer, as a start without Redis should get.
			destroyInBackground(container);
			if (ex.getCause() instanceof RuntimeException failure) {
				throw failure;
			}
			throw new RedisSystemException("Could not subscribe to the wake-up signal channel '" + channel + "'",
					ex.getCause());
		}
		return () -> destroyInBackground(container);
	}

	/**
	 * Destroys the container on a thread of its own: while its first subscription is
	 * still being made, the container holds a lock its destruction waits for until the
	 * client gives up connecting.
	 */
	private static void destroyInBackground(RedisMessageListenerContainer container) {
		Thread destroyer = new Thread(() -> {
			try {
				container.destroy();
			}
			catch (Exception ex) {
				logger.debug("Closing the wake-up signal subscription failed: " + ex);
			}
		}, "delay-queue-signals-close");
		destroyer.setDaemon(true);
		destroyer.start();
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

}

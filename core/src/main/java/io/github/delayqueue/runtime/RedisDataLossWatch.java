package io.github.delayqueue.runtime;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

import io.github.delayqueue.metrics.DelayQueueMetrics;
import io.github.delayqueue.store.MessageStore;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.context.SmartLifecycle;
import org.springframework.scheduling.concurrent.CustomizableThreadFactory;

/**
 * Notices when Redis lost the queue's data: every {@link #CHECK_INTERVAL} it reads the
 * marker the store keeps beside the queue ({@link MessageStore#datasetMarker()}, written
 * by the first instance to read it); a marker other than the one read before means it was
 * gone. The loss is said once per loss, loudly: an ERROR with its likely causes, the
 * {@code delay.queue.redis.data.lost} counter, and {@link #lastLoss()} for the health
 * check and the dashboard; then what is to be restored is told ({@link #onLoss}).
 * Messages stored before are lost; what the application declares (schedules, dead-letter
 * watches, partition counts) is restored by the components that keep it, each within
 * seconds, whether this watch noticed or not (a Redis Cluster node that lost its data
 * while the marker's node did not). Runs on a daemon thread of its own.
 */
public final class RedisDataLossWatch implements SmartLifecycle {

	private static final Log logger = LogFactory.getLog(RedisDataLossWatch.class);

	/** How often the marker is read. */
	public static final Duration CHECK_INTERVAL = Duration.ofSeconds(5);

	private final MessageStore store;

	private final DelayQueueMetrics metrics;

	private final List<Runnable> onLoss = new CopyOnWriteArrayList<>();

	private @Nullable ScheduledThreadPoolExecutor executor;

	private final Object looking = new Object();

	/** The marker read last. Guarded by {@link #looking}. */
	private @Nullable String marker;

	private volatile @Nullable Loss lastLoss;

	/**
	 * Creates the watch.
	 * @param store the store whose marker it reads
	 * @param metrics where a loss is counted
	 */
	public RedisDataLossWatch(MessageStore store, DelayQueueMetrics metrics) {
		this.store = store;
		this.metrics = metrics;
	}

	/**
	 * Adds what to run once a loss was noticed, such as looking at the schedules at once.
	 * @param restore what to run, on the watch's thread
	 */
	public void onLoss(Runnable restore) {
		this.onLoss.add(restore);
	}

	/**
	 * @return the last loss noticed since this application started, or {@code null}
	 */
	public @Nullable Loss lastLoss() {
		return this.lastLoss;
	}

	@Override
	public synchronized void start() {
		if (this.executor != null) {
			return;
		}
		CustomizableThreadFactory threads = new CustomizableThreadFactory("delay-queue-data-watch-");
		threads.setDaemon(true);
		ScheduledThreadPoolExecutor executor = new ScheduledThreadPoolExecutor(1, threads);
		executor.setRemoveOnCancelPolicy(true);
		this.executor = executor;
		executor.scheduleWithFixedDelay(this::checkQuietly, 0, CHECK_INTERVAL.toMillis(), TimeUnit.MILLISECONDS);
	}

	@Override
	public void stop() {
		ScheduledThreadPoolExecutor executor;
		synchronized (this) {
			executor = this.executor;
			this.executor = null;
		}
		if (executor != null) {
			executor.shutdownNow();
		}
	}

	@Override
	public synchronized boolean isRunning() {
		return this.executor != null;
	}

	private void checkQuietly() {
		try {
			check();
		}
		catch (RuntimeException ex) {
			// Redis out of reach: the components that call it report that.
			logger.debug("Could not read the marker of the queue's data", ex);
		}
	}

	/**
	 * Reads the marker once, on the caller's thread; reports a loss if it changed.
	 * @return whether a loss was noticed
	 */
	public boolean check() {
		String now;
		String before;
		// One look at a time: two answered out of order would look like a step back.
		synchronized (this.looking) {
			now = this.store.datasetMarker();
			before = this.marker;
			this.marker = now;
		}
		if (before == null || !isLoss(before, now)) {
			return false;
		}
		boolean gone = !identity(before).equals(identity(now));
		Loss loss = new Loss(Instant.now(),
				gone ? "Redis lost the delay queue's data: the marker written beside it (" + since(before)
						+ ") is gone. Redis restarted without persistence (turn on appendonly), was flushed"
						+ " (FLUSHALL, FLUSHDB), or failed over to a replica that had not copied the data."
						: "Redis went back in time: the marker beside the delay queue's data counts fewer looks than"
								+ " this application saw. Redis restarted from an older snapshot (turn on appendonly),"
								+ " or failed over to a replica that was behind.");
		loss = new Loss(loss.noticedAt(),
				loss.message() + " Messages stored before (or, for a step back, since"
						+ " that snapshot) are lost; the schedules, dead-letter watches and partition counts this"
						+ " application declares are being restored");
		this.lastLoss = loss;
		logger.error(loss.message());
		this.metrics.redisDataLost();
		this.onLoss.forEach(Runnable::run);
		return true;
	}

	/**
	 * Whether the marker read now says that data was lost since the one read before: it
	 * is another marker, or the same one counting no more looks.
	 */
	private static boolean isLoss(String before, String now) {
		return !identity(before).equals(identity(now)) || looks(now) <= looks(before);
	}

	/** The marker without its count of looks. */
	private static String identity(String marker) {
		int end = marker.lastIndexOf(':');
		return (end < 0) ? marker : marker.substring(0, end);
	}

	private static long looks(String marker) {
		try {
			return Long.parseLong(marker.substring(marker.lastIndexOf(':') + 1));
		}
		catch (NumberFormatException ex) {
			return 0;
		}
	}

	/** When a marker was written, as far as it tells. */
	private static String since(String marker) {
		String identity = identity(marker);
		try {
			return "written " + Instant.ofEpochMilli(Long.parseLong(identity.substring(identity.lastIndexOf(':') + 1)));
		}
		catch (NumberFormatException ex) {
			return marker;
		}
	}

	/**
	 * A loss of the queue's data in Redis, as noticed here.
	 *
	 * @param noticedAt when this application noticed it
	 * @param message what happened, its likely causes and what is done about it
	 */
	public record Loss(Instant noticedAt, String message) {
	}

}

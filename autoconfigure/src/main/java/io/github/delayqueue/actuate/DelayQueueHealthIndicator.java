package io.github.delayqueue.actuate;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.delayqueue.runtime.DelayQueueRuntime;
import io.github.delayqueue.runtime.ListenerState;
import io.github.delayqueue.store.RedisMessageStore;
import io.github.delayqueue.store.TopicStats;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;

/**
 * The {@code delayQueue} health contributor: {@code DOWN} when Redis does not answer, a
 * topic's listener in this application has died, or this application does not agree with
 * Redis on a listener topic's number of partitions; with a maximum lateness set, the
 * lateness status (by default {@code OUT_OF_SERVICE}) when a topic's oldest waiting
 * message is later than that. Its details give, for each topic with a listener here, the
 * listener's state and the topic's counts. It reads one small script per such topic and
 * never scans Redis.
 * <p>
 * It answers within a timeout of its own, whatever the Redis client's command timeout is:
 * the check runs on one of two daemon threads, and is {@code DOWN} when Redis has not
 * answered in time or when both threads are still busy with earlier checks. Close it to
 * stop those threads.
 */
public class DelayQueueHealthIndicator extends AbstractHealthIndicator implements AutoCloseable {

	private static final int CHECK_THREADS = 2;

	private static final long IDLE_THREAD_SECONDS = 60;

	private final RedisMessageStore store;

	private final DelayQueueRuntime runtime;

	private final @Nullable Duration maxLateness;

	private final Status latenessStatus;

	private final Duration timeout;

	private final ThreadPoolExecutor checks;

	/**
	 * Creates the health contributor.
	 * @param store the Redis store
	 * @param runtime the listeners of this application
	 * @param maxLateness how late a topic's oldest waiting message may be, or
	 * {@code null} for no limit
	 * @param latenessStatus the status when a topic is later than that
	 * @param timeout how long to wait for Redis before reporting {@code DOWN}
	 */
	public DelayQueueHealthIndicator(RedisMessageStore store, DelayQueueRuntime runtime, @Nullable Duration maxLateness,
			Status latenessStatus, Duration timeout) {
		super("Delay queue health check failed");
		this.store = store;
		this.runtime = runtime;
		this.maxLateness = maxLateness;
		this.latenessStatus = latenessStatus;
		this.timeout = timeout;
		this.checks = new ThreadPoolExecutor(0, CHECK_THREADS, IDLE_THREAD_SECONDS, TimeUnit.SECONDS,
				new SynchronousQueue<>(), daemonThreads());
	}

	private static ThreadFactory daemonThreads() {
		AtomicInteger count = new AtomicInteger();
		return (task) -> {
			Thread thread = new Thread(task, "delay-queue-health-" + count.incrementAndGet());
			thread.setDaemon(true);
			return thread;
		};
	}

	@Override
	protected void doHealthCheck(Health.Builder builder) throws Exception {
		Future<Health> check;
		try {
			check = this.checks.submit(this::check);
		}
		catch (RejectedExecutionException ex) {
			builder.down().withDetail("error", "Earlier health checks are still waiting for Redis");
			return;
		}
		try {
			Health health = check.get(this.timeout.toNanos(), TimeUnit.NANOSECONDS);
			builder.status(health.getStatus()).withDetails(health.getDetails());
		}
		catch (TimeoutException ex) {
			check.cancel(true);
			builder.down()
				.withDetail("error",
						"Redis did not answer within " + this.timeout.toMillis() + " ms (delay-queue.health.timeout)");
		}
		catch (ExecutionException ex) {
			throw (ex.getCause() instanceof Exception cause) ? cause : ex;
		}
		catch (InterruptedException ex) {
			check.cancel(true);
			Thread.currentThread().interrupt();
			throw ex;
		}
	}

	private Health check() {
		Health.Builder builder = new Health.Builder();
		Map<String, ListenerState> listeners = this.runtime.getListenerStates();
		if (listeners.isEmpty()) {
			this.store.ping();
			return builder.up().build();
		}
		boolean listenersStarted = this.runtime.isRunning();
		Map<String, Map<String, Object>> topics = new LinkedHashMap<>();
		List<String> died = new ArrayList<>();
		List<String> late = new ArrayList<>();
		listeners.forEach((topic, state) -> {
			TopicStats stats = this.store.inspector(topic).stats();
			Duration lateness = stats.oldestLateness();
			Map<String, Object> details = new LinkedHashMap<>();
			details.put("listener", state.name().toLowerCase(Locale.ROOT));
			details.put("scheduled", stats.scheduled());
			details.put("ready", stats.ready());
			details.put("inFlight", stats.inFlight());
			details.put("dead", stats.dead());
			details.put("oldestLateness", lateness.toString());
			topics.put(topic, details);
			if (listenersStarted && state == ListenerState.STOPPED) {
				died.add(topic);
			}
			if (this.maxLateness != null && lateness.compareTo(this.maxLateness) > 0) {
				late.add(topic);
			}
		});
		Map<String, String> partitionCounts = this.runtime.getPartitionCountProblems();
		if (!died.isEmpty() || !partitionCounts.isEmpty()) {
			builder.down();
			if (!died.isEmpty()) {
				builder.withDetail("stoppedListeners", died);
			}
			if (!partitionCounts.isEmpty()) {
				builder.withDetail("partitionCounts", partitionCounts);
			}
		}
		else if (!late.isEmpty()) {
			builder.status(this.latenessStatus);
		}
		else {
			builder.up();
		}
		if (!late.isEmpty()) {
			builder.withDetail("late", late).withDetail("maxLateness", String.valueOf(this.maxLateness));
		}
		return builder.withDetail("topics", topics).build();
	}

	/**
	 * Stops the threads that run the checks; a check still waiting for Redis is
	 * interrupted.
	 */
	@Override
	public void close() {
		this.checks.shutdownNow();
	}

}

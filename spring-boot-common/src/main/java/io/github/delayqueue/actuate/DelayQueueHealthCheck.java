package io.github.delayqueue.actuate;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
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
import io.github.delayqueue.runtime.RedisDataLossWatch;
import io.github.delayqueue.store.MessageStore;
import io.github.delayqueue.store.PartialStats;
import io.github.delayqueue.store.PartitionCountException;
import io.github.delayqueue.store.TopicInspector;
import io.github.delayqueue.store.TopicStats;
import org.jspecify.annotations.Nullable;

/**
 * The delay queue's health, apart from Spring Boot's health API (which differs between
 * Spring Boot 3 and 4): {@link Verdict#DOWN} when Redis does not answer, a topic's
 * listener in this application has died, or this application does not agree with Redis on
 * a listener topic's number of partitions; {@link Verdict#LATE} with a maximum lateness
 * set, when a topic's oldest waiting message is later than that. Its details give, for
 * each topic with a listener here, the listener's state and the topic's counts, and the
 * last time Redis was found to have lost the queue's data ({@code redisDataLost}: the
 * queue works again, and that is no reason to stop the application, so the verdict
 * stays). It reads one small script per partition of each such topic, all at once, and
 * never scans Redis.
 * <p>
 * A partition that does not answer (on a Redis Cluster with a primary down) makes the
 * verdict {@code DOWN}, its messages being neither sent nor delivered; the details then
 * name each primary with its partitions ({@code error}, {@code unreachable}), and each
 * topic has a {@code status} of its own with its counts over the partitions that answered
 * and the partitions that did not.
 * <p>
 * It answers within a timeout of its own, whatever the Redis client's command timeout is:
 * the check runs on one of two daemon threads, and is {@code DOWN} when Redis has not
 * answered in time or when both threads are still busy with earlier checks. Close it to
 * stop those threads.
 */
public final class DelayQueueHealthCheck implements AutoCloseable {

	private static final int CHECK_THREADS = 2;

	private static final long IDLE_THREAD_SECONDS = 60;

	private final MessageStore store;

	private final DelayQueueRuntime runtime;

	private final @Nullable Duration maxLateness;

	private final Duration timeout;

	private final ThreadPoolExecutor checks;

	private final @Nullable RedisDataLossWatch dataLoss;

	private final Collection<String> declaredTopics;

	/**
	 * Creates the check.
	 * @param store the Redis store
	 * @param runtime the listeners of this application
	 * @param maxLateness how late a topic's oldest waiting message may be, or
	 * {@code null} for no limit
	 * @param timeout how long to wait for Redis before reporting {@code DOWN}
	 * @param dataLoss what tells when Redis lost the queue's data (its last loss is a
	 * detail), or {@code null}
	 */
	public DelayQueueHealthCheck(MessageStore store, DelayQueueRuntime runtime, @Nullable Duration maxLateness,
			Duration timeout, @Nullable RedisDataLossWatch dataLoss) {
		this(store, runtime, maxLateness, timeout, dataLoss, List.of());
	}

	/**
	 * Creates the check of the topics listened to and of others.
	 * @param store the Redis store
	 * @param runtime the listeners of this application
	 * @param maxLateness how late a topic's oldest waiting message may be, or
	 * {@code null} for no limit
	 * @param timeout how long to wait for Redis before reporting {@code DOWN}
	 * @param dataLoss what tells when Redis lost the queue's data (its last loss is a
	 * detail), or {@code null}
	 * @param declaredTopics topics to check too, whether or not they are listened to here
	 * (their listener reads {@code none} when they are not)
	 */
	public DelayQueueHealthCheck(MessageStore store, DelayQueueRuntime runtime, @Nullable Duration maxLateness,
			Duration timeout, @Nullable RedisDataLossWatch dataLoss, Collection<String> declaredTopics) {
		this.declaredTopics = List.copyOf(declaredTopics);
		this.store = store;
		this.dataLoss = dataLoss;
		this.runtime = runtime;
		this.maxLateness = maxLateness;
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

	/**
	 * Checks the delay queue's health, waiting for Redis at most the timeout.
	 * @return the verdict and its details
	 * @throws Exception what the check failed with, when Redis answered with an error
	 */
	public Health check() throws Exception {
		Future<Health> check;
		try {
			check = this.checks.submit(this::checkNow);
		}
		catch (RejectedExecutionException ex) {
			return Health.down("Earlier health checks are still waiting for Redis");
		}
		try {
			return check.get(this.timeout.toNanos(), TimeUnit.NANOSECONDS);
		}
		catch (TimeoutException ex) {
			check.cancel(true);
			return Health
				.down("Redis did not answer within " + this.timeout.toMillis() + " ms (delay-queue.health.timeout)");
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

	private Health checkNow() {
		Health health = checkListeners();
		RedisDataLossWatch.Loss loss = (this.dataLoss != null) ? this.dataLoss.lastLoss() : null;
		if (loss == null) {
			return health;
		}
		Map<String, Object> details = new LinkedHashMap<>(health.details());
		details.put("redisDataLost", Map.of("noticedAt", loss.noticedAt().toString(), "message", loss.message()));
		return new Health(health.verdict(), details);
	}

	private Health checkListeners() {
		Map<String, @Nullable ListenerState> listeners = new LinkedHashMap<>(this.runtime.getListenerStates());
		// A topic nobody listens to here is checked too when declared: its lateness grows
		// where no broker moves its due messages.
		this.declaredTopics.forEach((topic) -> listeners.putIfAbsent(topic, null));
		if (listeners.isEmpty()) {
			this.store.ping();
			return new Health(Verdict.UP, Map.of());
		}
		// Every partition of every topic at once, collected a little before the check's
		// own timeout: a partition that has not answered by then is named, and the
		// others are shown.
		Duration wait = this.timeout.minus(this.timeout.dividedBy(10));
		long deadline = System.nanoTime() + wait.toNanos();
		Map<String, TopicInspector> inspectors = new LinkedHashMap<>();
		Map<String, Map<String, CompletableFuture<TopicStats>>> reads = new LinkedHashMap<>();
		listeners.keySet().forEach((topic) -> {
			TopicInspector inspector = this.store.inspector(topic);
			inspectors.put(topic, inspector);
			reads.put(topic, inspector.readPartitions());
		});
		boolean listenersStarted = this.runtime.isRunning();
		Map<String, Map<String, Object>> topics = new LinkedHashMap<>();
		List<String> died = new ArrayList<>();
		List<String> late = new ArrayList<>();
		List<String> refusedCounts = new ArrayList<>();
		Map<String, List<String>> unreachable = new TreeMap<>();
		listeners.forEach((topic, state) -> {
			Map<String, Object> details = new LinkedHashMap<>();
			details.put("listener", (state != null) ? state.name().toLowerCase(Locale.ROOT) : "none");
			Verdict topicVerdict = Verdict.UP;
			if (listenersStarted && state == ListenerState.STOPPED) {
				died.add(topic);
				topicVerdict = Verdict.DOWN;
			}
			PartialStats partial;
			try {
				partial = PartialStats.await(inspectors.get(topic), reads.get(topic), deadline, this.timeout);
			}
			catch (PartitionCountException ex) {
				// A topic nobody listens to here has its count set by the first send or
				// listener: until then it reads as another count, which is no outage.
				details.put("status", (state != null) ? Verdict.DOWN.name() : "UNKNOWN");
				details.put("error", ex.getMessage());
				if (state != null) {
					refusedCounts.add(topic);
				}
				topics.put(topic, details);
				return;
			}
			TopicStats stats = partial.stats();
			if (stats != null) {
				Duration lateness = stats.oldestLateness();
				details.put("scheduled", stats.scheduled());
				details.put("ready", stats.ready());
				details.put("inFlight", stats.inFlight());
				details.put("dead", stats.dead());
				details.put("oldestLateness", lateness.toString());
				if (this.maxLateness != null && lateness.compareTo(this.maxLateness) > 0) {
					late.add(topic);
					topicVerdict = (topicVerdict == Verdict.UP) ? Verdict.LATE : topicVerdict;
				}
			}
			if (!partial.complete()) {
				topicVerdict = Verdict.DOWN;
				details.put("unreachable", EndpointReplies.unreachable(partial.unreachable()));
				partial.unreachable()
					.values()
					.forEach((failure) -> unreachable
						.computeIfAbsent(EndpointReplies.server(failure), (server) -> new ArrayList<>())
						.add(failure.partition()));
			}
			details.put("status", topicVerdict.name());
			topics.put(topic, details);
		});
		Map<String, Object> details = new LinkedHashMap<>();
		Map<String, String> partitionCounts = this.runtime.getPartitionCountProblems();
		boolean staleCounts = !partitionCounts.isEmpty() || !refusedCounts.isEmpty();
		Verdict verdict;
		if (!died.isEmpty() || staleCounts || !unreachable.isEmpty()) {
			verdict = Verdict.DOWN;
			if (!unreachable.isEmpty()) {
				boolean othersAnswered = topics.values().stream().anyMatch((topic) -> topic.containsKey("scheduled"));
				details.put("error",
						unreachableText(unreachable) + (othersAnswered ? "; the other partitions answered" : ""));
				details.put("unreachable", unreachable);
			}
			if (!died.isEmpty()) {
				details.put("stoppedListeners", died);
			}
			if (!partitionCounts.isEmpty()) {
				details.put("partitionCounts", partitionCounts);
			}
		}
		else {
			verdict = late.isEmpty() ? Verdict.UP : Verdict.LATE;
		}
		if (!late.isEmpty()) {
			details.put("late", late);
			details.put("maxLateness", String.valueOf(this.maxLateness));
		}
		details.put("topics", topics);
		return new Health(verdict, details);
	}

	/** Which primaries did not answer, for which partitions. */
	private static String unreachableText(Map<String, List<String>> unreachable) {
		List<String> servers = new ArrayList<>();
		unreachable
			.forEach((server, partitions) -> servers.add(("Redis".equals(server) ? "Redis" : "Redis primary " + server)
					+ " did not answer for partitions " + String.join(", ", partitions)));
		return String.join("; ", servers);
	}

	/**
	 * Stops the threads that run the checks; a check still waiting for Redis is
	 * interrupted.
	 */
	@Override
	public void close() {
		this.checks.shutdownNow();
	}

	/**
	 * What a check found.
	 */
	public enum Verdict {

		/** Redis answers and every listener works. */
		UP,

		/** Redis does not answer, a listener died, or a partition count disagrees. */
		DOWN,

		/** A topic's oldest waiting message is later than the maximum lateness. */
		LATE

	}

	/**
	 * The outcome of a check.
	 *
	 * @param verdict what the check found
	 * @param details what it found, for the health endpoint
	 */
	public record Health(Verdict verdict, Map<String, Object> details) {

		static Health down(String error) {
			return new Health(Verdict.DOWN, Map.of("error", error));
		}

	}

}

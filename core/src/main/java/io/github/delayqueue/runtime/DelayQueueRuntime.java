package io.github.delayqueue.runtime;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import io.github.delayqueue.convert.PayloadConverter;
import io.github.delayqueue.listener.DelayListenerEndpoint;
import io.github.delayqueue.listener.DelayListenerEndpointRegistry;
import io.github.delayqueue.listener.DelayListenerErrorHandler;
import io.github.delayqueue.metrics.DelayQueueMetrics;
import io.github.delayqueue.observation.DelayQueueReceiverObservationConvention;
import io.github.delayqueue.runtime.broker.BrokerSettings;
import io.github.delayqueue.runtime.broker.TopicBroker;
import io.github.delayqueue.runtime.consumer.ClaimPause;
import io.github.delayqueue.runtime.consumer.TopicConsumer;
import io.github.delayqueue.runtime.support.Nanoseconds;
import io.github.delayqueue.store.MessageStore;
import io.github.delayqueue.store.TopicPartitions;
import io.micrometer.observation.ObservationRegistry;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.context.SmartLifecycle;
import org.springframework.scheduling.concurrent.CustomizableThreadFactory;

/**
 * Runs the application's listeners: for each endpoint of the
 * {@link DelayListenerEndpointRegistry}, a {@link TopicRuntime} (a broker and a consumer)
 * per partition of its topic, all on one shared scheduler, plus one subscription to the
 * wake-up signals that routes them. Each partition's consumer has the topic's settings,
 * so a topic with several partitions handles up to its concurrency per partition at once,
 * and no partition waits for another's backlog. Pause, resume and the state of each
 * topic's listener (all its partitions) are answered here. Starts after and stops before
 * the Redis connection factory.
 */
public class DelayQueueRuntime implements SmartLifecycle {

	/** The lifecycle phase: late start, early stop. */
	public static final int PHASE = SmartLifecycle.DEFAULT_PHASE - 1024;

	private static final Log logger = LogFactory.getLog(DelayQueueRuntime.class);

	private static final long IDLE_HANDLER_SECONDS = 60;

	private final MessageStore store;

	private final PayloadConverter converter;

	private final BrokerSettings brokerSettings;

	private final DelayListenerEndpointRegistry registry;

	private DelayListenerErrorHandler errorHandler = DelayListenerErrorHandler.DEFAULT;

	/**
	 * The runtime of each partition, by its name in Redis (the topic's for partition 0).
	 */
	private final Map<String, TopicRuntime> partitions = new ConcurrentHashMap<>();

	/** The runtimes of each topic's partitions, partition 0 first. */
	private final Map<String, List<TopicRuntime>> topics = new ConcurrentHashMap<>();

	private final WakeUpSignals signals = new WakeUpSignals();

	private DelayQueueMetrics metrics = DelayQueueMetrics.NONE;

	private ObservationRegistry observationRegistry = ObservationRegistry.NOOP;

	private @Nullable DelayQueueReceiverObservationConvention observationConvention;

	private @Nullable Executor handlerExecutor;

	/** The handler threads of this runtime, when no handler executor was set. */
	private @Nullable ThreadPoolExecutor handlerThreads;

	private @Nullable AutoCloseable subscription;

	private @Nullable ScheduledThreadPoolExecutor scheduler;

	private @Nullable PartitionCountWatch partitionCounts;

	private volatile boolean running;

	/** Completes once the stop under way, or the last one, has finished. */
	private CompletableFuture<Void> stopped = CompletableFuture.completedFuture(null);

	/**
	 * Creates the runtime.
	 * @param store the message store
	 * @param converter the payload converter
	 * @param brokerSettings the broker settings
	 * @param registry the listener endpoints to run
	 */
	public DelayQueueRuntime(MessageStore store, PayloadConverter converter, BrokerSettings brokerSettings,
			DelayListenerEndpointRegistry registry) {
		this.store = store;
		this.converter = converter;
		this.brokerSettings = brokerSettings;
		this.registry = registry;
	}

	/**
	 * Sets where listeners and brokers report what they do; must be called before
	 * {@link #start()}.
	 * @param metrics the metrics
	 */
	public void setMetrics(DelayQueueMetrics metrics) {
		this.metrics = metrics;
	}

	/**
	 * Sets the registry of the consumer observations, which continue the producer's
	 * trace; must be called before {@link #start()}.
	 * @param observationRegistry the registry
	 */
	public void setObservationRegistry(ObservationRegistry observationRegistry) {
		this.observationRegistry = observationRegistry;
	}

	/**
	 * Sets a convention for the consumer observations, instead of the default one; must
	 * be called before {@link #start()}.
	 * @param observationConvention the convention
	 */
	public void setObservationConvention(DelayQueueReceiverObservationConvention observationConvention) {
		this.observationConvention = observationConvention;
	}

	/**
	 * Sets what decides the fate of a message whose handler failed, instead of the
	 * built-in policy ({@link DelayListenerErrorHandler#DEFAULT}); must be called before
	 * {@link #start()}.
	 * @param errorHandler the error handler
	 */
	public void setErrorHandler(DelayListenerErrorHandler errorHandler) {
		this.errorHandler = errorHandler;
	}

	/**
	 * Sets the executor that runs every topic's handlers, at most each topic's
	 * concurrency at once, e.g. virtual threads. Without one, the handlers run on a pool
	 * of this runtime's own, shared by the topics: threads named
	 * {@code delay-queue-handler-<n>}, started as work comes and gone after a minute
	 * idle. Must be called before {@link #start()}.
	 * @param handlerExecutor the executor
	 */
	public void setHandlerExecutor(Executor handlerExecutor) {
		this.handlerExecutor = handlerExecutor;
	}

	@Override
	public synchronized void start() {
		if (this.running) {
			return;
		}
		this.running = true;
		Map<String, DelayListenerEndpoint> endpoints = this.registry.getEndpoints();
		if (endpoints.isEmpty()) {
			return;
		}
		// Not daemon threads: an application whose only work is its listeners keeps
		// running, as with
		// the listener containers of Spring Kafka or Spring AMQP, until its context is
		// closed.
		ScheduledThreadPoolExecutor executor = new ScheduledThreadPoolExecutor(schedulerThreads(),
				new CustomizableThreadFactory("delay-queue-scheduler-"));
		executor.setRemoveOnCancelPolicy(true);
		this.scheduler = executor;
		Executor handlers = (this.handlerExecutor != null) ? this.handlerExecutor : startHandlerThreads();
		PartitionCountWatch partitionCounts = new PartitionCountWatch(this.store);
		this.partitionCounts = partitionCounts;
		// A topic's own listener may change its count, its dead letters' may not: the
		// topics first.
		List<DelayListenerEndpoint> topicsFirst = endpoints.values()
			.stream()
			.sorted(Comparator.comparing((endpoint) -> TopicPartitions.isDeadLetters(endpoint.topic())))
			.toList();
		for (DelayListenerEndpoint endpoint : topicsFirst) {
			String topic = endpoint.topic();
			partitionCounts.agree(topic);
			List<TopicRuntime> runtimes = new ArrayList<>();
			List<String> names = this.store.partitions().names(topic);
			// A slow-down asked by a handler pauses the claims of every partition.
			ClaimPause slowDown = new ClaimPause();
			for (int index = 0; index < names.size(); index++) {
				String partition = names.get(index);
				int partitionIndex = index;
				TopicBroker broker = new TopicBroker(topic, this.store.topic(partition), executor, this.brokerSettings,
						endpoint.settings().maxAttempts(), () -> wakeConsumer(partition),
						(sentNanos, waiting) -> readyListsRead(partition, sentNanos, waiting),
						(agreed) -> partitionCounts.markerRead(topic, agreed), this.metrics);
				TopicRuntime runtime = new TopicRuntime(partition, broker,
						() -> new TopicConsumer(endpoint, this.store.topic(partition), this.converter, executor,
								this.metrics, this.observationRegistry, this.observationConvention, handlers,
								partitionIndex, names.size(), slowDown, this.errorHandler));
				this.signals.onReadyMessages(partition, runtime::wakeConsumer);
				this.signals.onEarlierMessage(partition, runtime::wakeBroker);
				this.partitions.put(partition, runtime);
				runtimes.add(runtime);
			}
			this.topics.put(topic, List.copyOf(runtimes));
		}
		this.subscription = this.store.subscribe(List.copyOf(this.partitions.keySet()), this.signals);
		this.partitions.values().forEach(TopicRuntime::start);
	}

	/**
	 * Handler threads shared by the topics, each topic running at most its concurrency on
	 * them: as many threads as handlers run at once, so that a burst over many topics
	 * reuses threads rather than starting one per topic.
	 */
	private ThreadPoolExecutor startHandlerThreads() {
		CustomizableThreadFactory threads = new CustomizableThreadFactory("delay-queue-handler-");
		threads.setDaemon(true);
		this.handlerThreads = new ThreadPoolExecutor(0, Integer.MAX_VALUE, IDLE_HANDLER_SECONDS, TimeUnit.SECONDS,
				new SynchronousQueue<>(), threads);
		return this.handlerThreads;
	}

	/**
	 * Threads of the shared scheduler: they run the brokers, the claims, the held
	 * messages, the lease extensions and the acknowledgements of every topic, each a
	 * short call to Redis, several on their way at once over the shared connection.
	 */
	private static int schedulerThreads() {
		return Math.max(4, 4 * Runtime.getRuntime().availableProcessors());
	}

	/**
	 * Stops the listeners within the longest shutdown timeout; a stop asked while another
	 * is under way returns once that one has finished (at most that timeout later), so
	 * that whoever closes the Redis connection next does not cut off its hand-backs.
	 */
	@Override
	public void stop() {
		Map<String, TopicRuntime> stopping = Map.of();
		AutoCloseable signalSubscription = null;
		CompletableFuture<Void> stopEnded = new CompletableFuture<>();
		CompletableFuture<Void> underWay = null;
		synchronized (this) {
			if (!this.running) {
				underWay = this.stopped;
			}
			else {
				this.running = false;
				this.stopped = stopEnded;
				stopping = new LinkedHashMap<>(this.partitions);
				signalSubscription = this.subscription;
				this.subscription = null;
			}
		}
		if (underWay != null) {
			// Outside the monitor, which the stop under way takes to finish.
			awaitStop(underWay, longestShutdownTimeout());
			return;
		}
		try {
			stop(stopping, signalSubscription);
		}
		finally {
			stopEnded.complete(null);
		}
	}

	private static void awaitStop(CompletableFuture<Void> underWay, Duration timeout) {
		try {
			underWay.get(Nanoseconds.of(timeout), TimeUnit.NANOSECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
		catch (ExecutionException | TimeoutException ex) {
			// Waited as long as the stop itself may.
		}
	}

	private void stop(Map<String, TopicRuntime> stopping, @Nullable AutoCloseable signalSubscription) {
		long started = System.nanoTime();
		Duration timeout = longestShutdownTimeout();
		List<TopicConsumer> consumers = stopping.values()
			.stream()
			.map(TopicRuntime::stop)
			.filter(Objects::nonNull)
			.toList();
		// A pause still waiting for its handlers is part of the stop.
		List<TopicConsumer> pausing = stopping.values()
			.stream()
			.map(TopicRuntime::pausing)
			.filter(Objects::nonNull)
			.toList();
		// Signals would only wake what stops now: the subscription closes meanwhile.
		CompletableFuture<Void> unsubscribed = closeInBackground(signalSubscription);
		ConsumerStop.finish(consumers, pausing, timeout, "Stopping the listeners");
		awaitUnsubscribed(unsubscribed, started + Nanoseconds.of(timeout));
		synchronized (this) {
			if (this.scheduler != null) {
				this.scheduler.shutdownNow();
				this.scheduler = null;
			}
			if (this.partitionCounts != null) {
				this.partitionCounts.close();
				this.partitionCounts = null;
			}
			if (this.handlerThreads != null) {
				// Every topic has finished or handed back its messages: only idle threads
				// are left.
				this.handlerThreads.shutdown();
				this.handlerThreads = null;
			}
			this.signals.clear();
			this.partitions.clear();
			this.topics.clear();
		}
	}

	private static CompletableFuture<Void> closeInBackground(@Nullable AutoCloseable subscription) {
		if (subscription == null) {
			return CompletableFuture.completedFuture(null);
		}
		return CompletableFuture.runAsync(() -> {
			try {
				subscription.close();
			}
			catch (Exception ex) {
				logger.debug("Closing the wake-up signal subscription failed: " + ex);
			}
		});
	}

	/**
	 * Waits for the subscription to close until the stop's deadline: closing only ends
	 * connections, which takes no round trip to Redis; what is left goes on in the
	 * background.
	 */
	private static void awaitUnsubscribed(CompletableFuture<Void> unsubscribed, long deadlineNanos) {
		try {
			unsubscribed.get(Math.max(0, deadlineNanos - System.nanoTime()), TimeUnit.NANOSECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
		catch (ExecutionException | TimeoutException ex) {
			logger.info("The wake-up signal subscription did not close within the shutdown timeout of the "
					+ "listeners; it goes on closing in the background");
		}
	}

	private void wakeConsumer(String partition) {
		TopicRuntime runtime = this.partitions.get(partition);
		if (runtime != null) {
			runtime.wakeConsumer();
		}
	}

	private void readyListsRead(String partition, long sentNanos, boolean waiting) {
		TopicRuntime runtime = this.partitions.get(partition);
		if (runtime != null) {
			runtime.readyListsRead(sentNanos, waiting);
		}
	}

	/**
	 * @return the listener endpoints of this application by topic, in registration order
	 */
	public Map<String, DelayListenerEndpoint> getEndpoints() {
		return this.registry.getEndpoints();
	}

	/**
	 * What each topic's listener is doing in this application.
	 * @return the state of each registered topic's listener, by topic
	 */
	public synchronized Map<String, ListenerState> getListenerStates() {
		Map<String, ListenerState> states = new LinkedHashMap<>();
		for (String topic : this.registry.getEndpoints().keySet()) {
			List<TopicRuntime> runtimes = this.topics.getOrDefault(topic, List.of());
			states.put(topic, runtimes.isEmpty() ? ListenerState.STOPPED
					: ListenerState.of(runtimes.stream().map(TopicRuntime::state).toList()));
		}
		return Collections.unmodifiableMap(states);
	}

	/**
	 * The topics with a listener here whose number of partitions this application does
	 * not agree with Redis on: another application changed it, or Redis did not answer
	 * when the listener started and the count configured here could not be taken since.
	 * @return what is wrong, by topic; empty when all agree
	 */
	public synchronized Map<String, String> getPartitionCountProblems() {
		PartitionCountWatch watch = this.partitionCounts;
		return (watch != null) ? Map.copyOf(watch.problems()) : Map.of();
	}

	/**
	 * Tells whether no listener of this application has a message in hand: none is
	 * waiting for the reply of a claim, holding a claimed message until its due time or
	 * handling one, or waiting for Redis to take an acknowledgement. Messages may still
	 * be scheduled or ready in Redis. Tests use it to wait until deliveries are done.
	 * @return whether every listener is idle
	 */
	public synchronized boolean isIdle() {
		return this.partitions.values().stream().allMatch(TopicRuntime::isIdle);
	}

	/**
	 * Pauses a topic's listener in this application, like stopping it: it claims no more
	 * messages, lets running handlers finish within its shutdown timeout and hands back
	 * what is still unfinished; the partitions of a partitioned topic pause together,
	 * within one shutdown timeout. The topic's broker keeps running, and other
	 * applications keep consuming. Lasts until {@link #resume(String)} or until this
	 * runtime is stopped and started again; a stop meanwhile waits for the pause. Returns
	 * when the listener has stopped.
	 * @param topic the topic
	 * @return {@code true} if paused now, {@code false} if it was paused already (a
	 * resume still waiting for the pause to finish is then dropped)
	 * @throws IllegalArgumentException if the topic has no listener in this application
	 * @throws IllegalStateException if the listeners are not running
	 */
	public boolean pause(String topic) {
		List<TopicRuntime> runtimes = runtimesOf(topic);
		List<TopicConsumer> paused = runtimes.stream().map(TopicRuntime::pause).filter(Objects::nonNull).toList();
		if (!paused.isEmpty()) {
			long start = System.nanoTime();
			Duration timeout = longestShutdownTimeout(paused);
			ConsumerStop.finish(paused, List.of(), timeout, "Pausing the listener of topic '" + topic + "'");
			// A pause of the same topic running at once may have reached some partitions
			// first: the listener has stopped only when those have too.
			List<TopicConsumer> others = runtimes.stream()
				.map(TopicRuntime::pausing)
				.filter((consumer) -> consumer != null && !paused.contains(consumer))
				.map(Objects::requireNonNull)
				.toList();
			Duration left = timeout.minusNanos(System.nanoTime() - start);
			if (!left.isNegative()) {
				awaitStopsEnded(others, left);
			}
			return true;
		}
		// Paused already: returns once a pause still finishing has, as the first one
		// does.
		List<TopicConsumer> finishing = runtimes.stream().map(TopicRuntime::pausing).filter(Objects::nonNull).toList();
		awaitStopsEnded(finishing, longestShutdownTimeout(finishing));
		return false;
	}

	private static void awaitStopsEnded(List<TopicConsumer> consumers, Duration timeout) {
		if (consumers.isEmpty()) {
			return;
		}
		CompletableFuture<Void> ended = CompletableFuture
			.allOf(consumers.stream().map(TopicConsumer::stopEnded).toArray(CompletableFuture[]::new));
		try {
			ended.get(Nanoseconds.of(timeout), TimeUnit.NANOSECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
		catch (ExecutionException | TimeoutException ex) {
			// Waited as long as the pause itself may.
		}
	}

	private static Duration longestShutdownTimeout(List<TopicConsumer> consumers) {
		return consumers.stream().map(TopicConsumer::shutdownTimeout).max(Duration::compareTo).orElse(Duration.ZERO);
	}

	/**
	 * @return the longest shutdown timeout of the listeners: how long stopping them may
	 * take
	 */
	private Duration longestShutdownTimeout() {
		return this.registry.getEndpoints()
			.values()
			.stream()
			.map((endpoint) -> endpoint.settings().shutdownTimeout())
			.max(Duration::compareTo)
			.orElse(Duration.ZERO);
	}

	/**
	 * Resumes a topic's listener paused by {@link #pause(String)}: a new listener starts
	 * claiming at once, or, while the pause is still waiting for the paused listener's
	 * handlers, as soon as it has finished (within the shutdown timeout), so that the
	 * topic never runs more than its concurrency at once; it reads as paused until then.
	 * Returns at once.
	 * @param topic the topic
	 * @return {@code true} if resumed (now or once the pause has finished), {@code false}
	 * if it was not paused or a resume waits for the pause already
	 * @throws IllegalArgumentException if the topic has no listener in this application
	 * @throws IllegalStateException if the listeners are not running
	 */
	public boolean resume(String topic) {
		boolean resumed = false;
		for (TopicRuntime partition : runtimesOf(topic)) {
			resumed |= partition.resume();
		}
		return resumed;
	}

	private synchronized List<TopicRuntime> runtimesOf(String topic) {
		if (!this.registry.getEndpoints().containsKey(topic)) {
			throw new IllegalArgumentException("Topic '" + topic + "' has no @DelayListener in this application");
		}
		List<TopicRuntime> runtime = this.running ? this.topics.get(topic) : null;
		if (runtime == null) {
			throw new IllegalStateException("The listeners of this application are not running");
		}
		return runtime;
	}

	@Override
	public boolean isRunning() {
		return this.running;
	}

	@Override
	public int getPhase() {
		return PHASE;
	}

}

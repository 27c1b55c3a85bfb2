package io.github.delayqueue.runtime;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

import io.github.delayqueue.convert.PayloadConverter;
import io.github.delayqueue.listener.DelayListenerEndpoint;
import io.github.delayqueue.listener.DelayListenerEndpointRegistry;
import io.github.delayqueue.metrics.DelayQueueMetrics;
import io.github.delayqueue.observation.DelayQueueReceiverObservationConvention;
import io.github.delayqueue.runtime.broker.BrokerSettings;
import io.github.delayqueue.runtime.broker.TopicBroker;
import io.github.delayqueue.runtime.consumer.TopicConsumer;
import io.github.delayqueue.store.RedisMessageStore;
import io.micrometer.observation.ObservationRegistry;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.context.SmartLifecycle;
import org.springframework.core.task.SyncTaskExecutor;
import org.springframework.dao.DataAccessException;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.listener.ChannelTopic;
import org.springframework.data.redis.listener.RedisMessageListenerContainer;
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

	private final RedisMessageStore store;

	private final PayloadConverter converter;

	private final RedisConnectionFactory connectionFactory;

	private final BrokerSettings brokerSettings;

	private final DelayListenerEndpointRegistry registry;

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

	private volatile boolean running;

	/**
	 * Creates the runtime.
	 * @param store the Redis store
	 * @param converter the payload converter
	 * @param connectionFactory for the wake-up signal subscription
	 * @param brokerSettings the broker settings
	 * @param registry the listener endpoints to run
	 */
	public DelayQueueRuntime(RedisMessageStore store, PayloadConverter converter,
			RedisConnectionFactory connectionFactory, BrokerSettings brokerSettings,
			DelayListenerEndpointRegistry registry) {
		this.store = store;
		this.converter = converter;
		this.connectionFactory = connectionFactory;
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
		for (DelayListenerEndpoint endpoint : endpoints.values()) {
			String topic = endpoint.topic();
			agreePartitions(topic);
			List<TopicRuntime> runtimes = new ArrayList<>();
			List<String> names = this.store.partitions().names(topic);
			for (String partition : names) {
				TopicBroker broker = new TopicBroker(topic, this.store.topic(partition), executor, this.brokerSettings,
						endpoint.settings().maxAttempts(), () -> wakeConsumer(partition), this.metrics);
				TopicRuntime runtime = new TopicRuntime(partition, broker,
						() -> new TopicConsumer(endpoint, this.store.topic(partition), this.converter, executor,
								this.metrics, this.observationRegistry, this.observationConvention, handlers,
								names.size()));
				this.signals.onReadyMessages(partition, runtime::wakeConsumer);
				this.signals.onEarlierMessage(partition, runtime::wakeBroker);
				this.partitions.put(partition, runtime);
				runtimes.add(runtime);
			}
			this.topics.put(topic, List.copyOf(runtimes));
		}
		this.subscription = subscribe();
		this.partitions.values().forEach(TopicRuntime::start);
	}

	/**
	 * Makes sure the topic's messages in Redis have the partition count configured here,
	 * failing the start if they do not; with Redis out of reach the first send checks it.
	 */
	private void agreePartitions(String topic) {
		try {
			this.store.agreePartitions(topic);
		}
		catch (DataAccessException ex) {
			logger.warn("Topic '" + topic + "': could not compare its number of partitions with the one in Redis ("
					+ ex.getMessage() + "); the first send to it will");
		}
	}

	/**
	 * Subscribes to the wake-up signals: the topics' own channels when the store shards
	 * them, else the prefix's channel.
	 */
	private AutoCloseable subscribe() {
		if (this.store.shardedSignals()) {
			List<String> channels = this.partitions.keySet().stream().map(this.store::signalChannel).toList();
			return ShardedSignalSubscription.subscribe(this.connectionFactory, channels, this.signals,
					this.store.timeout());
		}
		RedisMessageListenerContainer listenerContainer = new RedisMessageListenerContainer();
		listenerContainer.setConnectionFactory(this.connectionFactory);
		// A signal only queues a task on the scheduler: pass it on where it arrives,
		// rather than on
		// a new thread per message (the container's default), which a burst of signals
		// would flood.
		listenerContainer.setTaskExecutor(new SyncTaskExecutor());
		listenerContainer.addMessageListener(this.signals, new ChannelTopic(this.store.signalChannel()));
		listenerContainer.afterPropertiesSet();
		listenerContainer.start();
		return listenerContainer::destroy;
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

	@Override
	public void stop() {
		Map<String, TopicRuntime> stopping;
		synchronized (this) {
			if (!this.running) {
				return;
			}
			this.running = false;
			stopping = new LinkedHashMap<>(this.partitions);
		}
		stopping.values().forEach(TopicRuntime::stopClaiming);
		long timeout = stopping.values().stream().mapToLong(TopicRuntime::shutdownTimeoutNanos).max().orElse(0);
		long deadline = System.nanoTime() + timeout;
		stopping.values().forEach((topic) -> topic.finishStopping(deadline));
		synchronized (this) {
			if (this.subscription != null) {
				try {
					this.subscription.close();
				}
				catch (Exception ex) {
					// Closing the subscription failed: nothing is left to release.
				}
				this.subscription = null;
			}
			if (this.scheduler != null) {
				this.scheduler.shutdownNow();
				this.scheduler = null;
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

	private void wakeConsumer(String partition) {
		TopicRuntime runtime = this.partitions.get(partition);
		if (runtime != null) {
			runtime.wakeConsumer();
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
	 * what is still unfinished. The topic's broker keeps running, and other applications
	 * keep consuming. Lasts until {@link #resume(String)} or until this runtime is
	 * stopped and started again. Returns when the listener has stopped.
	 * @param topic the topic
	 * @return {@code true} if paused now, {@code false} if it was paused already
	 * @throws IllegalArgumentException if the topic has no listener in this application
	 * @throws IllegalStateException if the listeners are not running
	 */
	public boolean pause(String topic) {
		boolean paused = false;
		for (TopicRuntime partition : runtimesOf(topic)) {
			paused |= partition.pause();
		}
		return paused;
	}

	/**
	 * Resumes a topic's listener paused by {@link #pause(String)}: a new listener starts
	 * claiming at once.
	 * @param topic the topic
	 * @return {@code true} if resumed now, {@code false} if it was not paused
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

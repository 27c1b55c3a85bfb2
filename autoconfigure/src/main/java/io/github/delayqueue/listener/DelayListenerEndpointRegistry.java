package io.github.delayqueue.listener;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;

import io.github.delayqueue.broker.BrokerSettings;
import io.github.delayqueue.broker.TopicBroker;
import io.github.delayqueue.broker.WakeUpSignals;
import io.github.delayqueue.convert.PayloadConversionException;
import io.github.delayqueue.convert.PayloadConverter;
import io.github.delayqueue.core.InvalidMessageException;
import io.github.delayqueue.metrics.DelayQueueMetrics;
import io.github.delayqueue.store.RedisMessageStore;
import io.micrometer.observation.ObservationRegistry;
import org.jspecify.annotations.Nullable;

import org.springframework.context.SmartLifecycle;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.listener.ChannelTopic;
import org.springframework.data.redis.listener.RedisMessageListenerContainer;
import org.springframework.scheduling.concurrent.CustomizableThreadFactory;

/**
 * Holds the application's {@link DelayListenerEndpoint}s and runs, for each topic, a listener
 * container and a broker, plus one subscription to the wake-up signals. Starts after and stops
 * before the Redis connection factory.
 */
public class DelayListenerEndpointRegistry implements SmartLifecycle {

	/** The lifecycle phase: late start, early stop. */
	public static final int PHASE = SmartLifecycle.DEFAULT_PHASE - 1024;

	private final RedisMessageStore store;

	private final PayloadConverter converter;

	private final RedisConnectionFactory connectionFactory;

	private final BrokerSettings brokerSettings;

	private final Map<String, DelayListenerEndpoint> endpoints = new LinkedHashMap<>();

	private final Map<String, DelayListenerContainer> containers = new LinkedHashMap<>();

	private final List<TopicBroker> brokers = new ArrayList<>();

	private final WakeUpSignals signals = new WakeUpSignals();

	private @Nullable RedisMessageListenerContainer subscription;

	private @Nullable ScheduledThreadPoolExecutor scheduler;

	private volatile boolean running;

	private DelayQueueMetrics metrics = DelayQueueMetrics.NONE;

	private ObservationRegistry observationRegistry = ObservationRegistry.NOOP;

	private final Set<String> pausedTopics = new HashSet<>();

	private final Object pausing = new Object();

	/**
	 * Creates a registry.
	 * @param store the Redis store
	 * @param converter the payload converter
	 * @param connectionFactory for the wake-up signal subscription
	 * @param brokerSettings the broker settings
	 */
	public DelayListenerEndpointRegistry(RedisMessageStore store, PayloadConverter converter,
			RedisConnectionFactory connectionFactory, BrokerSettings brokerSettings) {
		this.store = store;
		this.converter = converter;
		this.connectionFactory = connectionFactory;
		this.brokerSettings = brokerSettings;
	}

	/**
	 * Sets where listeners and brokers report what they do; must be called before {@link #start()}.
	 * @param metrics the metrics
	 */
	public void setMetrics(DelayQueueMetrics metrics) {
		this.metrics = metrics;
	}

	/**
	 * Sets the registry of the consumer observations, which continue the producer's trace; must be
	 * called before {@link #start()}.
	 * @param observationRegistry the registry
	 */
	public void setObservationRegistry(ObservationRegistry observationRegistry) {
		this.observationRegistry = observationRegistry;
	}

	/**
	 * Adds an endpoint; must be called before {@link #start()}.
	 * @param endpoint the endpoint
	 * @throws InvalidMessageException if the topic already has a listener in this application
	 * @throws IllegalArgumentException if the payload converter can never read the method's payload type
	 */
	public synchronized void register(DelayListenerEndpoint endpoint) {
		try {
			this.converter.checkReadable(endpoint.payloadType());
		}
		catch (PayloadConversionException ex) {
			throw new IllegalArgumentException("@DelayListener method " + endpoint.describe() + " cannot receive its"
					+ " payloads: " + ex.getMessage(), ex);
		}
		DelayListenerEndpoint existing = this.endpoints.putIfAbsent(endpoint.topic(), endpoint);
		if (existing != null) {
			throw new InvalidMessageException("Topic '" + endpoint.topic() + "' has two @DelayListener methods: "
					+ existing.describe() + " and " + endpoint.describe() + "; a topic may have one per application");
		}
	}

	/** @return the registered endpoints by topic */
	public synchronized Map<String, DelayListenerEndpoint> getEndpoints() {
		return Collections.unmodifiableMap(new LinkedHashMap<>(this.endpoints));
	}

	@Override
	public synchronized void start() {
		if (this.running) {
			return;
		}
		this.running = true;
		if (this.endpoints.isEmpty()) {
			return;
		}
		ScheduledThreadPoolExecutor executor = new ScheduledThreadPoolExecutor(2,
				new CustomizableThreadFactory("delay-queue-broker-"));
		executor.setRemoveOnCancelPolicy(true);
		this.scheduler = executor;
		for (DelayListenerEndpoint endpoint : this.endpoints.values()) {
			String topic = endpoint.topic();
			TopicBroker broker = new TopicBroker(topic, this.store, executor, this.brokerSettings,
					endpoint.settings().maxAttempts(), () -> wakeListener(topic), this.metrics);
			this.signals.onReadyMessages(topic, () -> wakeListener(topic));
			this.signals.onEarlierMessage(topic, broker::wake);
			this.containers.put(topic, newContainer(endpoint, executor));
			this.brokers.add(broker);
			this.metrics.listening(topic);
		}
		RedisMessageListenerContainer listenerContainer = new RedisMessageListenerContainer();
		listenerContainer.setConnectionFactory(this.connectionFactory);
		listenerContainer.addMessageListener(this.signals, new ChannelTopic(this.store.signalChannel()));
		listenerContainer.afterPropertiesSet();
		listenerContainer.start();
		this.subscription = listenerContainer;
		this.containers.values().forEach(DelayListenerContainer::start);
		this.brokers.forEach(TopicBroker::start);
	}

	@Override
	public synchronized void stop() {
		if (!this.running) {
			return;
		}
		this.running = false;
		this.brokers.forEach(TopicBroker::stop);
		this.containers.values().forEach(DelayListenerContainer::stopClaiming);
		long timeout = this.containers.values().stream()
			.mapToLong((container) -> container.shutdownTimeout().toNanos())
			.max()
			.orElse(0);
		long deadline = System.nanoTime() + timeout;
		this.containers.values().forEach((container) -> container.finishStopping(deadline));
		if (this.subscription != null) {
			try {
				this.subscription.destroy();
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
		this.signals.clear();
		this.brokers.clear();
		this.containers.clear();
		this.pausedTopics.clear();
	}

	private DelayListenerContainer newContainer(DelayListenerEndpoint endpoint, ScheduledExecutorService executor) {
		return new DelayListenerContainer(endpoint, this.store, this.converter, executor, this.metrics,
				this.observationRegistry);
	}

	private synchronized void wakeListener(String topic) {
		DelayListenerContainer container = this.containers.get(topic);
		if (container != null) {
			container.wake();
		}
	}

	/**
	 * What each topic's listener is doing in this application.
	 * @return the state of each registered topic's listener, by topic
	 */
	public synchronized Map<String, ListenerState> getListenerStates() {
		Map<String, ListenerState> states = new LinkedHashMap<>();
		for (String topic : this.endpoints.keySet()) {
			DelayListenerContainer container = containerOf(topic);
			ListenerState state;
			if (container == null) {
				state = ListenerState.STOPPED;
			}
			else if (this.pausedTopics.contains(topic)) {
				state = ListenerState.PAUSED;
			}
			else {
				state = container.isAlive() ? ListenerState.RUNNING : ListenerState.STOPPED;
			}
			states.put(topic, state);
		}
		return states;
	}

	/**
	 * Pauses a topic's listener in this application, like stopping it: it claims no more messages,
	 * lets running handlers finish within its shutdown timeout and hands back what is still
	 * unfinished. The topic's broker keeps running, and other applications keep consuming. Lasts
	 * until {@link #resume(String)} or until this registry is stopped and started again. Returns
	 * when the listener has stopped.
	 * @param topic the topic
	 * @return {@code true} if paused now, {@code false} if it was paused already
	 * @throws IllegalArgumentException if the topic has no listener in this application
	 * @throws IllegalStateException if the listeners are not running
	 */
	public boolean pause(String topic) {
		synchronized (this.pausing) {
			DelayListenerContainer container;
			synchronized (this) {
				container = runningContainerOf(topic);
				if (!this.pausedTopics.add(topic)) {
					return false;
				}
				container.stopClaiming();
			}
			container.finishStopping(System.nanoTime() + container.shutdownTimeout().toNanos());
			return true;
		}
	}

	/**
	 * Resumes a topic's listener paused by {@link #pause(String)}: a new listener starts claiming at once.
	 * @param topic the topic
	 * @return {@code true} if resumed now, {@code false} if it was not paused
	 * @throws IllegalArgumentException if the topic has no listener in this application
	 * @throws IllegalStateException if the listeners are not running
	 */
	public boolean resume(String topic) {
		synchronized (this.pausing) {
			synchronized (this) {
				runningContainerOf(topic);
				if (this.scheduler == null || !this.pausedTopics.remove(topic)) {
					return false;
				}
				DelayListenerContainer container = newContainer(this.endpoints.get(topic), this.scheduler);
				this.containers.put(topic, container);
				container.start();
				return true;
			}
		}
	}

	private DelayListenerContainer runningContainerOf(String topic) {
		if (!this.endpoints.containsKey(topic)) {
			throw new IllegalArgumentException("Topic '" + topic + "' has no @DelayListener in this application");
		}
		DelayListenerContainer container = containerOf(topic);
		if (container == null) {
			throw new IllegalStateException("The listeners of this application are not running");
		}
		return container;
	}

	private @Nullable DelayListenerContainer containerOf(String topic) {
		return this.running ? this.containers.get(topic) : null;
	}

	@Override
	public boolean isRunning() {
		return this.running;
	}

	@Override
	public int getPhase() {
		return PHASE;
	}

	/**
	 * What a topic's listener is doing in this application.
	 */
	public enum ListenerState {

		/** Claiming and handling messages. */
		RUNNING,

		/** Paused by {@link DelayListenerEndpointRegistry#pause(String)}: claims nothing until resumed. */
		PAUSED,

		/** Not claiming although not paused: the listeners are not started, or its listener died. */
		STOPPED

	}

}

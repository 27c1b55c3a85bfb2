package io.github.delayqueue.listener;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ScheduledThreadPoolExecutor;

import io.github.delayqueue.broker.BrokerSettings;
import io.github.delayqueue.broker.TopicBroker;
import io.github.delayqueue.broker.WakeUpSignals;
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

	private final List<DelayListenerContainer> containers = new ArrayList<>();

	private final List<TopicBroker> brokers = new ArrayList<>();

	private final WakeUpSignals signals = new WakeUpSignals();

	private @Nullable RedisMessageListenerContainer subscription;

	private @Nullable ScheduledThreadPoolExecutor scheduler;

	private volatile boolean running;

	private DelayQueueMetrics metrics = DelayQueueMetrics.NONE;

	private ObservationRegistry observationRegistry = ObservationRegistry.NOOP;

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
	 */
	public synchronized void register(DelayListenerEndpoint endpoint) {
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
			DelayListenerContainer container = new DelayListenerContainer(endpoint, this.store, this.converter,
					executor, this.metrics, this.observationRegistry);
			TopicBroker broker = new TopicBroker(endpoint.topic(), this.store, executor, this.brokerSettings,
					endpoint.settings().maxAttempts(), container::wake, this.metrics);
			this.signals.onReadyMessages(endpoint.topic(), container::wake);
			this.signals.onEarlierMessage(endpoint.topic(), broker::wake);
			this.containers.add(container);
			this.brokers.add(broker);
		}
		RedisMessageListenerContainer listenerContainer = new RedisMessageListenerContainer();
		listenerContainer.setConnectionFactory(this.connectionFactory);
		listenerContainer.addMessageListener(this.signals, new ChannelTopic(this.store.signalChannel()));
		listenerContainer.afterPropertiesSet();
		listenerContainer.start();
		this.subscription = listenerContainer;
		this.containers.forEach(DelayListenerContainer::start);
		this.brokers.forEach(TopicBroker::start);
	}

	@Override
	public synchronized void stop() {
		if (!this.running) {
			return;
		}
		this.running = false;
		this.brokers.forEach(TopicBroker::stop);
		this.containers.forEach(DelayListenerContainer::stopClaiming);
		long timeout = this.containers.stream()
			.mapToLong((container) -> container.shutdownTimeout().toNanos())
			.max()
			.orElse(0);
		long deadline = System.nanoTime() + timeout;
		this.containers.forEach((container) -> container.finishStopping(deadline));
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

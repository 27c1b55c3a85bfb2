package io.github.delayqueue.metrics;

import java.time.Duration;
import java.util.Collection;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.function.ToDoubleFunction;

import io.github.delayqueue.store.TopicInspector;
import io.github.delayqueue.store.TopicStats;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.TimeGauge;
import io.micrometer.core.instrument.binder.MeterBinder;

/**
 * The gauges of the topics an application listens to: messages in each state
 * ({@link DelayQueueMeterNames#MESSAGES}) and how long the oldest due message has waited
 * ({@link DelayQueueMeterNames#OLDEST_LATENESS}), and the ready messages of each priority
 * a topic is seen to use ({@link DelayQueueMeterNames#READY_BY_PRIORITY}, registered when
 * first seen). All gauges of a topic share one read of its {@link TopicInspector#stats()
 * stats} per refresh interval, however often they are read. Spring Boot binds it to its
 * meter registries once every bean is created, so the topics are known by then.
 */
public final class TopicGauges implements MeterBinder {

	private final Supplier<Collection<TopicInspector>> topics;

	private final Duration refreshInterval;

	/**
	 * Creates the binder.
	 * @param topics the topics to watch, asked for when bound
	 * @param refreshInterval how often at most the gauges of a topic read Redis, all
	 * together
	 */
	public TopicGauges(Supplier<Collection<TopicInspector>> topics, Duration refreshInterval) {
		this.topics = topics;
		this.refreshInterval = refreshInterval;
	}

	@Override
	public void bindTo(MeterRegistry registry) {
		for (TopicInspector inspector : this.topics.get()) {
			String topic = inspector.topic();
			CachedTopicStats stats = new CachedTopicStats(inspector, this.refreshInterval);
			Set<Integer> priorities = ConcurrentHashMap.newKeySet();
			stats.whenRead((read) -> read.readyByPriority().keySet().forEach((priority) -> {
				if (priorities.add(priority)) {
					priorityGauge(registry, topic, priority, stats);
				}
			}));
			gauge(registry, topic, "scheduled", stats, TopicStats::scheduled);
			gauge(registry, topic, "ready", stats, TopicStats::ready);
			gauge(registry, topic, "in-flight", stats, TopicStats::inFlight);
			gauge(registry, topic, "dead", stats, TopicStats::dead);
			TimeGauge
				.builder(DelayQueueMeterNames.OLDEST_LATENESS, stats, TimeUnit.MILLISECONDS,
						(cached) -> cached.read((read) -> read.oldestLateness().toMillis()))
				.description("How long the oldest due but unclaimed message has waited")
				.tag(DelayQueueMeterNames.TOPIC, topic)
				.strongReference(true)
				.register(registry);
		}
	}

	private static void priorityGauge(MeterRegistry registry, String topic, int priority, CachedTopicStats stats) {
		Gauge
			.builder(DelayQueueMeterNames.READY_BY_PRIORITY, stats,
					(cached) -> cached.read((read) -> read.readyByPriority().getOrDefault(priority, 0L)))
			.description("Ready messages of a topic with one priority")
			.tags(DelayQueueMeterNames.TOPIC, topic, DelayQueueMeterNames.PRIORITY, Integer.toString(priority))
			.strongReference(true)
			.register(registry);
	}

	private static void gauge(MeterRegistry registry, String topic, String state, CachedTopicStats stats,
			ToDoubleFunction<TopicStats> value) {
		Gauge.builder(DelayQueueMeterNames.MESSAGES, stats, (cached) -> cached.read(value))
			.description("Messages of a topic in one state")
			.tags(DelayQueueMeterNames.TOPIC, topic, DelayQueueMeterNames.STATE, state)
			.strongReference(true)
			.register(registry);
	}

}

package io.github.delayqueue.autoconfigure;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import io.github.delayqueue.schedule.DelayQueueSchedules;
import io.github.delayqueue.schedule.Schedule;
import io.github.delayqueue.schedule.SchedulePoller;
import io.github.delayqueue.convert.PayloadConverter;
import io.github.delayqueue.producer.DelayQueueTemplate;
import io.github.delayqueue.group.DelayQueueGroups;
import io.github.delayqueue.listener.DelayListenerAnnotationBeanPostProcessor;
import io.github.delayqueue.listener.DelayListenerEndpointRegistry;
import io.github.delayqueue.listener.DelayListenerErrorHandler;
import io.github.delayqueue.listener.GroupOrder;
import io.github.delayqueue.store.GroupWeights;
import io.github.delayqueue.listener.LatePolicy;
import io.github.delayqueue.listener.ListenerSettings;
import io.github.delayqueue.listener.ListenerSettingsProvider;
import io.github.delayqueue.time.RetryBackoff;
import io.github.delayqueue.metrics.DelayQueueMetrics;
import io.github.delayqueue.metrics.MicrometerDelayQueueMetrics;
import io.github.delayqueue.metrics.TopicGauges;
import io.github.delayqueue.observation.DelayQueueReceiverObservationConvention;
import io.github.delayqueue.observation.DelayQueueSenderObservationConvention;
import io.github.delayqueue.runtime.DelayQueueRuntime;
import io.github.delayqueue.runtime.RedisDataLossWatch;
import io.github.delayqueue.runtime.broker.BrokerSettings;
import io.github.delayqueue.store.DeadLetterRetention;
import io.github.delayqueue.store.MessageStore;
import io.github.delayqueue.store.RateLimit;
import io.github.delayqueue.store.ServerInspector;
import io.github.delayqueue.store.TopicPartitions;
import io.github.delayqueue.store.redis.RedisMessageStore;
import io.github.delayqueue.store.redis.RedisServerInspector;
import io.github.delayqueue.store.redis.RedisSettingsCheck;
import io.lettuce.core.resource.Delay;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.observation.ObservationRegistry;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.core.env.Environment;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * The delay queue's beans, the same on Spring Boot 3 and 4: the
 * {@link DelayQueueTemplate} for sending and the
 * {@link io.github.delayqueue.listener.DelayListener @DelayListener} support for
 * consuming, on the application's {@link RedisConnectionFactory}. Imported by the
 * {@code DelayQueueAutoConfiguration} of each Spring Boot line, which decides whether it
 * applies and adds what differs between the lines.
 */
@Configuration(proxyBeanMethods = false)
@EnableConfigurationProperties(DelayQueueProperties.class)
@Import({ PayloadConverterConfigurations.ApplicationJackson3.class,
		PayloadConverterConfigurations.ApplicationJackson2.class, PayloadConverterConfigurations.DefaultJackson3.class,
		PayloadConverterConfigurations.DefaultJackson2.class, PayloadConverterConfigurations.TextOnly.class })
final class DelayQueueConfiguration {

	/**
	 * Name of the {@link Executor} bean that, when present, runs every topic's listener
	 * handlers (at most each topic's concurrency at once) instead of a pool of handler
	 * threads per topic.
	 */
	static final String HANDLER_EXECUTOR = "delayQueueHandlerExecutor";

	private static final Duration MIN_RECONNECT_DELAY = Duration.ofMillis(1);

	@Bean
	@ConditionalOnMissingBean(MessageStore.class)
	RedisMessageStore delayQueueMessageStore(RedisConnectionFactory connectionFactory,
			DelayQueueProperties properties) {
		RedisMessageStore store = new RedisMessageStore(connectionFactory, properties.getKeyPrefix(),
				properties.getProducer().getSendTimeout());
		DelayQueueProperties.Replication replication = properties.getProducer().getReplication();
		if (replication.getMinReplicas() > 0) {
			store.confirmReplication(replication.getMinReplicas(), replication.getTimeout());
		}
		store.rememberAtMost(properties.getProducer().getMaxRememberedIds());
		Map<String, Integer> partitions = new HashMap<>();
		properties.getTopics().forEach((topic, settings) -> partitions.put(topic, settings.getPartitions()));
		store.usePartitions(TopicPartitions.of(partitions));
		store.useDeadLetterRetention((topic) -> deadLetterRetention(properties, topic));
		if (connectionFactory instanceof LettuceConnectionFactory lettuce && lettuce.isClusterAware()
				&& store.shardedSignalsAvailable()) {
			store.useShardedSignals();
		}
		return store;
	}

	/**
	 * Warns about each key under {@code delay-queue.} that no property binds, or fails
	 * the startup with {@code delay-queue.fail-on-unknown-properties=true}.
	 */
	@Bean
	UnknownPropertiesCheck delayQueueUnknownPropertiesCheck(Environment environment, DelayQueueProperties properties) {
		return new UnknownPropertiesCheck(environment, properties.isFailOnUnknownProperties());
	}

	@Bean
	@ConditionalOnMissingBean
	RedisSettingsCheck delayQueueRedisSettingsCheck(ServerInspector serverInspector) {
		return new RedisSettingsCheck(serverInspector);
	}

	/**
	 * Reads the Redis servers for the startup check and the dashboard's Redis panel,
	 * waiting at most 2 seconds, or half the dashboard's timeout when that is shorter.
	 */
	@Bean
	@ConditionalOnMissingBean
	ServerInspector delayQueueServerInspector(RedisConnectionFactory connectionFactory,
			DelayQueueProperties properties) {
		Duration half = properties.getDashboard().getTimeout().dividedBy(2);
		return new RedisServerInspector(connectionFactory, (half.compareTo(RedisServerInspector.DEFAULT_TIMEOUT) < 0)
				? half : RedisServerInspector.DEFAULT_TIMEOUT);
	}

	@Bean
	@ConditionalOnMissingBean
	DelayQueueTemplate delayQueueTemplate(MessageStore store, PayloadConverter payloadConverter,
			DelayQueueProperties properties, ObjectProvider<DelayQueueMetrics> metrics,
			ObjectProvider<ObservationRegistry> observationRegistry,
			ObjectProvider<DelayQueueSenderObservationConvention> observationConvention) {
		DelayQueueTemplate template = new DelayQueueTemplate(store, payloadConverter, properties.getMaxPayloadSize(),
				properties.getProducer().isTransactionAware());
		template.setMetrics(metrics.getIfAvailable(() -> DelayQueueMetrics.NONE));
		template.setObservationRegistry(observationRegistry.getIfAvailable(() -> ObservationRegistry.NOOP));
		observationConvention.ifAvailable(template::setObservationConvention);
		return template;
	}

	@Bean
	@ConditionalOnMissingBean
	ListenerSettingsProvider delayQueueListenerSettingsProvider(DelayQueueProperties properties) {
		return new PropertiesListenerSettingsProvider(properties);
	}

	@Bean
	@ConditionalOnMissingBean
	DelayListenerEndpointRegistry delayListenerEndpointRegistry(PayloadConverter payloadConverter) {
		return new DelayListenerEndpointRegistry(payloadConverter);
	}

	@Bean
	@ConditionalOnMissingBean
	DelayQueueRuntime delayQueueRuntime(MessageStore store, PayloadConverter payloadConverter,
			DelayListenerEndpointRegistry registry, DelayQueueProperties properties,
			ObjectProvider<DelayQueueMetrics> metrics, ObjectProvider<ObservationRegistry> observationRegistry,
			ObjectProvider<DelayQueueReceiverObservationConvention> observationConvention,
			@Qualifier(HANDLER_EXECUTOR) ObjectProvider<Executor> handlerExecutor,
			ObjectProvider<DelayListenerErrorHandler> errorHandler) {
		DelayQueueProperties.Broker broker = properties.getBroker();
		DelayQueueRuntime runtime = new DelayQueueRuntime(store, payloadConverter,
				new BrokerSettings(broker.getBatchSize(), broker.getMaxSleep(), broker.getLookahead()), registry);
		runtime.setMetrics(metrics.getIfAvailable(() -> DelayQueueMetrics.NONE));
		runtime.setObservationRegistry(observationRegistry.getIfAvailable(() -> ObservationRegistry.NOOP));
		observationConvention.ifAvailable(runtime::setObservationConvention);
		handlerExecutor.ifAvailable(runtime::setHandlerExecutor);
		// Two beans, none of them @Primary, fail startup naming both.
		DelayListenerErrorHandler chosen = errorHandler.getIfAvailable();
		if (chosen != null) {
			runtime.setErrorHandler(chosen);
		}
		return runtime;
	}

	@Bean
	@ConditionalOnMissingBean
	DelayQueueSchedules delayQueueSchedules(MessageStore store, DelayQueueTemplate template,
			ObjectProvider<SchedulePoller> poller, DelayListenerEndpointRegistry listeners) {
		DelayQueueSchedules schedules = new DelayQueueSchedules(store.schedules(), template);
		schedules.onChange(() -> poller.ifAvailable(SchedulePoller::wakeUp));
		schedules.checkPayloads(listeners::payloadProblem);
		return schedules;
	}

	@Bean
	@ConditionalOnMissingBean
	DelayQueueGroups delayQueueGroups(MessageStore store) {
		return new DelayQueueGroups(store);
	}

	@Bean
	@ConditionalOnMissingBean
	RedisDataLossWatch delayQueueRedisDataLossWatch(MessageStore store, ObjectProvider<DelayQueueMetrics> metrics,
			ObjectProvider<SchedulePoller> poller) {
		RedisDataLossWatch watch = new RedisDataLossWatch(store, metrics.getIfAvailable(() -> DelayQueueMetrics.NONE));
		// The declared schedules are restored at the poller's next look: at once; the
		// ones
		// saved through the API that were lost are named.
		watch.onLoss(() -> poller.ifAvailable(SchedulePoller::dataLost));
		return watch;
	}

	@Bean
	@ConditionalOnMissingBean
	SchedulePoller delayQueueSchedulePoller(MessageStore store, DelayQueueProperties properties,
			DelayListenerEndpointRegistry listeners) {
		List<Schedule> declared = new ArrayList<>();
		properties.getSchedules()
			.forEach((name, schedule) -> declared.add(DelayQueuePropertiesValidation.schedule(name, schedule)));
		SchedulePoller poller = new SchedulePoller(store, declared);
		poller.checkPayloads(listeners::payloadProblem);
		return poller;
	}

	/**
	 * Reports the queue's events to Micrometer when a {@link MeterRegistry} exists, and
	 * binds the gauges of the listened topics wherever Spring Boot binds meter binders.
	 */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(MeterRegistry.class)
	static class MicrometerMetricsConfiguration {

		@Bean
		@ConditionalOnMissingBean
		@ConditionalOnBean(MeterRegistry.class)
		DelayQueueMetrics delayQueueMetrics(MeterRegistry meterRegistry, DelayQueueProperties properties) {
			DelayQueueProperties.Metrics metrics = properties.getMetrics();
			return new MicrometerDelayQueueMetrics(meterRegistry, metrics.getLatenessPercentiles(),
					metrics.isLatenessHistogram());
		}

		@Bean
		@ConditionalOnMissingBean
		TopicGauges delayQueueTopicGauges(MessageStore store, DelayListenerAnnotationBeanPostProcessor listeners,
				DelayQueueProperties properties) {
			return new TopicGauges(() -> gaugedTopics(listeners, properties).stream().map(store::inspector).toList(),
					properties.getMetrics().getGaugeRefreshInterval());
		}

		/**
		 * The topics with gauges: those listened to, and those the properties name
		 * ({@link DeclaredTopics}), so that a topic nobody listens to can be watched too.
		 */
		private static Set<String> gaugedTopics(DelayListenerAnnotationBeanPostProcessor listeners,
				DelayQueueProperties properties) {
			Set<String> topics = new TreeSet<>(listeners.getTopics());
			topics.addAll(DeclaredTopics.of(properties));
			return topics;
		}

	}

	/**
	 * A topic's dead-letter retention: {@code delay-queue.topics.<topic>.dead-letters.*}
	 * over {@code delay-queue.listener.dead-letters.*}; none unset keeps every dead
	 * letter.
	 * @param properties the properties
	 * @param topic the topic, or a dead-letter queue {@code <topic>#dead}
	 * @return its retention
	 */
	static DeadLetterRetention deadLetterRetention(DelayQueueProperties properties, String topic) {
		DelayQueueProperties.DeadLetters defaults = properties.getListener().getDeadLetters();
		DelayQueueProperties.Topic own = properties.getTopics().get(topic);
		Long maxCount = (own != null && own.getDeadLetters().getMaxCount() != null) ? own.getDeadLetters().getMaxCount()
				: defaults.getMaxCount();
		Duration maxAge = (own != null && own.getDeadLetters().getMaxAge() != null) ? own.getDeadLetters().getMaxAge()
				: defaults.getMaxAge();
		return new DeadLetterRetention((maxCount != null) ? maxCount : 0, (maxAge != null) ? maxAge : Duration.ZERO);
	}

	/**
	 * The reconnect back-off of the Lettuce client: exponential from a millisecond up to
	 * {@code delay-queue.redis-reconnect-max-delay}, so that the queue recovers soon
	 * after Redis is back.
	 * @param properties the properties
	 * @return the back-off, or {@code null} to keep Lettuce's when the maximum is under a
	 * millisecond
	 */
	static @Nullable Delay reconnectDelay(DelayQueueProperties properties) {
		Duration maxDelay = properties.getRedisReconnectMaxDelay();
		return (maxDelay.compareTo(MIN_RECONNECT_DELAY) >= 0)
				? Delay.exponential(MIN_RECONNECT_DELAY, maxDelay, 2, TimeUnit.MILLISECONDS) : null;
	}

	@Bean
	@ConditionalOnMissingBean
	static DelayListenerAnnotationBeanPostProcessor delayListenerAnnotationBeanPostProcessor() {
		return new DelayListenerAnnotationBeanPostProcessor();
	}

	/**
	 * Resolves a topic's listener settings: {@code delay-queue.topics.<topic>.*} over
	 * {@code delay-queue.listener.*}.
	 */
	static final class PropertiesListenerSettingsProvider implements ListenerSettingsProvider {

		private final DelayQueueProperties properties;

		PropertiesListenerSettingsProvider(DelayQueueProperties properties) {
			this.properties = properties;
		}

		@Override
		public ListenerSettings forTopic(String topic) {
			DelayQueueProperties.Listener defaults = this.properties.getListener();
			DelayQueueProperties.Backoff backoff = defaults.getBackoff();
			DelayQueueProperties.Topic own = this.properties.getTopics()
				.getOrDefault(topic, new DelayQueueProperties.Topic());
			DelayQueueProperties.TopicBackoff ownBackoff = own.getBackoff();
			RetryBackoff retryBackoff = new RetryBackoff(
					or(ownBackoff.getInitialInterval(), backoff.getInitialInterval()),
					or(ownBackoff.getMultiplier(), backoff.getMultiplier()),
					or(ownBackoff.getMaxInterval(), backoff.getMaxInterval()));
			return new ListenerSettings(or(own.getConcurrency(), defaults.getConcurrency()), defaults.getPrefetch(),
					or(own.getMaxAttempts(), defaults.getMaxAttempts()),
					or(own.getVisibilityTimeout(), defaults.getVisibilityTimeout()), retryBackoff,
					defaults.getIdleCheckInterval(), defaults.getShutdownTimeout(), defaults.getMaxHandlingTime(),
					or(own.getLatePolicy(), inheritedLatePolicy(topic, defaults)),
					or(own.getLateThreshold(), defaults.getLateThreshold()),
					or(own.getMaxBatchSize(), ListenerSettings.DEFAULT_MAX_BATCH_SIZE),
					or(own.getBatchTimeout(), ListenerSettings.DEFAULT_BATCH_TIMEOUT), rateLimit(own.getRateLimit()),
					noRetryFor(defaults.getNoRetryFor(), own.getNoRetryFor()), or(own.getGroupConcurrency(), 0),
					own.getGroupOrder() == GroupOrder.STRICT, GroupWeights.of(own.getGroupWeights()),
					rateLimit(own.getGroupRateLimit().getLimit(), own.getGroupRateLimit().getPeriod()));
		}

		/**
		 * The late policy of a topic without one of its own: a dead-letter queue delivers
		 * late, as {@code dead-letter} would bury what it exists to deliver.
		 */
		private static LatePolicy inheritedLatePolicy(String topic, DelayQueueProperties.Listener defaults) {
			return TopicPartitions.isDeadLetters(topic) ? LatePolicy.DELIVER : defaults.getLatePolicy();
		}

		/** Both lists, each class once; each is a Throwable (checked when bound). */
		private static List<Class<? extends Throwable>> noRetryFor(List<Class<?>> listener, List<Class<?>> topic) {
			Set<Class<? extends Throwable>> classes = new LinkedHashSet<>();
			Stream.concat(listener.stream(), topic.stream())
				.forEach((type) -> classes.add(type.asSubclass(Throwable.class)));
			return List.copyOf(classes);
		}

		private static @Nullable RateLimit rateLimit(DelayQueueProperties.TopicRateLimit properties) {
			return rateLimit(properties.getLimit(), properties.getPeriod());
		}

		private static @Nullable RateLimit rateLimit(@Nullable Integer limit, @Nullable Duration period) {
			return (limit != null && period != null) ? new RateLimit(limit, period) : null;
		}

		private static <T> T or(@Nullable T value, T fallback) {
			return (value != null) ? value : fallback;
		}

	}

}

package io.github.delayqueue.test;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;

import io.github.delayqueue.autoconfigure.DelayQueueProperties;
import io.github.delayqueue.runtime.DelayQueueRuntime;
import io.github.delayqueue.schedule.SchedulePoller;
import io.github.delayqueue.store.TopicPartitions;
import io.github.delayqueue.store.redis.RedisMessageStore;
import io.github.delayqueue.store.redis.RedisSettingsCheck;
import io.github.delayqueue.store.redis.ScriptClock;
import io.github.delayqueue.test.redis.TestRedis;

import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.beans.factory.support.BeanDefinitionRegistry;
import org.springframework.beans.factory.support.RootBeanDefinition;
import org.springframework.context.ApplicationContextInitializer;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.env.MapPropertySource;
import org.springframework.data.redis.connection.RedisConnectionFactory;

/**
 * Does for one application context what {@link EmbeddedDelayQueue @EmbeddedDelayQueue}
 * does for a test class, e.g.
 * {@code new ApplicationContextRunner().withInitializer(new EmbeddedDelayQueueInitializer())}:
 * points Spring Boot's Redis connection at the test Redis, gives the queue a key prefix
 * of its own and a store on a test clock, turns the brokers' lookahead off, and adds a
 * {@link DelayQueueTestClock} bean.
 */
public final class EmbeddedDelayQueueInitializer
		implements ApplicationContextInitializer<ConfigurableApplicationContext> {

	/** The default longest wait of the clock for the listeners. */
	public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(10);

	/** The name of the property source with the queue's test settings. */
	public static final String PROPERTY_SOURCE_NAME = "embeddedDelayQueue";

	private final Duration timeout;

	/**
	 * An initializer whose clock waits at most {@link #DEFAULT_TIMEOUT}.
	 */
	public EmbeddedDelayQueueInitializer() {
		this(DEFAULT_TIMEOUT);
	}

	/**
	 * An initializer whose clock waits at most the given time for the listeners.
	 * @param timeout the longest wait of {@link DelayQueueTestClock#advance} and
	 * {@link DelayQueueTestClock#awaitIdle()}
	 */
	public EmbeddedDelayQueueInitializer(Duration timeout) {
		if (timeout.isNegative() || timeout.isZero()) {
			throw new IllegalArgumentException("The test clock's timeout must be positive, but is " + timeout);
		}
		this.timeout = timeout;
	}

	@Override
	public void initialize(ConfigurableApplicationContext context) {
		if (!(context.getBeanFactory() instanceof BeanDefinitionRegistry registry)) {
			throw new IllegalStateException("@EmbeddedDelayQueue needs a context whose bean factory takes bean "
					+ "definitions, but this one has " + context.getBeanFactory().getClass().getName());
		}
		TestRedis redis = TestRedis.shared();
		String prefix = "test-" + UUID.randomUUID().toString().substring(0, 8);
		context.getEnvironment()
			.getPropertySources()
			.addFirst(new MapPropertySource(PROPERTY_SOURCE_NAME,
					Map.of("delay-queue.key-prefix", prefix, "delay-queue.broker.lookahead", "0ms")));
		ConfigurableListableBeanFactory beans = context.getBeanFactory();
		registry.registerBeanDefinition("embeddedDelayQueueRedisConnectionDetails",
				TestRedisConnectionDetailsFactory.beanDefinition(redis));
		registry.registerBeanDefinition("embeddedDelayQueueMessageStore",
				new RootBeanDefinition(RedisMessageStore.class, () -> messageStore(beans, prefix)));
		registry.registerBeanDefinition("embeddedDelayQueueRedisSettingsCheck",
				new RootBeanDefinition(RedisSettingsCheck.class,
						() -> new ThrowawayRedisSettingsCheck(beans.getBean(RedisConnectionFactory.class))));
		registry.registerBeanDefinition("delayQueueTestClock", new RootBeanDefinition(DelayQueueTestClock.class, () -> {
			DelayQueueTestClock clock = new DelayQueueTestClock(beans.getBean(RedisMessageStore.class),
					beans.getBean(RedisConnectionFactory.class), beans.getBeanProvider(DelayQueueRuntime.class),
					this.timeout);
			clock.sendTicksWith(beans.getBeanProvider(SchedulePoller.class));
			return clock;
		}));
	}

	/**
	 * A store on the test clock, with the application's send timeout and partitions.
	 */
	private static RedisMessageStore messageStore(ConfigurableListableBeanFactory beans, String prefix) {
		DelayQueueProperties properties = beans.getBeanProvider(DelayQueueProperties.class).getIfAvailable();
		Duration sendTimeout = (properties != null) ? properties.getProducer().getSendTimeout()
				: RedisMessageStore.DEFAULT_TIMEOUT;
		RedisMessageStore store = new RedisMessageStore(beans.getBean(RedisConnectionFactory.class), prefix,
				sendTimeout, ScriptClock.offsetBy(DelayQueueTestClock.offsetKey(prefix)));
		if (properties != null) {
			Map<String, Integer> partitions = new HashMap<>();
			properties.getTopics().forEach((topic, settings) -> partitions.put(topic, settings.getPartitions()));
			store.usePartitions(TopicPartitions.of(partitions));
		}
		return store;
	}

}

package io.github.delayqueue.autoconfigure;

import java.util.concurrent.Executor;

import io.github.delayqueue.producer.DelayQueueTemplate;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.Delay;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnThreading;
import org.springframework.boot.autoconfigure.data.redis.ClientResourcesBuilderCustomizer;
import org.springframework.boot.autoconfigure.data.redis.RedisAutoConfiguration;
import org.springframework.boot.autoconfigure.thread.Threading;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.core.task.VirtualThreadTaskExecutor;
import org.springframework.data.redis.connection.RedisConnectionFactory;

/**
 * Auto-configuration of the delay queue on Spring Boot 3: the {@link DelayQueueTemplate}
 * for sending and the {@link io.github.delayqueue.listener.DelayListener @DelayListener}
 * support for consuming, on the application's {@link RedisConnectionFactory}. Every bean
 * can be replaced by one of your own, and {@code delay-queue.enabled=false} switches it
 * all off. The beans are those of {@link DelayQueueConfiguration}, shared with the Spring
 * Boot 4 line; what differs is here: the names of Spring Boot's Redis auto-configuration,
 * threading and Lettuce customizer.
 */
@AutoConfiguration(after = RedisAutoConfiguration.class,
		afterName = { "org.springframework.boot.autoconfigure.jackson.JacksonAutoConfiguration",
				"org.springframework.boot.actuate.autoconfigure.metrics.CompositeMeterRegistryAutoConfiguration" })
@ConditionalOnClass(RedisConnectionFactory.class)
@ConditionalOnBean(RedisConnectionFactory.class)
@ConditionalOnBooleanProperty(name = "delay-queue.enabled", matchIfMissing = true)
@Import(DelayQueueConfiguration.class)
public final class DelayQueueAutoConfiguration {

	/**
	 * Name of the {@link Executor} bean that, when present, runs every topic's listener
	 * handlers (at most each topic's concurrency at once) instead of a pool of handler
	 * threads per topic.
	 */
	public static final String HANDLER_EXECUTOR = DelayQueueConfiguration.HANDLER_EXECUTOR;

	/**
	 * With {@code spring.threads.virtual.enabled=true} (Java 21 or newer), listener
	 * handlers run on virtual threads, at most each topic's concurrency at once.
	 */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnThreading(Threading.VIRTUAL)
	static class VirtualThreadsConfiguration {

		@Bean(HANDLER_EXECUTOR)
		@ConditionalOnMissingBean(name = HANDLER_EXECUTOR)
		Executor delayQueueHandlerExecutor() {
			return new VirtualThreadTaskExecutor("delay-queue-handler-");
		}

	}

	/**
	 * Caps the reconnect backoff of the Lettuce client when Spring Boot builds its
	 * {@link ClientResources}, so that the queue recovers soon after Redis is back.
	 */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass({ ClientResources.class, ClientResourcesBuilderCustomizer.class })
	static class LettuceReconnectConfiguration {

		@Bean
		ClientResourcesBuilderCustomizer delayQueueRedisReconnectDelay(DelayQueueProperties properties) {
			Delay delay = DelayQueueConfiguration.reconnectDelay(properties);
			return (builder) -> {
				if (delay != null) {
					builder.reconnectDelay(delay);
				}
			};
		}

	}

}

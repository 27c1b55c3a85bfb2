package io.github.delayqueue.autoconfigure;

import io.github.delayqueue.actuate.DelayQueueEndpoint;
import io.github.delayqueue.actuate.DelayQueueHealthIndicator;
import io.github.delayqueue.core.DelayQueueTemplate;
import io.github.delayqueue.runtime.DelayQueueRuntime;
import io.github.delayqueue.store.RedisMessageStore;

import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Auto-configuration of the delay queue's operations support with Spring Boot Actuator:
 * the {@code delayqueue} endpoint (when available, that is exposed) and the
 * {@code delayQueue} health contributor ({@code management.health.delayqueue.enabled}).
 */
@AutoConfiguration(after = DelayQueueAutoConfiguration.class)
@ConditionalOnBooleanProperty(name = "delay-queue.enabled", matchIfMissing = true)
@ConditionalOnBean({ RedisMessageStore.class, DelayQueueRuntime.class, DelayQueueProperties.class })
public final class DelayQueueActuatorAutoConfiguration {

	/**
	 * The {@code delayqueue} endpoint.
	 */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass({ Endpoint.class, ConditionalOnAvailableEndpoint.class })
	static class EndpointConfiguration {

		@Bean
		@ConditionalOnMissingBean
		@ConditionalOnBean(DelayQueueTemplate.class)
		@ConditionalOnAvailableEndpoint
		DelayQueueEndpoint delayQueueEndpoint(RedisMessageStore store, DelayQueueTemplate template,
				DelayQueueRuntime runtime) {
			return new DelayQueueEndpoint(store, template, runtime);
		}

	}

	/**
	 * The {@code delayQueue} health contributor.
	 */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass({ HealthIndicator.class, ConditionalOnEnabledHealthIndicator.class })
	static class HealthConfiguration {

		@Bean
		@ConditionalOnMissingBean(name = "delayQueueHealthIndicator")
		@ConditionalOnEnabledHealthIndicator("delayqueue")
		DelayQueueHealthIndicator delayQueueHealthIndicator(RedisMessageStore store, DelayQueueRuntime runtime,
				DelayQueueProperties properties) {
			DelayQueueProperties.Health health = properties.getHealth();
			Status latenessStatus = switch (health.getLatenessStatus()) {
				case OUT_OF_SERVICE -> Status.OUT_OF_SERVICE;
				case DOWN -> Status.DOWN;
			};
			return new DelayQueueHealthIndicator(store, runtime, health.getMaxLateness(), latenessStatus,
					health.getTimeout());
		}

	}

}

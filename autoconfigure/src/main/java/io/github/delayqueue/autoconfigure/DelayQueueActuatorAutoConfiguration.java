package io.github.delayqueue.autoconfigure;

import io.github.delayqueue.actuate.DelayQueueHealthIndicator;
import io.github.delayqueue.runtime.DelayQueueRuntime;
import io.github.delayqueue.runtime.RedisDataLossWatch;
import io.github.delayqueue.store.MessageStore;

import org.springframework.beans.factory.ObjectProvider;
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
import org.springframework.context.annotation.Import;

/**
 * Auto-configuration of the delay queue's operations support with Spring Boot 4's
 * Actuator: the {@code delayqueue} endpoint (when available, that is exposed), the
 * {@code delayQueue} health contributor ({@code management.health.delayqueue.enabled})
 * and the operators' dashboard ({@code delay-queue.dashboard.enabled}).
 */
@AutoConfiguration(after = DelayQueueAutoConfiguration.class)
@ConditionalOnBooleanProperty(name = "delay-queue.enabled", matchIfMissing = true)
@ConditionalOnBean({ MessageStore.class, DelayQueueRuntime.class, DelayQueueProperties.class })
@Import({ DelayQueueEndpointConfiguration.class, DelayQueueDashboardConfiguration.class })
public final class DelayQueueActuatorAutoConfiguration {

	/**
	 * The {@code delayQueue} health contributor.
	 */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass({ HealthIndicator.class, ConditionalOnEnabledHealthIndicator.class })
	static class HealthConfiguration {

		@Bean
		@ConditionalOnMissingBean(name = "delayQueueHealthIndicator")
		@ConditionalOnEnabledHealthIndicator("delayqueue")
		DelayQueueHealthIndicator delayQueueHealthIndicator(MessageStore store, DelayQueueRuntime runtime,
				DelayQueueProperties properties, ObjectProvider<RedisDataLossWatch> dataLoss) {
			DelayQueueProperties.Health health = properties.getHealth();
			Status latenessStatus = switch (health.getLatenessStatus()) {
				case OUT_OF_SERVICE -> Status.OUT_OF_SERVICE;
				case DOWN -> Status.DOWN;
			};
			return new DelayQueueHealthIndicator(store, runtime, health.getMaxLateness(), latenessStatus,
					health.getTimeout(), dataLoss.getIfAvailable(), DeclaredTopics.of(properties));
		}

	}

}

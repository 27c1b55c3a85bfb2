package io.github.delayqueue.autoconfigure;

import io.github.delayqueue.actuate.DelayQueueEndpoint;
import io.github.delayqueue.producer.DelayQueueTemplate;
import io.github.delayqueue.runtime.DelayQueueRuntime;
import io.github.delayqueue.schedule.DelayQueueSchedules;
import io.github.delayqueue.store.MessageStore;

import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The {@code delayqueue} endpoint when it is available (that is exposed), the same on
 * Spring Boot 3 and 4; imported by the {@code DelayQueueActuatorAutoConfiguration} of
 * each line.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnClass({ Endpoint.class, ConditionalOnAvailableEndpoint.class })
final class DelayQueueEndpointConfiguration {

	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnBean(DelayQueueTemplate.class)
	@ConditionalOnAvailableEndpoint
	DelayQueueEndpoint delayQueueEndpoint(MessageStore store, DelayQueueTemplate template, DelayQueueRuntime runtime,
			DelayQueueSchedules schedules) {
		return new DelayQueueEndpoint(store, template, runtime, schedules);
	}

}

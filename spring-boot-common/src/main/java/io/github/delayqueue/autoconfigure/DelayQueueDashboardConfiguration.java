package io.github.delayqueue.autoconfigure;

import java.util.Map;
import java.util.function.Supplier;

import io.github.delayqueue.actuate.DelayQueueEndpoint;
import io.github.delayqueue.producer.DelayQueueTemplate;
import io.github.delayqueue.dashboard.DashboardAccess;
import io.github.delayqueue.dashboard.DashboardMeters;
import io.github.delayqueue.dashboard.DelayQueueDashboard;
import io.github.delayqueue.runtime.DelayQueueRuntime;
import io.github.delayqueue.runtime.RedisDataLossWatch;
import io.github.delayqueue.schedule.DelayQueueSchedules;
import io.github.delayqueue.store.MessageStore;
import io.github.delayqueue.store.ServerInspector;
import io.micrometer.core.instrument.MeterRegistry;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.actuate.endpoint.Access;
import org.springframework.boot.actuate.endpoint.EndpointAccessResolver;
import org.springframework.boot.actuate.endpoint.EndpointId;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication.Type;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.web.servlet.function.RouterFunction;
import org.springframework.web.servlet.function.ServerResponse;

/**
 * The operators' web dashboard, when {@code delay-queue.dashboard.enabled} is
 * {@code true} in a Spring MVC application, the same on Spring Boot 3 and 4; imported by
 * the {@code DelayQueueActuatorAutoConfiguration} of each line. It reads through the
 * {@code delayqueue} endpoint's operations (exposed or not) with that endpoint's access.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnWebApplication(type = Type.SERVLET)
@ConditionalOnClass({ Endpoint.class, RouterFunction.class })
@ConditionalOnProperty(name = "delay-queue.dashboard.enabled", havingValue = "true")
@ConditionalOnBean(DelayQueueTemplate.class)
final class DelayQueueDashboardConfiguration {

	private static final EndpointId ENDPOINT = EndpointId.of("delayqueue");

	@Bean
	@ConditionalOnMissingBean
	DelayQueueDashboard delayQueueDashboard(MessageStore store, DelayQueueTemplate template, DelayQueueRuntime runtime,
			DelayQueueProperties properties, ObjectProvider<DelayQueueEndpoint> endpoint,
			ObjectProvider<EndpointAccessResolver> accessResolver, ObjectProvider<DashboardMetersSource> meters,
			ServerInspector servers, ObjectProvider<RedisDataLossWatch> dataLoss, DelayQueueSchedules schedules) {
		EndpointAccessResolver resolver = accessResolver.getIfAvailable(() -> (id, defaultAccess) -> defaultAccess);
		DashboardAccess access = new DashboardAccess(resolver.accessFor(ENDPOINT, Access.READ_ONLY));
		DelayQueueDashboard dashboard = new DelayQueueDashboard(
				endpoint.getIfAvailable(() -> new DelayQueueEndpoint(store, template, runtime, schedules)), access,
				properties.getDashboard().getPath(), properties.getDashboard().getTimeout(),
				meters.getIfAvailable(() -> () -> Map.of("available", false)), servers);
		dataLoss.ifAvailable((watch) -> dashboard.setDataLoss(() -> {
			RedisDataLossWatch.Loss loss = watch.lastLoss();
			return (loss != null) ? Map.of("noticedAt", loss.noticedAt().toString(), "message", loss.message())
					: Map.of();
		}));
		return dashboard;
	}

	@Bean
	RouterFunction<ServerResponse> delayQueueDashboardRoutes(DelayQueueDashboard dashboard) {
		return dashboard.routes();
	}

	/** The meters of the live charts, with Micrometer. */
	interface DashboardMetersSource extends Supplier<Map<String, Object>> {

	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(MeterRegistry.class)
	static class MetersConfiguration {

		@Bean
		DashboardMetersSource delayQueueDashboardMeters(ObjectProvider<MeterRegistry> registry) {
			return () -> {
				MeterRegistry meters = registry.getIfAvailable();
				return (meters != null) ? new DashboardMeters(meters).get() : Map.of("available", false);
			};
		}

	}

}

package io.github.delayqueue.autoconfigure;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.delayqueue.actuate.DelayQueueEndpoint;
import io.github.delayqueue.actuate.DelayQueueEndpoint.ListenerDescriptor;
import io.github.delayqueue.actuate.DelayQueueHealthIndicator;
import io.github.delayqueue.listener.DelayListener;
import io.github.delayqueue.producer.DelayQueueTemplate;
import io.github.delayqueue.runtime.DelayQueueRuntime;
import io.github.delayqueue.schedule.DelayQueueSchedules;
import io.github.delayqueue.schedule.Schedule;
import io.github.delayqueue.store.redis.RedisMessageStore;
import io.github.delayqueue.testsupport.QueueContexts;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link DelayQueueActuatorAutoConfiguration}: the {@code delayqueue} endpoint when it is
 * available, the {@code delayQueue} health contributor when enabled, neither without
 * Actuator or with the queue switched off.
 */
class DelayQueueActuatorAutoConfigurationTests {

	private final ApplicationContextRunner runner = QueueContexts.runner(QueueContexts.uniquePrefix())
		.withConfiguration(AutoConfigurations.of(DelayQueueActuatorAutoConfiguration.class));

	@Test
	void withActuatorTheHealthContributorIsContributed() {
		this.runner.run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(context).hasSingleBean(DelayQueueHealthIndicator.class);
			assertThat(context).hasBean("delayQueueHealthIndicator");
			assertThat(context.getBean(DelayQueueHealthIndicator.class).health().getStatus()).isEqualTo(Status.UP);
		});
	}

	@Test
	void endpointIsContributedWhenExposed() {
		this.runner.withPropertyValues("management.endpoints.web.exposure.include=health,delayqueue")
			.run((context) -> assertThat(context).hasSingleBean(DelayQueueEndpoint.class));
	}

	@Test
	void theEndpointChangesSchedulesThroughTheApplicationsBeanSoThatItsPollerWakesUp() {
		this.runner.withPropertyValues("management.endpoints.web.exposure.include=delayqueue").run((context) -> {
			DelayQueueSchedules schedules = context.getBean(DelayQueueSchedules.class);
			schedules.save(Schedule.fixedRate("hourly", "reports", Duration.ofHours(1)));
			schedules.pause("hourly");
			AtomicInteger changes = new AtomicInteger();
			schedules.onChange(changes::incrementAndGet);
			DelayQueueEndpoint endpoint = context.getBean(DelayQueueEndpoint.class);
			assertThat(endpoint.topicAction("reports", "resume-schedule", null, "hourly", null, null).affected())
				.isOne();
			assertThat(changes).as("wake-ups of the poller").hasValue(1);
		});
	}

	@Test
	void theEndpointDescribesAListenersGroupConcurrencyAndLeavesItOutWithoutALimit() {
		this.runner.withPropertyValues("management.endpoints.web.exposure.include=delayqueue")
			.withBean(LimitedListener.class)
			.withBean(UnlimitedListener.class)
			.run((context) -> {
				DelayQueueEndpoint endpoint = context.getBean(DelayQueueEndpoint.class);
				ListenerDescriptor limited = endpoint.topic("limited", null, null, null).listener();
				assertThat(limited).isNotNull();
				assertThat(limited.groupConcurrency()).isEqualTo(2);
				ListenerDescriptor unlimited = endpoint.topic("unlimited", null, null, null).listener();
				assertThat(unlimited).isNotNull();
				assertThat(unlimited.groupConcurrency()).isNull();
			});
	}

	@Test
	void endpointIsNotContributedWhenNotExposed() {
		this.runner.run((context) -> assertThat(context).doesNotHaveBean(DelayQueueEndpoint.class));
	}

	@Test
	void endpointIsNotContributedWhenItsAccessIsNone() {
		this.runner
			.withPropertyValues("management.endpoints.web.exposure.include=delayqueue",
					"management.endpoint.delayqueue.access=NONE")
			.run((context) -> assertThat(context).doesNotHaveBean(DelayQueueEndpoint.class));
	}

	@Test
	void healthContributorCanBeSwitchedOff() {
		this.runner.withPropertyValues("management.health.delayqueue.enabled=false")
			.run((context) -> assertThat(context).doesNotHaveBean(DelayQueueHealthIndicator.class));
	}

	@Test
	void disabledQueueContributesNeitherEndpointNorHealthContributor() {
		this.runner
			.withPropertyValues("delay-queue.enabled=false", "management.endpoints.web.exposure.include=delayqueue")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(context).doesNotHaveBean(DelayQueueTemplate.class);
				assertThat(context).doesNotHaveBean(DelayQueueEndpoint.class);
				assertThat(context).doesNotHaveBean(DelayQueueHealthIndicator.class);
			});
	}

	@Test
	void withoutActuatorNeitherEndpointNorHealthContributorIsContributedAndTheQueueStillWorks() {
		this.runner
			.withClassLoader(
					new FilteredClassLoader("org.springframework.boot.actuate", "org.springframework.boot.health"))
			.withPropertyValues("management.endpoints.web.exposure.include=delayqueue")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(context).hasSingleBean(DelayQueueTemplate.class);
				assertThat(context).doesNotHaveBean(DelayQueueEndpoint.class);
				assertThat(context).doesNotHaveBean(DelayQueueHealthIndicator.class);
			});
	}

	@Test
	void userEndpointReplacesOurs() {
		this.runner.withUserConfiguration(OwnEndpointConfig.class)
			.withPropertyValues("management.endpoints.web.exposure.include=delayqueue")
			.run((context) -> {
				assertThat(context).hasSingleBean(DelayQueueEndpoint.class);
				assertThat(context).hasBean("ownEndpoint");
			});
	}

	@Test
	void healthPropertiesAreBound() {
		this.runner
			.withPropertyValues("delay-queue.health.max-lateness=5m", "delay-queue.health.lateness-status=down",
					"delay-queue.health.timeout=750ms")
			.run((context) -> {
				DelayQueueProperties.Health health = context.getBean(DelayQueueProperties.class).getHealth();
				assertThat(health.getMaxLateness()).isEqualTo(Duration.ofMinutes(5));
				assertThat(health.getTimeout()).isEqualTo(Duration.ofMillis(750));
				assertThat(health.getLatenessStatus()).isEqualTo(DelayQueueProperties.Health.LatenessStatus.DOWN);
			});
	}

	@Test
	void healthPropertiesDefaultToNoMaximumLatenessAndATimeoutOfTwoSeconds() {
		this.runner.run((context) -> {
			DelayQueueProperties.Health health = context.getBean(DelayQueueProperties.class).getHealth();
			assertThat(health.getMaxLateness()).isNull();
			assertThat(health.getTimeout()).isEqualTo(Duration.ofSeconds(2));
			assertThat(health.getLatenessStatus()).isEqualTo(DelayQueueProperties.Health.LatenessStatus.OUT_OF_SERVICE);
		});
	}

	@Test
	void healthTimeoutOfZeroFailsStartupNamingTheProperty() {
		this.runner.withPropertyValues("delay-queue.health.timeout=0s").run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context).getFailure()
				.rootCause()
				.hasMessageContaining("delay-queue.health.timeout must be positive, but was 0s");
		});
	}

	@Configuration(proxyBeanMethods = false)
	static class OwnEndpointConfig {

		@Bean
		DelayQueueEndpoint ownEndpoint(RedisMessageStore store, DelayQueueTemplate template, DelayQueueRuntime runtime,
				DelayQueueSchedules schedules) {
			return new DelayQueueEndpoint(store, template, runtime, schedules);
		}

	}

	static class LimitedListener {

		@DelayListener(topic = "limited", groupConcurrency = "2")
		void on(String payload) {
		}

	}

	static class UnlimitedListener {

		@DelayListener(topic = "unlimited")
		void on(String payload) {
		}

	}

}

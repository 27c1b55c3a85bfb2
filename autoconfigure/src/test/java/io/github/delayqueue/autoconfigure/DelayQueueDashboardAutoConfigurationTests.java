package io.github.delayqueue.autoconfigure;

import io.github.delayqueue.dashboard.DelayQueueDashboard;
import io.github.delayqueue.test.redis.TestRedis;
import io.github.delayqueue.testsupport.QueueContexts;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The dashboard is served only when asked for, and only by a Spring MVC application; a
 * path it cannot be served at fails startup naming the property.
 */
class DelayQueueDashboardAutoConfigurationTests {

	private final WebApplicationContextRunner webRunner = new WebApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, JacksonAutoConfiguration.class,
				DelayQueueAutoConfiguration.class, DelayQueueActuatorAutoConfiguration.class))
		.withPropertyValues(TestRedis.shared().springProperties())
		.withPropertyValues("delay-queue.key-prefix=" + QueueContexts.uniquePrefix());

	@Test
	void theDashboardIsOffByDefault() {
		this.webRunner.run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(context).doesNotHaveBean(DelayQueueDashboard.class);
		});
	}

	@Test
	void aWebApplicationServesItWhenEnabled() {
		this.webRunner.withPropertyValues("delay-queue.dashboard.enabled=true")
			.run((context) -> assertThat(context).hasSingleBean(DelayQueueDashboard.class)
				.hasBean("delayQueueDashboardRoutes"));
	}

	@Test
	void anApplicationWithoutAWebServerDoesNotServeIt() {
		QueueContexts.runner(QueueContexts.uniquePrefix())
			.withConfiguration(AutoConfigurations.of(DelayQueueActuatorAutoConfiguration.class))
			.withPropertyValues("delay-queue.dashboard.enabled=true")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(context).doesNotHaveBean(DelayQueueDashboard.class);
			});
	}

	@Test
	void withoutActuatorItIsNotServedAndTheQueueStillWorks() {
		this.webRunner.withClassLoader(new FilteredClassLoader("org.springframework.boot.actuate"))
			.withPropertyValues("delay-queue.dashboard.enabled=true")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(context).doesNotHaveBean(DelayQueueDashboard.class);
			});
	}

	@Test
	void aPathThatCannotBeServedFailsStartupNamingTheProperty() {
		for (String path : new String[] { "delay-queue", "/delay-queue/", "/a/../b", "/a b", "/" }) {
			this.webRunner
				.withPropertyValues("delay-queue.dashboard.enabled=true", "delay-queue.dashboard.path=" + path)
				.run((context) -> assertThat(context).hasFailed()
					.getFailure()
					.rootCause()
					.hasMessageContaining("delay-queue.dashboard.path must start with '/'"));
		}
	}

}

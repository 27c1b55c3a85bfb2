package io.github.delayqueue.autoconfigure;

import java.util.UUID;

import io.github.delayqueue.test.redis.TestRedis;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A value set right under {@code delay-queue.schedules}, as a user looking for a switch
 * writes it, fails the startup with an analysis that says each key there names a
 * schedule, that there is no switch, and where to read how to keep schedules out of
 * tests.
 */
class ScheduleSwitchFailureAnalyzerTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, JacksonAutoConfiguration.class,
				DelayQueueAutoConfiguration.class))
		.withPropertyValues(TestRedis.shared().springProperties())
		.withPropertyValues("delay-queue.key-prefix=switch-" + UUID.randomUUID().toString().substring(0, 8));

	@Test
	void aSwitchUnderTheSchedulesIsExplainedAsTheScheduleItNames() {
		this.runner.withPropertyValues("delay-queue.schedules.enabled=false").run((context) -> {
			assertThat(context).hasFailed();
			FailureAnalysis analysis = new ScheduleSwitchFailureAnalyzer().analyze(context.getStartupFailure());
			assertThat(analysis).isNotNull();
			assertThat(analysis.getDescription()).contains("delay-queue.schedules.enabled",
					"is read as a schedule named 'enabled'");
			assertThat(analysis.getAction()).contains("There is no switch", "Schedules in tests");
		});
	}

	@Test
	void otherBindingFailuresAreLeftToSpringBoot() {
		this.runner.withPropertyValues("delay-queue.listener.max-attempts=many").run((context) -> {
			assertThat(context).hasFailed();
			assertThat(new ScheduleSwitchFailureAnalyzer().analyze(context.getStartupFailure())).isNull();
		});
	}

}

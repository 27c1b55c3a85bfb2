package io.github.delayqueue.autoconfigure;

import java.util.Map;
import java.util.UUID;

import io.github.delayqueue.test.redis.TestRedis;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.core.env.SystemEnvironmentPropertySource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Keys under {@code delay-queue.} that no property binds are warned about at startup,
 * with the closest known key, or fail the startup with
 * {@code delay-queue.fail-on-unknown-properties=true}; valid keys of every form never
 * are.
 */
@ExtendWith(OutputCaptureExtension.class)
class UnknownPropertiesTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, JacksonAutoConfiguration.class,
				DelayQueueAutoConfiguration.class))
		.withPropertyValues(TestRedis.shared().springProperties())
		.withPropertyValues("delay-queue.key-prefix=unknown-" + UUID.randomUUID().toString().substring(0, 8));

	@Test
	void aMisspelledKeyIsWarnedAboutWithWhereItWasSetAndTheKeyItWasMeantToBe(CapturedOutput output) {
		this.runner
			.withPropertyValues("delay-queue.listner.max-attempts=3", "delay-queue.foo=1",
					"delay-queue.topics.orders.max-atempts=3", "delay-queue.topics[a.b].partition=2")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(output).contains("WARN")
					.contains(
							"Unknown property delay-queue.listner.max-attempts (set by \"delay-queue.listner.max-attempts\" from property source \"test\") is"
									+ " ignored: no delay-queue property has this name; did you mean"
									+ " delay-queue.listener.max-attempts?")
					.contains(
							"Unknown property delay-queue.foo (set by \"delay-queue.foo\" from property source \"test\") is ignored: no delay-queue property has this name, nor one close to it; the closest is delay-queue.")
					.contains("did you mean delay-queue.topics.orders.max-attempts?")
					.contains("did you mean delay-queue.topics[a.b].partitions?")
					.contains("delay-queue.fail-on-unknown-properties=true fails the startup instead");
				assertThat(output.toString().split("Unknown property delay-queue.foo ", -1)).hasSize(2);
			});
	}

	@Test
	void aMisspelledEnvironmentVariableIsWarnedAbout(CapturedOutput output) {
		this.runner
			.withInitializer((context) -> context.getEnvironment()
				.getPropertySources()
				.addFirst(new SystemEnvironmentPropertySource("test-systemEnvironment",
						Map.of("DELAYQUEUE_LISTNER_MAXATTEMPTS", "3"))))
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(output)
					.contains("Unknown property delayqueue.listner.maxattempts (set by"
							+ " \"DELAYQUEUE_LISTNER_MAXATTEMPTS\" from property source \"test-systemEnvironment\")")
					.contains("did you mean delay-queue.listener.max-attempts?");
			});
	}

	@Test
	void validKeysOfEveryKindAreNeverWarnedAbout(CapturedOutput output) {
		this.runner.withPropertyValues("delay-queue.enabled=true", "delay-queue.max-payload-size=2MB",
				"delay-queue.listener.backoff.initial-interval=1s", "delay-queue.listener.maxAttempts=4",
				"delay-queue.listener.no-retry-for[0]=java.lang.IllegalStateException",
				"delay-queue.listener.dead-letters.max-count=10", "delay-queue.producer.replication.timeout=2s",
				"delay-queue.health.lateness-status=down", "delay-queue.dashboard.path=/dq",
				"delay-queue.topics.orders.partitions=2", "delay-queue.topics.orders.rate-limit.limit=10",
				"delay-queue.topics.orders.rate-limit.period=1s", "delay-queue.topics.orders.backoff.max-interval=1m",
				"delay-queue.topics.orders.backoff-initial-interval=1s", "delay-queue.topics[a.b].max-attempts=3",
				"delay-queue.topics[orders#dead].dead-letters.max-age=1d", "delay-queue.schedules.nightly.topic=orders",
				"delay-queue.schedules.nightly.cron=0 0 3 * * *", "delay-queue.schedules.nightly.misfire=skip",
				"delay-queue.fail-on-unknown-properties=true")
			.withInitializer((context) -> context.getEnvironment()
				.getPropertySources()
				.addFirst(new SystemEnvironmentPropertySource("test-systemEnvironment",
						Map.of("DELAYQUEUE_LISTENER_CONCURRENCY", "2", "DELAYQUEUE_TOPICS_ORDERS_CONCURRENCY", "3",
								"DELAYQUEUE_METRICS_LATENESSPERCENTILES_0_", "0.5"))))
			.run((context) -> {
				assertThat(context).hasNotFailed();
				DelayQueueProperties properties = context.getBean(DelayQueueProperties.class);
				assertThat(properties.getListener().getMaxAttempts()).isEqualTo(4);
				assertThat(properties.getListener().getConcurrency()).isEqualTo(2);
				assertThat(properties.getTopics().get("orders").getConcurrency()).isEqualTo(3);
				assertThat(properties.getTopics()).containsKeys("orders", "a.b", "orders#dead");
				assertThat(properties.getListener().getNoRetryFor()).containsExactly(IllegalStateException.class);
				assertThat(properties.getMetrics().getLatenessPercentiles()).containsExactly(0.5);
				assertThat(output).doesNotContain("Unknown property");
			});
	}

	@Test
	void unknownKeysFailTheStartupWhenAskedToWithAnAnalysisNamingThem() {
		this.runner
			.withPropertyValues("delay-queue.fail-on-unknown-properties=true", "delay-queue.listner.max-attempts=3",
					"delay-queue.foo=1")
			.run((context) -> {
				assertThat(context).hasFailed();
				assertThat(context.getStartupFailure()).rootCause().isInstanceOf(UnknownPropertiesException.class);
				FailureAnalysis analysis = new UnknownPropertiesFailureAnalyzer().analyze(context.getStartupFailure());
				assertThat(analysis.getDescription()).contains("2 keys under delay-queue. match no property",
						"Unknown property delay-queue.listner.max-attempts (set by \"delay-queue.listner.max-attempts\" from property source \"test\")",
						"did you mean delay-queue.listener.max-attempts?", "Unknown property delay-queue.foo")
					.doesNotContain("is ignored");
				assertThat(analysis.getAction()).contains("docs/configuration.md",
						"delay-queue.fail-on-unknown-properties=false");
			});
	}

}

package io.github.delayqueue.autoconfigure;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.UUID;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import io.github.delayqueue.actuate.DelayQueueEndpoint;
import io.github.delayqueue.actuate.DelayQueueHealthIndicator;
import io.github.delayqueue.convert.Jackson2JsonPayloadConverter;
import io.github.delayqueue.convert.PayloadConverter;
import io.github.delayqueue.producer.DelayQueueTemplate;
import io.github.delayqueue.producer.SendResult;
import io.github.delayqueue.metrics.DelayQueueMeterNames;
import io.github.delayqueue.runtime.DelayQueueRuntime;
import io.github.delayqueue.store.MessageSnapshot;
import io.github.delayqueue.store.MessageState;
import io.github.delayqueue.store.redis.RedisMessageStore;
import io.github.delayqueue.test.redis.TestRedis;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.SpringBootVersion;
import org.springframework.boot.actuate.autoconfigure.endpoint.EndpointAutoConfiguration;
import org.springframework.boot.actuate.autoconfigure.health.HealthContributorAutoConfiguration;
import org.springframework.boot.actuate.health.Status;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.data.redis.RedisAutoConfiguration;
import org.springframework.boot.autoconfigure.jackson.JacksonAutoConfiguration;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.assertj.core.api.Assertions.assertThatNoException;

/**
 * The Spring Boot 3 line's auto-configuration, on Spring Boot 3.5 with Jackson 2 and a
 * real Redis: the same beans, properties, endpoint, health and metrics as the Spring Boot
 * 4 line.
 */
class SpringBoot3AutoConfigurationTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(RedisAutoConfiguration.class, JacksonAutoConfiguration.class,
				DelayQueueAutoConfiguration.class))
		.withPropertyValues(TestRedis.shared().springProperties())
		.withPropertyValues("delay-queue.key-prefix=boot3-" + UUID.randomUUID().toString().substring(0, 8));

	@Test
	void runsOnSpringBoot3() {
		assertThat(SpringBootVersion.getVersion()).startsWith("3.5.");
	}

	@Test
	void contributesTheQueueAndSendsToRedis() {
		this.runner.run((context) -> {
			assertThat(context).hasNotFailed()
				.hasSingleBean(DelayQueueTemplate.class)
				.hasSingleBean(DelayQueueRuntime.class)
				.hasSingleBean(RedisMessageStore.class);
			DelayQueueTemplate template = context.getBean(DelayQueueTemplate.class);
			SendResult sent = template.send("orders", new Order("o-1", 2), Duration.ofMinutes(30));
			MessageSnapshot stored = context.getBean(RedisMessageStore.class)
				.inspector("orders")
				.inspect(sent.id(), 1024);
			assertThat(stored).isNotNull();
			assertThat(stored.state()).isEqualTo(MessageState.SCHEDULED);
			assertThat(new String(stored.storedPrefix(), StandardCharsets.UTF_8))
				.contains("{\"id\":\"o-1\",\"items\":2}");
		});
	}

	@Test
	void writesPayloadsWithTheApplicationsJackson2ObjectMapper() {
		this.runner
			.withBean("jacksonObjectMapper", ObjectMapper.class,
					() -> new ObjectMapper().setPropertyNamingStrategy(PropertyNamingStrategies.SNAKE_CASE))
			.run((context) -> {
				PayloadConverter converter = context.getBean(PayloadConverter.class);
				assertThat(converter).isInstanceOf(Jackson2JsonPayloadConverter.class);
				assertThat(new String(converter.toBytes(new Pending("o-1")), StandardCharsets.UTF_8))
					.isEqualTo("{\"order_id\":\"o-1\"}");
			});
	}

	@Test
	void isSwitchedOffByItsProperty() {
		this.runner.withPropertyValues("delay-queue.enabled=false")
			.run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean(DelayQueueTemplate.class));
	}

	@Test
	void aBadPropertyFailsStartupNamingIt() {
		this.runner.withPropertyValues("delay-queue.listener.concurrency=0")
			.run((context) -> assertThat(context).getFailure()
				.rootCause()
				.hasMessageContaining("delay-queue.listener.concurrency"));
	}

	@Test
	void reportsToAMeterRegistry() {
		this.runner.withBean(MeterRegistry.class, SimpleMeterRegistry::new).run((context) -> {
			context.getBean(DelayQueueTemplate.class).send("orders", "payload", Duration.ofMinutes(1));
			assertThat(context.getBean(MeterRegistry.class).find(DelayQueueMeterNames.SENT).counter()).isNotNull()
				.satisfies((sent) -> assertThat(sent.count()).isEqualTo(1.0));
		});
	}

	@Test
	void contributesTheHealthIndicatorAndTheEndpointWithActuator() {
		this.runner
			.withConfiguration(AutoConfigurations.of(EndpointAutoConfiguration.class,
					HealthContributorAutoConfiguration.class, DelayQueueActuatorAutoConfiguration.class))
			.withPropertyValues("management.endpoints.web.exposure.include=health,delayqueue")
			.run((context) -> {
				assertThat(context).hasNotFailed().hasSingleBean(DelayQueueEndpoint.class);
				assertThat(context.getBean(DelayQueueHealthIndicator.class).health().getStatus()).isEqualTo(Status.UP);
				context.getBean(DelayQueueTemplate.class).send("orders", "payload", Duration.ofMinutes(1));
				assertThat(context.getBean(DelayQueueEndpoint.class).topic("orders", null, null, null).scheduled())
					.isEqualTo(1);
				assertThat(context.getBean(DelayQueueEndpoint.class).overview().getStatus()).isEqualTo(200);
				assertThat(context.getBean(DelayQueueEndpoint.class).readTopic("orders", null, null, null).getBody())
					.isInstanceOf(DelayQueueEndpoint.TopicDescriptor.class);
			});
	}

	@Test
	void theLineCheckRunsWithEveryApplication() {
		assertThat(new SpringApplication(Object.class).getListeners())
			.hasAtLeastOneElementOfType(SpringBoot3LineCheck.class);
	}

	@Test
	void failsStartupNamingTheRightStarterOnTheWrongLine() {
		SpringBootLineCheck check = new SpringBoot3LineCheck();
		assertThatNoException().isThrownBy(() -> check.check("3.5.7"));
		assertThatIllegalStateException().isThrownBy(() -> check.check("3.4.2"))
			.withMessageContaining("needs Spring Boot 3.5 or later");
		assertThatExceptionOfType(WrongSpringBootLineException.class).isThrownBy(() -> check.check("4.1.2"))
			.satisfies((wrong) -> {
				FailureAnalysis analysis = new WrongSpringBootLineFailureAnalyzer().analyze(wrong);
				assertThat(analysis.getDescription()).contains("Spring Boot 4.1.2")
					.contains("delay-queue-spring-boot-3-starter");
				assertThat(analysis.getAction()).contains("io.github.delayqueue:delay-queue-spring-boot-starter")
					.contains("io.github.delayqueue:delay-queue-test");
			});
	}

	record Order(String id, int items) {
	}

	record Pending(String orderId) {
	}

}

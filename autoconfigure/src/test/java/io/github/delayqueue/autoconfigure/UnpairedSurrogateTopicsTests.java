package io.github.delayqueue.autoconfigure;

import java.lang.reflect.Method;
import java.time.Duration;

import io.github.delayqueue.actuate.DelayQueueEndpoint;
import io.github.delayqueue.producer.DelayMessage;
import io.github.delayqueue.producer.DelayQueueTemplate;
import io.github.delayqueue.producer.InvalidMessageException;
import io.github.delayqueue.producer.Topics;
import io.github.delayqueue.listener.DelayListener;
import io.github.delayqueue.listener.DelayListenerEndpoint;
import io.github.delayqueue.listener.LatePolicy;
import io.github.delayqueue.listener.ListenerSettings;
import io.github.delayqueue.time.RetryBackoff;
import io.github.delayqueue.schedule.Schedule;
import io.github.delayqueue.testsupport.QueueContexts;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Topic names with an unpaired surrogate: all of them encode to the same UTF-8 bytes as
 * {@code ?}, so {@code q\uD800}, {@code q\uDFFF} and {@code q?} would share keys. They
 * are refused wherever a topic name enters, naming the problem; a paired surrogate (an
 * emoji) is a letter like any other.
 */
class UnpairedSurrogateTopicsTests {

	private static final String PROBLEM = "must not contain an unpaired surrogate";

	private final ApplicationContextRunner runner = QueueContexts.runner(QueueContexts.uniquePrefix())
		.withConfiguration(AutoConfigurations.of(DelayQueueActuatorAutoConfiguration.class))
		.withPropertyValues("management.endpoints.web.exposure.include=delayqueue");

	@ParameterizedTest
	@ValueSource(strings = { "q\uD800", "q\uDFFF", "\uDC00q", "q\uD800\uD800", "q\uDFFF\uD800" })
	void topicsWithAnUnpairedSurrogateAreRefusedNamingItsCodeAndIndex(String topic) {
		assertThatExceptionOfType(InvalidMessageException.class).isThrownBy(() -> Topics.requireValid(topic))
			.withMessageContaining(PROBLEM)
			.withMessageMatching("(?s).*U\\+D[89A-F][0-9A-F]{2} at index \\d.*");
	}

	@Test
	void aTopicWithAPairedSurrogateIsAccepted() {
		assertThat(Topics.requireValid("orders-\uD83D\uDE00")).isEqualTo("orders-\uD83D\uDE00");
	}

	@Test
	void theTemplateRefusesToSendCancelOrRescheduleOnSuchATopic() {
		this.runner.run((context) -> {
			DelayQueueTemplate template = context.getBean(DelayQueueTemplate.class);
			assertThatExceptionOfType(InvalidMessageException.class)
				.isThrownBy(() -> template.send("q\uD800", "x", Duration.ofHours(1)))
				.withMessageContaining(PROBLEM);
			assertThatExceptionOfType(InvalidMessageException.class)
				.isThrownBy(() -> template.send(DelayMessage.builder("q\uDFFF", "x").build()))
				.withMessageContaining(PROBLEM);
			assertThatExceptionOfType(InvalidMessageException.class).isThrownBy(() -> template.cancel("q\uD800", "id"))
				.withMessageContaining(PROBLEM);
			assertThatExceptionOfType(InvalidMessageException.class)
				.isThrownBy(() -> template.reschedule("q\uD800#dead", "id", Duration.ZERO))
				.withMessageContaining(PROBLEM);
		});
	}

	@Test
	void aScheduleOnSuchATopicIsRefused() {
		assertThatExceptionOfType(InvalidMessageException.class)
			.isThrownBy(() -> Schedule.fixedRate("tick", "q\uD800", Duration.ofSeconds(1)))
			.withMessageContaining(PROBLEM);
	}

	@Test
	void aListenerRegisteredInCodeOnSuchATopicIsRefused() throws NoSuchMethodException {
		Method on = Listener.class.getDeclaredMethod("on", String.class);
		ListenerSettings settings = new ListenerSettings(1, 0, 3, Duration.ofSeconds(30),
				new RetryBackoff(Duration.ofSeconds(1), 2.0, Duration.ofMinutes(1)), Duration.ofSeconds(1),
				Duration.ofSeconds(1), Duration.ofMinutes(5), LatePolicy.DELIVER, Duration.ofMinutes(1));
		assertThatExceptionOfType(InvalidMessageException.class)
			.isThrownBy(() -> new DelayListenerEndpoint("q\uDFFF", new Listener(), on, settings))
			.withMessageContaining(PROBLEM);
	}

	@Test
	void aListenerAnnotatedWithSuchATopicFailsStartupNamingTheProblem() {
		this.runner.withPropertyValues("surrogate.topic=q\uD800")
			.withUserConfiguration(AnnotatedListenerConfiguration.class)
			.run((context) -> {
				assertThat(context).hasFailed();
				assertThat(context).getFailure().rootCause().hasMessageContaining(PROBLEM);
			});
	}

	@Test
	void topicSettingsInPropertiesForSuchATopicFailStartupNamingTheProblem() {
		this.runner.withPropertyValues("delay-queue.topics[q\uD800].partitions=2").run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context).getFailure()
				.rootCause()
				.hasMessageContaining("delay-queue.topics")
				.hasMessageContaining(PROBLEM);
		});
	}

	@Test
	void aScheduleInPropertiesOnSuchATopicFailsStartupNamingTheProblem() {
		this.runner
			.withPropertyValues("delay-queue.schedules.tick.topic=q\uDFFF", "delay-queue.schedules.tick.fixed-rate=1s")
			.run((context) -> {
				assertThat(context).hasFailed();
				assertThat(context).getFailure().rootCause().hasMessageContaining(PROBLEM);
			});
	}

	@Test
	void theEndpointRefusesSuchATopicAsABadRequest() {
		this.runner.run((context) -> {
			DelayQueueEndpoint endpoint = context.getBean(DelayQueueEndpoint.class);
			assertThatExceptionOfType(InvalidEndpointRequestException.class)
				.isThrownBy(() -> endpoint.topic("q\uD800", null, null, null))
				.withMessageContaining(PROBLEM);
			assertThatExceptionOfType(InvalidEndpointRequestException.class)
				.isThrownBy(() -> endpoint.message("q\uDFFF", "id"))
				.withMessageContaining(PROBLEM);
		});
	}

	static class Listener {

		void on(String payload) {
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class AnnotatedListenerConfiguration {

		@Bean
		AnnotatedListener annotatedListener() {
			return new AnnotatedListener();
		}

	}

	static class AnnotatedListener {

		@DelayListener(topic = "${surrogate.topic}")
		void on(String payload) {
		}

	}

}

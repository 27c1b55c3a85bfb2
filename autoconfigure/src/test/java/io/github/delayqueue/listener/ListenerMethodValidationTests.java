package io.github.delayqueue.listener;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import io.github.delayqueue.core.DelayQueueTemplate;
import io.github.delayqueue.testsupport.QueueContexts;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.NestedExceptionUtils;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * {@link DelayListener} methods that cannot work fail startup with the method's name; placeholders
 * and per-topic settings are applied.
 */
class ListenerMethodValidationTests {

	private final ApplicationContextRunner runner = QueueContexts.runner(QueueContexts.uniquePrefix());

	@Test
	void listenerWithoutParameterFailsStartupNamingTheMethod() {
		this.runner.withBean(NoParameter.class).run((context) -> assertThat(mostSpecificFailure(context))
			.hasMessageContaining(NoParameter.class.getName() + ".on")
			.hasMessageContaining("exactly one parameter"));
	}

	@Test
	void listenerWithTwoParametersFailsStartupNamingTheMethod() {
		this.runner.withBean(TwoParameters.class).run((context) -> assertThat(mostSpecificFailure(context))
			.hasMessageContaining(TwoParameters.class.getName() + ".on")
			.hasMessageContaining("takes 2"));
	}

	@Test
	void listenerWithAnInvalidTopicFailsStartupNamingTheMethod() {
		this.runner.withBean(BadTopic.class).run((context) -> assertThat(mostSpecificFailure(context))
			.hasMessageContaining(BadTopic.class.getName() + ".on")
			.hasMessageContaining("must not contain '{' or '}'"));
	}

	@Test
	void listenerWithAConcurrencyThatIsNotANumberFailsStartupNamingTheMethod() {
		this.runner.withBean(BadConcurrency.class).run((context) -> assertThat(mostSpecificFailure(context))
			.hasMessageContaining(BadConcurrency.class.getName() + ".on")
			.hasMessageContaining("concurrency"));
	}

	@Test
	void twoListenersForOneTopicFailStartupNamingBoth() {
		this.runner.withBean(NoteListener.class).withBean(SecondNoteListener.class).run((context) -> assertThat(mostSpecificFailure(context))
			.hasMessageContaining(NoteListener.class.getName() + ".on")
			.hasMessageContaining(SecondNoteListener.class.getName() + ".on"));
	}

	@Test
	void topicAndConcurrencyPlaceholdersAreResolvedAndAnnotationValuesWinOverProperties() {
		this.runner.withUserConfiguration(PlaceholderConfig.class)
			.withPropertyValues("app.topic=notes", "app.concurrency=3", "delay-queue.topics.notes.concurrency=8",
					"delay-queue.topics.notes.max-attempts=9")
			.run((context) -> {
				DelayListenerEndpoint endpoint = context.getBean(DelayListenerEndpointRegistry.class)
					.getEndpoints()
					.get("notes");
				assertThat(endpoint.settings().concurrency()).isEqualTo(3);
				assertThat(endpoint.settings().maxAttempts()).isEqualTo(2);
				PlaceholderListener listener = context.getBean(PlaceholderListener.class);
				context.getBean(DelayQueueTemplate.class).send("notes", "hi", Duration.ZERO);
				await().atMost(Duration.ofSeconds(10)).until(() -> listener.received.contains("hi"));
			});
	}

	@Test
	void stringAndByteArrayPayloadsArriveAsSent() {
		this.runner.withBean(NoteListener.class).withBean(BytesListener.class).run((context) -> {
			DelayQueueTemplate template = context.getBean(DelayQueueTemplate.class);
			template.send("notes", "plain text, not JSON", Duration.ZERO);
			template.send("bytes", new byte[] { 0, -1, 42 }, Duration.ZERO);
			await().atMost(Duration.ofSeconds(10)).until(() -> context.getBean(NoteListener.class).received.size() == 1
					&& context.getBean(BytesListener.class).received.size() == 1);
			assertThat(context.getBean(NoteListener.class).received).containsExactly("plain text, not JSON");
			assertThat(context.getBean(BytesListener.class).received.get(0)).containsExactly(0, -1, 42);
		});
	}

	private static Throwable mostSpecificFailure(AssertableApplicationContext context) {
		assertThat(context).hasFailed();
		return NestedExceptionUtils.getMostSpecificCause(context.getStartupFailure());
	}

	static class NoParameter {

		@DelayListener(topic = "notes")
		void on() {
		}

	}

	static class TwoParameters {

		@DelayListener(topic = "notes")
		void on(String a, String b) {
		}

	}

	static class BadTopic {

		@DelayListener(topic = "no{braces}")
		void on(String payload) {
		}

	}

	static class BadConcurrency {

		@DelayListener(topic = "notes", concurrency = "many")
		void on(String payload) {
		}

	}

	static class NoteListener {

		final List<String> received = new CopyOnWriteArrayList<>();

		@DelayListener(topic = "notes")
		void on(String payload) {
			this.received.add(payload);
		}

	}

	static class SecondNoteListener {

		@DelayListener(topic = "notes")
		void on(String payload) {
		}

	}

	static class BytesListener {

		final List<byte[]> received = new CopyOnWriteArrayList<>();

		@DelayListener(topic = "bytes")
		void on(byte[] payload) {
			this.received.add(payload);
		}

	}

	static class PlaceholderListener {

		final List<String> received = new CopyOnWriteArrayList<>();

		@DelayListener(topic = "${app.topic}", concurrency = "${app.concurrency}", maxAttempts = 2)
		void on(String payload) {
			this.received.add(payload);
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class PlaceholderConfig {

		@Bean
		PlaceholderListener placeholderListener() {
			return new PlaceholderListener();
		}

	}

}

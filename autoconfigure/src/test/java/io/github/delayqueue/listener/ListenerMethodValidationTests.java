package io.github.delayqueue.listener;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;

import com.fasterxml.jackson.annotation.JsonSubTypes;
import com.fasterxml.jackson.annotation.JsonTypeInfo;
import io.github.delayqueue.producer.DelayQueueTemplate;
import io.github.delayqueue.testsupport.QueueContexts;
import io.github.delayqueue.autoconfigure.InvalidDelayListenerFailureAnalyzer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.NestedExceptionUtils;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * {@link DelayListener} methods that cannot work fail startup with the method's name;
 * placeholders and per-topic settings are applied.
 */
class ListenerMethodValidationTests {

	private final ApplicationContextRunner runner = QueueContexts.runner(QueueContexts.uniquePrefix());

	@Test
	void listenerWithoutParameterFailsStartupNamingTheMethod() {
		this.runner.withBean(NoParameter.class)
			.run((context) -> assertThat(mostSpecificFailure(context))
				.hasMessageContaining(NoParameter.class.getName() + ".on")
				.hasMessageContaining("exactly one parameter"));
	}

	@Test
	void listenerWithTwoParametersFailsStartupNamingTheMethod() {
		this.runner.withBean(TwoParameters.class)
			.run((context) -> assertThat(mostSpecificFailure(context))
				.hasMessageContaining(TwoParameters.class.getName() + ".on")
				.hasMessageContaining("takes 2"));
	}

	@Test
	void listenerWithAnInvalidTopicFailsStartupNamingTheMethod() {
		this.runner.withBean(BadTopic.class)
			.run((context) -> assertThat(mostSpecificFailure(context))
				.hasMessageContaining(BadTopic.class.getName() + ".on")
				.hasMessageContaining("must not contain '{' or '}'"));
	}

	@Test
	void listenerWithAConcurrencyThatIsNotANumberFailsStartupNamingTheMethod() {
		this.runner.withBean(BadConcurrency.class)
			.run((context) -> assertThat(mostSpecificFailure(context))
				.hasMessageContaining(BadConcurrency.class.getName() + ".on")
				.hasMessageContaining("concurrency"));
	}

	@Test
	void twoListenersForOneTopicFailStartupNamingBoth() {
		this.runner.withBean(NoteListener.class)
			.withBean(SecondNoteListener.class)
			.run((context) -> assertThat(mostSpecificFailure(context))
				.hasMessageContaining(NoteListener.class.getName() + ".on")
				.hasMessageContaining(SecondNoteListener.class.getName() + ".on"));
	}

	@Test
	void aListenerDeclaredWronglyIsExplainedByAFailureAnalysisNamingTheMethodAndTheProblem() {
		this.runner.withBean(BadConcurrency.class).run((context) -> {
			FailureAnalysis analysis = new InvalidDelayListenerFailureAnalyzer().analyze(context.getStartupFailure());
			assertThat(analysis).isNotNull();
			assertThat(analysis.getDescription()).contains(BadConcurrency.class.getName() + ".on")
				.contains("concurrency must be a whole number of at least 1, but was 'many'");
			assertThat(analysis.getAction()).contains("Correct the @DelayListener annotation");
		});
		this.runner.withBean(NoteListener.class).withBean(SecondNoteListener.class).run((context) -> {
			FailureAnalysis analysis = new InvalidDelayListenerFailureAnalyzer().analyze(context.getStartupFailure());
			assertThat(analysis).isNotNull();
			assertThat(analysis.getDescription()).contains("has two @DelayListener methods");
		});
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
	void aGroupConcurrencyPlaceholderIsResolvedAndWinsOverTheTopicsProperty() {
		this.runner.withBean(GroupConcurrencyPlaceholderListener.class)
			.withPropertyValues("app.group-concurrency=3", "delay-queue.topics.shops.group-concurrency=8")
			.run((context) -> assertThat(settings(context, "shops").groupConcurrency()).isEqualTo(3));
	}

	@Test
	void aGroupConcurrencyOfTheAnnotationWinsOverThePropertyAndAListenerWithoutOneHasThePropertysOrNoLimit() {
		this.runner.withBean(GroupConcurrencyListener.class)
			.withBean(NoteListener.class)
			.withBean(BytesListener.class)
			.withPropertyValues("delay-queue.topics.tenants.group-concurrency=8",
					"delay-queue.topics.notes.group-concurrency=5")
			.run((context) -> {
				assertThat(settings(context, "tenants").groupConcurrency()).isEqualTo(1);
				assertThat(settings(context, "notes").groupConcurrency()).isEqualTo(5);
				assertThat(settings(context, "bytes").groupConcurrency()).isZero();
			});
	}

	@ParameterizedTest
	@ValueSource(strings = { "0", "-1", "1001", "many", "2.5" })
	void aGroupConcurrencyThatIsNotAWholeNumberFromOneToAThousandFailsStartupNamingTheTopicAndTheValue(
			String groupConcurrency) {
		this.runner.withBean(GroupConcurrencyPlaceholderListener.class)
			.withPropertyValues("app.group-concurrency=" + groupConcurrency)
			.run((context) -> {
				assertThat(mostSpecificFailure(context)).isInstanceOf(InvalidDelayListenerException.class)
					.hasMessageContainingAll(GroupConcurrencyPlaceholderListener.class.getName() + ".on",
							"(topic 'shops') groupConcurrency must be a whole number between 1 and 1000",
							"but was '" + groupConcurrency + "'");
				FailureAnalysis analysis = new InvalidDelayListenerFailureAnalyzer()
					.analyze(context.getStartupFailure());
				assertThat(analysis).isNotNull();
				assertThat(analysis.getAction()).contains("groupConcurrency whole numbers");
			});
	}

	@Test
	void aGroupOrderOfTheAnnotationInAnyCaseWinsOverTheTopicsProperty() {
		this.runner.withBean(GroupOrderListener.class)
			.withBean(NoteListener.class)
			.withPropertyValues("app.group-order=Strict", "delay-queue.topics.orders.group-order=relaxed",
					"delay-queue.topics.notes.group-order=strict")
			.run((context) -> {
				assertThat(settings(context, "orders").strictGroupOrder()).isTrue();
				assertThat(settings(context, "notes").strictGroupOrder()).isTrue();
			});
	}

	@Test
	void aGroupOrderThatIsNeitherStrictNorRelaxedFailsStartupNamingTheTopicAndTheValue() {
		this.runner.withBean(GroupOrderListener.class).withPropertyValues("app.group-order=sorted").run((context) -> {
			assertThat(mostSpecificFailure(context)).isInstanceOf(InvalidDelayListenerException.class)
				.hasMessageContainingAll(GroupOrderListener.class.getName() + ".on",
						"(topic 'orders') groupOrder must be 'strict' or 'relaxed'", "but was 'sorted'");
		});
	}

	@Test
	void stringAndByteArrayPayloadsArriveAsSent() {
		this.runner.withBean(NoteListener.class).withBean(BytesListener.class).run((context) -> {
			DelayQueueTemplate template = context.getBean(DelayQueueTemplate.class);
			template.send("notes", "plain text, not JSON", Duration.ZERO);
			template.send("bytes", new byte[] { 0, -1, 42 }, Duration.ZERO);
			await().atMost(Duration.ofSeconds(10))
				.until(() -> context.getBean(NoteListener.class).received.size() == 1
						&& context.getBean(BytesListener.class).received.size() == 1);
			assertThat(context.getBean(NoteListener.class).received).containsExactly("plain text, not JSON");
			assertThat(context.getBean(BytesListener.class).received.get(0)).containsExactly(0, -1, 42);
		});
	}

	@Test
	void listenerOfATypeWithoutCreatorFailsStartupNamingTheBeanTheMethodAndTheType() {
		this.runner.withBean("noCreatorListener", NoCreatorListener.class).run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure()).hasMessageContainingAll("'noCreatorListener'",
					NoCreatorListener.class.getName() + ".on", NoCreator.class.getName(), "no default constructor",
					"@JsonCreator");
		});
	}

	@Test
	void listenerOfAnInterfaceWithoutTypeInformationFailsStartupNamingTheMethodAndTheType() {
		this.runner.withBean(ShapeListener.class).run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure()).hasMessageContainingAll(ShapeListener.class.getName() + ".on",
					Shape.class.getName(), "abstract", "@JsonTypeInfo");
		});
	}

	@Test
	void listenerOfAListOfATypeWithoutCreatorFailsStartup() {
		this.runner.withBean(NoCreatorListListener.class).run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure())
				.hasMessageContainingAll(NoCreatorListListener.class.getName() + ".on", NoCreator.class.getName());
		});
	}

	@Test
	void listenersOfTypesJacksonCanCreateStart() {
		this.runner.withBean(NoteListener.class)
			.withBean(BytesListener.class)
			.withBean(ReadableTypesListener.class)
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(context.getBean(DelayListenerEndpointRegistry.class).getEndpoints()).hasSize(12);
			});
	}

	@Test
	void listenerOfARawListOrAListOfWildcardsFailsStartupNamingTheMethod() {
		this.runner.withBean(UntypedBatchListener.class).run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure())
				.hasMessageContainingAll(UntypedBatchListener.class.getName() + ".on", "must name its element type");
		});
		this.runner.withBean(WildcardBatchListener.class).run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure())
				.hasMessageContainingAll(WildcardBatchListener.class.getName() + ".on", "must name its element type");
		});
	}

	@Test
	void aListParameterMakesABatchListenerAndAListPayloadArrivesInADelivery() {
		this.runner.withBean(ReadableTypesListener.class).run((context) -> {
			Map<String, DelayListenerEndpoint> endpoints = context.getBean(DelayListenerEndpointRegistry.class)
				.getEndpoints();
			assertThat(endpoints.get("order-batch").isBatch()).isTrue();
			assertThat(endpoints.get("order-list").isBatch()).isFalse();
			assertThat(endpoints.get("order").isBatch()).isFalse();
		});
	}

	@Test
	void aListOfRecordsArrivesAsSent() {
		this.runner.withBean(ReadableTypesListener.class).run((context) -> {
			context.getBean(DelayQueueTemplate.class)
				.send("order-list", List.of(new Order("a", 1), new Order("b", 2)), Duration.ZERO);
			await().atMost(Duration.ofSeconds(10))
				.untilAsserted(() -> assertThat(context.getBean(ReadableTypesListener.class).orders)
					.containsExactly(new Order("a", 1), new Order("b", 2)));
		});
	}

	private static ListenerSettings settings(AssertableApplicationContext context, String topic) {
		assertThat(context).hasNotFailed();
		return context.getBean(DelayListenerEndpointRegistry.class).getEndpoints().get(topic).settings();
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

	static class GroupOrderListener {

		@DelayListener(topic = "orders", groupOrder = "${app.group-order}")
		void on(String payload) {
		}

	}

	static class GroupConcurrencyPlaceholderListener {

		@DelayListener(topic = "shops", groupConcurrency = "${app.group-concurrency}")
		void on(String payload) {
		}

	}

	static class GroupConcurrencyListener {

		@DelayListener(topic = "tenants", groupConcurrency = "1")
		void on(String payload) {
		}

	}

	static final class NoCreator {

		private final String name;

		private NoCreator(String name, int unused) {
			this.name = name;
		}

		@Override
		public String toString() {
			return this.name;
		}

	}

	static class NoCreatorListener {

		@DelayListener(topic = "no-creator")
		void on(NoCreator payload) {
		}

	}

	static class NoCreatorListListener {

		@DelayListener(topic = "no-creator-list")
		void on(Delivery<List<NoCreator>> delivery) {
		}

	}

	static class UntypedBatchListener {

		@DelayListener(topic = "untyped-batch")
		void on(@SuppressWarnings("rawtypes") List batch) {
		}

	}

	static class WildcardBatchListener {

		@DelayListener(topic = "wildcard-batch")
		void on(List<?> batch) {
		}

	}

	interface Shape {

	}

	static class ShapeListener {

		@DelayListener(topic = "shapes")
		void on(Shape payload) {
		}

	}

	record Order(String id, int quantity) {
	}

	static class Pojo {

		private String name = "";

		public String getName() {
			return this.name;
		}

		public void setName(String name) {
			this.name = name;
		}

	}

	@JsonTypeInfo(use = JsonTypeInfo.Id.NAME)
	@JsonSubTypes(@JsonSubTypes.Type(value = Circle.class, name = "circle"))
	interface TypedShape {

	}

	record Circle(double radius) implements TypedShape {
	}

	static class ReadableTypesListener {

		final List<Order> orders = new CopyOnWriteArrayList<>();

		@DelayListener(topic = "order")
		void onOrder(Order payload) {
		}

		@DelayListener(topic = "pojo")
		void onPojo(Pojo payload) {
		}

		@DelayListener(topic = "delivery-of-order")
		void onDeliveryOfOrder(Delivery<Order> delivery) {
		}

		@DelayListener(topic = "raw-delivery")
		void onRawDelivery(@SuppressWarnings("rawtypes") Delivery delivery) {
		}

		@DelayListener(topic = "order-list")
		void onOrders(Delivery<List<Order>> delivery) {
			this.orders.addAll(delivery.payload());
		}

		@DelayListener(topic = "order-batch")
		void onOrderBatch(List<Delivery<Order>> batch) {
		}

		@DelayListener(topic = "order-map")
		void onOrderMap(Map<String, Optional<Order>> payload) {
		}

		@DelayListener(topic = "typed-shape")
		void onTypedShape(TypedShape payload) {
		}

		@DelayListener(topic = "any")
		void onAny(Object payload) {
		}

		@DelayListener(topic = "integer")
		void onInteger(Integer payload) {
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

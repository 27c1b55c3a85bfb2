package io.github.delayqueue.runtime.consumer;

import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;

import io.github.delayqueue.convert.JsonPayloadConverter;
import io.github.delayqueue.listener.DelayListenerEndpoint;
import io.github.delayqueue.listener.DelayListenerErrorHandler;
import io.github.delayqueue.listener.Delivery;
import io.github.delayqueue.listener.FailureAction;
import io.github.delayqueue.listener.LatePolicy;
import io.github.delayqueue.listener.ListenerFailure;
import io.github.delayqueue.listener.ListenerSettings;
import io.github.delayqueue.time.RetryBackoff;
import io.github.delayqueue.listener.SlowDownException;
import io.github.delayqueue.metrics.DelayQueueMetrics;
import io.github.delayqueue.store.ClaimResult;
import io.github.delayqueue.store.ClaimedMessage;
import io.github.delayqueue.store.LeaseExpiryResult;
import io.github.delayqueue.store.MessageFormat;
import io.github.delayqueue.store.PromoteResult;
import io.github.delayqueue.store.RateLimit;
import io.github.delayqueue.store.TopicStore;
import io.github.delayqueue.store.WriteGate;
import io.micrometer.observation.ObservationRegistry;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.util.ReflectionUtils;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.tuple;
import static org.awaitility.Awaitility.await;

/**
 * The consumer's rules for one delivery, against an in-memory fake of the topic store:
 * what is acknowledged, retried after which backoff and with which error, or
 * dead-lettered and why (exceptions not retried, an error handler's decisions), and what
 * a handler that finishes after its lease ended may no longer do. The scripts behind each
 * call have their own tests on real Redis.
 */
class DeliveryPoliciesTests {

	private static final RetryBackoff BACKOFF = new RetryBackoff(Duration.ofSeconds(1), 2.0, Duration.ofMinutes(1));

	private final RecordingTopicStore store = new RecordingTopicStore();

	private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();

	private final Orders orders = new Orders();

	private final List<Duration> pauses = new CopyOnWriteArrayList<>();

	@AfterEach
	void stopScheduler() {
		this.scheduler.shutdownNow();
	}

	@Test
	void aHandlerThatReturnsHasItsMessageAcknowledged() {
		handler(LatePolicy.DELIVER).handle(message("o-1", 0, "{\"id\":\"o-1\"}"));
		assertThat(this.orders.received).containsExactly(new Order("o-1"));
		await().atMost(Duration.ofSeconds(5)).until(() -> this.store.calls.contains("ack o-1 token"));
	}

	@Test
	void aHandlerThatThrowsBeforeItsLastAttemptHasItsMessageRetriedAfterTheBackoffOfThatAttempt() {
		this.orders.failing = true;
		handler(LatePolicy.DELIVER).handle(message("o-1", 1, "{\"id\":\"o-1\"}"));
		assertThat(this.store.calls).containsExactly("retry o-1 token " + BACKOFF.after(2));
	}

	@Test
	void aHandlerThatAsksToSlowDownOnItsLastAttemptHasItsMessagePostponedAndTheTopicPaused() {
		this.orders.onCall = () -> {
			throw new SlowDownException(Duration.ofMillis(1500));
		};
		handler(LatePolicy.DELIVER).handle(message("o-1", 2, "{\"id\":\"o-1\"}"));
		assertThat(this.store.calls).containsExactly("postpone o-1 token PT1.5S");
		assertThat(this.pauses).containsExactly(Duration.ofMillis(1500));
	}

	@Test
	void aSlowDownWrappedInAnotherExceptionPostponesItsMessageAsTheCauseChainIsSearched() {
		// As CompletableFuture.join() wraps what an asynchronous call threw.
		this.orders.onCall = () -> {
			throw new CompletionException(new SlowDownException(Duration.ofMillis(1500)));
		};
		handler(LatePolicy.DELIVER).handle(message("o-1", 2, "{\"id\":\"o-1\"}"));
		assertThat(this.store.calls).containsExactly("postpone o-1 token PT1.5S");
		assertThat(this.pauses).containsExactly(Duration.ofMillis(1500));
	}

	@Test
	void aSlowDownPauseMustBePositiveAndAtMostAnHour() {
		assertThatIllegalArgumentException().isThrownBy(() -> new SlowDownException(Duration.ZERO))
			.withMessageContaining("must be positive and at most 1h");
		assertThatIllegalArgumentException().isThrownBy(() -> new SlowDownException(Duration.ofHours(2)))
			.withMessageContaining("but is 2h");
	}

	@Test
	void aHandlerThatThrowsOnItsLastAttemptHasItsMessageDeadLetteredWithTheError() {
		this.orders.failing = true;
		handler(LatePolicy.DELIVER).handle(message("o-1", 2, "{\"id\":\"o-1\"}"));
		assertThat(this.store.calls).singleElement()
			.asString()
			.startsWith("deadLetter o-1 token java.lang.IllegalStateException: payment service down");
	}

	@Test
	void aRetryKeepsTheErrorOfTheFailedAttemptForTheNextDelivery() {
		this.orders.failing = true;
		handler(LatePolicy.DELIVER).handle(message("o-1", 0, "{\"id\":\"o-1\"}"));
		assertThat(this.store.errors).containsExactly("java.lang.IllegalStateException: payment service down");
	}

	@Test
	void anExceptionNotRetriedIsDeadLetteredOnItsFirstAttemptEvenAsTheCauseOfAnother() {
		this.orders.onCall = () -> {
			throw new IllegalStateException("wrapped", new IllegalArgumentException("bad order"));
		};
		handler(List.of(IllegalArgumentException.class), DelayListenerErrorHandler.DEFAULT)
			.handle(message("o-1", 0, "{\"id\":\"o-1\"}"));
		assertThat(this.store.calls).singleElement()
			.asString()
			.startsWith("deadLetter o-1 token java.lang.IllegalStateException: wrapped");
	}

	@Test
	void anExceptionOfAnotherTypeIsStillRetried() {
		this.orders.failing = true;
		handler(List.of(IllegalArgumentException.class), DelayListenerErrorHandler.DEFAULT)
			.handle(message("o-1", 0, "{\"id\":\"o-1\"}"));
		assertThat(this.store.calls).containsExactly("retry o-1 token " + BACKOFF.after(1));
	}

	@Test
	void theErrorHandlerSeesTheFailureWithTheBuiltInDecisionAndMayRetryAfterItsOwnPause() {
		this.orders.failing = true;
		List<ListenerFailure> seen = new CopyOnWriteArrayList<>();
		handler(List.of(), (failure) -> {
			seen.add(failure);
			return FailureAction.retryAfter(Duration.ofSeconds(42));
		}).handle(message("o-1", 2, "{\"id\":\"o-1\"}", Map.of("tenant", "acme", MessageFormat.PRIORITY_HEADER, "7")));
		assertThat(this.store.calls).containsExactly("retry o-1 token PT42S");
		assertThat(seen).singleElement().satisfies((failure) -> {
			assertThat(failure.topic()).isEqualTo("orders");
			assertThat(failure.id()).isEqualTo("o-1");
			assertThat(failure.attempt()).isEqualTo(3);
			assertThat(failure.maxAttempts()).isEqualTo(3);
			assertThat(failure.priority()).isEqualTo(7);
			assertThat(failure.headers()).containsExactly(Map.entry("tenant", "acme"));
			assertThat(failure.defaultAction()).isEqualTo(FailureAction.deadLetter());
			assertThat(failure.causedBy(IllegalStateException.class)).isTrue();
		});
	}

	@Test
	void theErrorHandlerMayDeadLetterAtOnce() {
		this.orders.failing = true;
		handler(List.of(), (failure) -> FailureAction.deadLetter()).handle(message("o-1", 0, "{\"id\":\"o-1\"}"));
		assertThat(this.store.calls).singleElement().asString().startsWith("deadLetter o-1 token");
	}

	@Test
	void theErrorHandlerMaySlowDownWhichPostponesWithoutCountingAndPausesTheTopic() {
		this.orders.failing = true;
		handler(List.of(), (failure) -> FailureAction.slowDown(Duration.ofSeconds(3)))
			.handle(message("o-1", 0, "{\"id\":\"o-1\"}"));
		assertThat(this.store.calls).containsExactly("postpone o-1 token PT3S");
		assertThat(this.pauses).containsExactly(Duration.ofSeconds(3));
	}

	@Test
	void anErrorHandlerThatFailsOrDecidesNothingLeavesTheBuiltInPolicyToDecide() {
		this.orders.failing = true;
		handler(List.of(), (failure) -> {
			throw new IllegalStateException("handler bug");
		}).handle(message("o-1", 0, "{\"id\":\"o-1\"}"));
		handler(List.of(), (failure) -> null).handle(message("o-2", 0, "{\"id\":\"o-2\"}"));
		assertThat(this.store.calls).containsExactly("retry o-1 token " + BACKOFF.after(1),
				"retry o-2 token " + BACKOFF.after(1));
	}

	@Test
	void actionsRefuseBadPausesNamingThem() {
		assertThatIllegalArgumentException().isThrownBy(() -> FailureAction.retryAfter(Duration.ofSeconds(-1)))
			.withMessage("A retry pause must be from 0 to 365d, but was -1s");
		assertThatIllegalArgumentException().isThrownBy(() -> FailureAction.slowDown(Duration.ZERO))
			.withMessage("A slow-down pause must be positive and at most 1h, but was 0s");
	}

	@Test
	void aCorruptMessageIsDeadLetteredWithoutCallingTheHandler() {
		ClaimedMessage corrupt = new ClaimedMessage("o-1", "token", 0, now(),
				"garbage".getBytes(StandardCharsets.UTF_8));
		handler(LatePolicy.DELIVER).handle(new InFlightMessage(corrupt));
		assertThat(this.orders.received).isEmpty();
		assertThat(this.store.calls).singleElement()
			.asString()
			.startsWith("deadLetter o-1 token Stored message is corrupt");
	}

	@Test
	void aPayloadThatCannotBeReadAsTheListenersTypeIsDeadLetteredWithoutCallingTheHandler() {
		handler(LatePolicy.DELIVER).handle(message("o-1", 0, "not json"));
		assertThat(this.orders.received).isEmpty();
		assertThat(this.store.calls).singleElement().asString().startsWith("deadLetter o-1 token");
	}

	@Test
	void aMessageLaterThanTheThresholdIsDeadLetteredUnderTheDeadLetterLatePolicy() {
		InFlightMessage late = message("o-1", 0, "{\"id\":\"o-1\"}", now().minus(Duration.ofHours(2)).toEpochMilli());
		handler(LatePolicy.DEAD_LETTER).handle(late);
		assertThat(this.orders.received).isEmpty();
		assertThat(this.store.calls).singleElement().asString().contains("later than the late threshold");
	}

	@Test
	void aMessageHandedBackBeforeItsHandlerRanIsNotDelivered() {
		InFlightMessage message = message("o-1", 0, "{\"id\":\"o-1\"}");
		settlement().handBack(List.of(message), Settlement.HandBack.NOT_STARTED).join();
		handler(LatePolicy.DELIVER).handle(message);
		assertThat(this.orders.received).isEmpty();
		assertThat(this.store.calls).containsExactly("release o-1 token");
	}

	@Test
	void aHandlerThatFinishesAfterItsLeaseWasLostNeitherAcknowledgesNorRetries() {
		InFlightMessage message = message("o-1", 0, "{\"id\":\"o-1\"}");
		this.orders.onCall = () -> settlement().leaseLost(message);
		handler(LatePolicy.DELIVER).handle(message);
		assertThat(this.orders.received).hasSize(1);
		assertThat(this.store.calls).isEmpty();
	}

	@Test
	void aDeliveryCarriesTheGroupItsMessageWasSentIn() {
		handler("onDelivery", Delivery.class).handle(message("o-1", 0, "{\"id\":\"o-1\"}", "shop-17"));
		handler("onDelivery", Delivery.class).handle(message("o-2", 0, "{\"id\":\"o-2\"}"));
		assertThat(this.orders.deliveries).extracting(Delivery::id, Delivery::group)
			.containsExactly(tuple("o-1", "shop-17"), tuple("o-2", null));
	}

	@Test
	void theGroupOfADeliveryIsNotAmongItsHeaders() {
		handler("onDelivery", Delivery.class).handle(message("o-1", 0, "{\"id\":\"o-1\"}", "shop-17"));
		assertThat(this.orders.deliveries).singleElement().satisfies((delivery) -> {
			assertThat(delivery.group()).isEqualTo("shop-17");
			assertThat(delivery.headers()).isEmpty();
		});
	}

	@Test
	void theDeliveriesOfABatchCarryTheGroupsTheirMessagesWereSentIn() {
		DeliveryHandler deliveries = handler("onBatch", List.class);
		new BatchDeliveryHandler(endpoint("onBatch", List.class), deliveries)
			.handle(List.of(message("o-1", 0, "{\"id\":\"o-1\"}", "shop-17"), message("o-2", 0, "{\"id\":\"o-2\"}"),
					message("o-3", 0, "{\"id\":\"o-3\"}", "店舗 9")));
		assertThat(this.orders.deliveries).extracting(Delivery::id, Delivery::group)
			.containsExactly(tuple("o-1", "shop-17"), tuple("o-2", null), tuple("o-3", "店舗 9"));
	}

	private DeliveryHandler handler(String method, Class<?> parameter) {
		return new DeliveryHandler(endpoint(method, parameter), new JsonPayloadConverter(new JsonMapper()),
				settlement(), DelayQueueMetrics.NONE, ObservationRegistry.NOOP, null, this.pauses::add,
				DelayListenerErrorHandler.DEFAULT);
	}

	private DelayListenerEndpoint endpoint(String method, Class<?> parameter) {
		ListenerSettings settings = new ListenerSettings(1, 0, 3, Duration.ofSeconds(30), BACKOFF,
				Duration.ofSeconds(5), Duration.ofSeconds(5), Duration.ofMinutes(10), LatePolicy.DELIVER,
				Duration.ofHours(1));
		return new DelayListenerEndpoint("orders", this.orders,
				ReflectionUtils.findMethod(Orders.class, method, parameter), settings);
	}

	private DeliveryHandler handler(LatePolicy latePolicy) {
		return handler(latePolicy, List.of(), DelayListenerErrorHandler.DEFAULT);
	}

	private DeliveryHandler handler(List<Class<? extends Throwable>> noRetryFor,
			DelayListenerErrorHandler errorHandler) {
		return handler(LatePolicy.DELIVER, noRetryFor, errorHandler);
	}

	private DeliveryHandler handler(LatePolicy latePolicy, List<Class<? extends Throwable>> noRetryFor,
			DelayListenerErrorHandler errorHandler) {
		ListenerSettings settings = new ListenerSettings(1, 0, 3, Duration.ofSeconds(30), BACKOFF,
				Duration.ofSeconds(5), Duration.ofSeconds(5), Duration.ofMinutes(10), latePolicy, Duration.ofHours(1))
			.withNoRetryFor(noRetryFor);
		Method method = ReflectionUtils.findMethod(Orders.class, "on", Order.class);
		DelayListenerEndpoint endpoint = new DelayListenerEndpoint("orders", this.orders, method, settings);
		return new DeliveryHandler(endpoint, new JsonPayloadConverter(new JsonMapper()), settlement(),
				DelayQueueMetrics.NONE, ObservationRegistry.NOOP, null, this.pauses::add, errorHandler);
	}

	private Settlement settlement() {
		return new Settlement("orders", this.store, new AckBatcher("orders", this.store, this.scheduler));
	}

	private static InFlightMessage message(String id, int attempts, String payload) {
		return message(id, attempts, payload, now().toEpochMilli());
	}

	private static InFlightMessage message(String id, int attempts, String payload, Map<String, String> headers) {
		return message(id, attempts, payload, now().toEpochMilli(), headers);
	}

	private static InFlightMessage message(String id, int attempts, String payload, long dueAtMillis) {
		return message(id, attempts, payload, dueAtMillis, Map.of());
	}

	private static InFlightMessage message(String id, int attempts, String payload, String group) {
		return message(id, attempts, payload, Map.of(MessageFormat.GROUP_HEADER, group));
	}

	private static InFlightMessage message(String id, int attempts, String payload, long dueAtMillis,
			Map<String, String> headers) {
		byte[] body = MessageFormat.encodeBody(headers, payload.getBytes(StandardCharsets.UTF_8));
		byte[] head = (attempts + ":" + dueAtMillis + ":").getBytes(StandardCharsets.US_ASCII);
		byte[] stored = new byte[head.length + body.length];
		System.arraycopy(head, 0, stored, 0, head.length);
		System.arraycopy(body, 0, stored, head.length, body.length);
		return new InFlightMessage(new ClaimedMessage(id, "token", 0, now(), stored));
	}

	private static Instant now() {
		return Instant.now();
	}

	record Order(String id) {
	}

	static class Orders {

		final List<Order> received = new CopyOnWriteArrayList<>();

		final List<Delivery<Order>> deliveries = new CopyOnWriteArrayList<>();

		volatile boolean failing;

		volatile Runnable onCall = () -> {
		};

		void on(Order order) {
			this.onCall.run();
			if (this.failing) {
				throw new IllegalStateException("payment service down");
			}
			this.received.add(order);
		}

		void onDelivery(Delivery<Order> delivery) {
			this.deliveries.add(delivery);
		}

		void onBatch(List<Delivery<Order>> batch) {
			this.deliveries.addAll(batch);
		}

	}

	/** Records the transitions asked for; every lease is held. */
	static class RecordingTopicStore implements TopicStore {

		final List<String> calls = new CopyOnWriteArrayList<>();

		final List<@Nullable String> errors = new ArrayList<>();

		@Override
		public String topic() {
			return "orders";
		}

		@Override
		public CompletableFuture<PromoteResult> promote(int limit, Duration lookahead) {
			throw new UnsupportedOperationException();
		}

		@Override
		public CompletableFuture<ClaimResult> claim(String consumer, String token, int limit, int earlyLimit,
				Duration lease, @Nullable RateLimit rateLimit, int groupConcurrency, WriteGate gate) {
			throw new UnsupportedOperationException();
		}

		@Override
		public CompletableFuture<List<Boolean>> ack(List<String> ids, List<String> leaseTokens) {
			for (int i = 0; i < ids.size(); i++) {
				this.calls.add("ack " + ids.get(i) + " " + leaseTokens.get(i));
			}
			return CompletableFuture.completedFuture(ids.stream().map((id) -> true).toList());
		}

		@Override
		public long postpone(String id, String leaseToken, Duration delay) {
			this.calls.add("postpone " + id + " " + leaseToken + " " + delay);
			return 1;
		}

		@Override
		public long retry(String id, String leaseToken, Duration backoff, @Nullable String error) {
			this.calls.add("retry " + id + " " + leaseToken + " " + backoff);
			this.errors.add(error);
			return 1;
		}

		@Override
		public boolean deadLetter(String id, String leaseToken, String error) {
			this.calls.add("deadLetter " + id + " " + leaseToken + " " + error);
			return true;
		}

		@Override
		public CompletableFuture<List<Boolean>> release(List<String> ids, List<String> leaseTokens) {
			for (int i = 0; i < ids.size(); i++) {
				this.calls.add("release " + ids.get(i) + " " + leaseTokens.get(i));
			}
			return CompletableFuture.completedFuture(ids.stream().map((id) -> true).toList());
		}

		@Override
		public CompletableFuture<List<String>> releaseClaim(String consumer, String token, Duration lease) {
			throw new UnsupportedOperationException();
		}

		@Override
		public CompletableFuture<List<Long>> extendLeases(List<String> ids, List<String> leaseTokens, Duration length) {
			return CompletableFuture.completedFuture(ids.stream().map((id) -> 1L).toList());
		}

		@Override
		public LeaseExpiryResult expireLeases(int limit, int maxAttempts) {
			throw new UnsupportedOperationException();
		}

		@Override
		public List<String> repairAfter(RuntimeException failure) {
			return List.of();
		}

	}

}

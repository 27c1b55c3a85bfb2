package io.github.delayqueue.listener;

import java.lang.reflect.Type;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.BiConsumer;

import io.github.delayqueue.convert.PayloadConversionException;
import io.github.delayqueue.convert.PayloadConverter;
import io.github.delayqueue.producer.DelayMessage;
import io.github.delayqueue.producer.DelayQueueTemplate;
import io.github.delayqueue.actuate.DelayQueueEndpoint;
import io.github.delayqueue.actuate.DelayQueueEndpoint.MessageDescriptor;
import io.github.delayqueue.runtime.DelayQueueRuntime;
import io.github.delayqueue.schedule.DelayQueueSchedules;
import io.github.delayqueue.store.ClaimedMessage;
import io.github.delayqueue.store.MessageFormat;
import io.github.delayqueue.store.MessageState;
import io.github.delayqueue.store.NewMessage;
import io.github.delayqueue.store.WakeUpListener;
import io.github.delayqueue.store.PartitionCountException;
import io.github.delayqueue.store.TopicPartitions;
import io.github.delayqueue.store.redis.RedisMessageStore;
import io.github.delayqueue.testsupport.QueueContexts;
import io.github.delayqueue.testsupport.Transitions;
import io.lettuce.core.cluster.SlotHash;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * Listeners of a topic's dead letters ({@code @DelayListener(deadLetters = true)}), on
 * real Redis: each dead letter reaches them with its last error and attempts, from a
 * failed last attempt, an exception not retried and a lease that expired too often, on
 * every partition and in the partition's hash slot; the dead-letter set keeps its copy
 * for replay; dead letters that die while no listener runs wait for it; a failing
 * listener of dead letters has them retried and dead-lettered in the queue's own set.
 */
class DeadLetterListenerTests {

	private static final Duration WAIT = Duration.ofSeconds(15);

	@Test
	void aDeadLetterReachesItsListenerWithItsLastErrorAttemptsHeadersAndPriorityAndStaysInTheDeadLetterSet() {
		QueueContexts.runner(QueueContexts.uniquePrefix())
			.withUserConfiguration(FailingOrders.class, DeadOrders.class)
			.withPropertyValues("delay-queue.topics.orders.backoff.initial-interval=10ms")
			.run((context) -> {
				DeadOrders dead = context.getBean(DeadOrders.class);
				await().atMost(WAIT).until(() -> watched(context, "orders"));
				context.getBean(DelayQueueTemplate.class)
					.send(DelayMessage.builder("orders", "order-1")
						.id("o-1")
						.priority(3)
						.header("tenant", "acme")
						.build());
				await().atMost(WAIT).until(() -> dead.deliveries.size() == 1);
				Delivery<String> delivery = dead.deliveries.get(0);
				assertThat(delivery.id()).isEqualTo("o-1");
				assertThat(delivery.topic()).isEqualTo("orders#dead");
				assertThat(delivery.payload()).isEqualTo("order-1");
				assertThat(delivery.attempt()).isEqualTo(1);
				assertThat(delivery.headers()).containsExactly(Map.entry("tenant", "acme"));
				assertThat(delivery.priority()).isEqualTo(3);
				assertThat(delivery.deadLetter())
					.isEqualTo(new DeadLetter("o-1", "java.lang.IllegalStateException: refused order-1", 2));
				assertThat(delivery.previousError()).isEqualTo("java.lang.IllegalStateException: refused order-1");
				RedisMessageStore store = context.getBean(RedisMessageStore.class);
				assertThat(store.page("orders", MessageState.DEAD, 0, 10).total()).isOne();
				await().atMost(WAIT)
					.until(() -> store.stats("orders#dead").inFlight() + store.stats("orders#dead").ready() == 0);
				assertThat(store.replayDead("orders", List.of("o-1")).replayed()).containsExactly("o-1");
			});
	}

	@Test
	void everyDeadLetterOfAPartitionedTopicReachesItsListenerFromTheKeysOfItsPartitionsSlot() {
		QueueContexts.runner(QueueContexts.uniquePrefix())
			.withUserConfiguration(RefusedPayments.class, DeadPayments.class)
			.withPropertyValues("delay-queue.topics.payments.partitions=3")
			.run((context) -> {
				RedisMessageStore store = context.getBean(RedisMessageStore.class);
				await().atMost(WAIT).until(() -> watched(context, "payments"));
				DelayQueueTemplate template = context.getBean(DelayQueueTemplate.class);
				for (int i = 0; i < 30; i++) {
					template.send(DelayMessage.builder("payments", "payment-" + i).id("p-" + i).build());
				}
				DeadPayments dead = context.getBean(DeadPayments.class);
				await().atMost(WAIT).until(() -> dead.ids.size() == 30);
				assertThat(dead.ids).doesNotHaveDuplicates();
				for (String partition : store.partitions().names("payments")) {
					String deadLetters = TopicPartitions.deadLettersOf(partition);
					assertThat(SlotHash.getSlot(store.keys(deadLetters).messages()))
						.isEqualTo(SlotHash.getSlot(store.keys(partition).messages()));
					assertThat(store.keys(deadLetters).partitionCount())
						.isEqualTo(store.keys(partition).partitionCount());
				}
				assertThat(store.partitions().names("payments#dead")).hasSize(3);
			});
	}

	@Test
	void aDeadLetterThatDiesWhileNoListenerOfThemRunsIsDeliveredWhenOneStartsAgain() {
		String prefix = QueueContexts.uniquePrefix();
		listenToDeadOrders(prefix);
		failingOrders(prefix).run((context) -> {
			context.getBean(DelayQueueTemplate.class).send(DelayMessage.builder("orders", "order-2").id("o-2").build());
			RedisMessageStore store = context.getBean(RedisMessageStore.class);
			await().atMost(WAIT).until(() -> store.stats("orders#dead").ready() == 1);
		});
		QueueContexts.runner(prefix).withUserConfiguration(DeadOrders.class).run((context) -> {
			DeadOrders dead = context.getBean(DeadOrders.class);
			await().atMost(WAIT).until(() -> dead.deliveries.size() == 1);
			assertThat(dead.deliveries.get(0).deadLetter().id()).isEqualTo("o-2");
		});
	}

	@Test
	void noCopyIsMadeOfDeadLettersWhileTheirsWasNeverListenedTo() {
		QueueContexts.runner(QueueContexts.uniquePrefix())
			.withUserConfiguration(FailingOrders.class)
			.withPropertyValues("delay-queue.topics.orders.backoff.initial-interval=10ms")
			.run((context) -> {
				context.getBean(DelayQueueTemplate.class)
					.send(DelayMessage.builder("orders", "order-3").id("o-3").build());
				RedisMessageStore store = context.getBean(RedisMessageStore.class);
				await().atMost(WAIT).until(() -> store.page("orders", MessageState.DEAD, 0, 10).total() == 1);
				assertThat(store.stats("orders#dead").ready()).isZero();
				assertThat(context.getBean(StringRedisTemplate.class).hasKey(store.keys("orders#dead").messages()))
					.isFalse();
			});
	}

	@Test
	void anIdThatDiesAgainWhileItsEarlierDeadLetterIsQueuedIsQueuedUnderANameOfItsOwnInTheSamePartition() {
		String prefix = QueueContexts.uniquePrefix();
		listenToDeadOrders(prefix, "delay-queue.topics.orders.partitions=2");
		QueueContexts.runner(prefix)
			.withUserConfiguration(FailingOrders.class)
			.withPropertyValues("delay-queue.topics.orders.backoff.initial-interval=10ms",
					"delay-queue.topics.orders.partitions=2")
			.run((context) -> {
				DelayQueueTemplate template = context.getBean(DelayQueueTemplate.class);
				RedisMessageStore store = context.getBean(RedisMessageStore.class);
				template.send(DelayMessage.builder("orders", "first").id("o-4").build());
				await().atMost(WAIT).until(() -> store.stats("orders#dead").ready() == 1);
				template.send(DelayMessage.builder("orders", "second").id("o-4").build());
				await().atMost(WAIT).until(() -> store.stats("orders#dead").ready() == 2);
			});
		QueueContexts.runner(prefix)
			.withUserConfiguration(DeadOrders.class)
			.withPropertyValues("delay-queue.topics.orders.partitions=2")
			.run((context) -> {
				DeadOrders dead = context.getBean(DeadOrders.class);
				await().atMost(WAIT).until(() -> dead.deliveries.size() == 2);
				assertThat(dead.deliveries).extracting(Delivery::payload).containsExactlyInAnyOrder("first", "second");
				assertThat(dead.deliveries).extracting((delivery) -> delivery.deadLetter().id()).containsOnly("o-4");
				assertThat(dead.deliveries).extracting(Delivery::id)
					.anySatisfy((id) -> assertThat(id).isEqualTo("o-4"))
					.anySatisfy((id) -> assertThat(id).startsWith("o-4~"));
			});
	}

	@Test
	void aListenerOfDeadLettersThatFailsHasThemRetriedThenDeadLetteredInTheQueuesOwnSet() {
		QueueContexts.runner(QueueContexts.uniquePrefix())
			.withUserConfiguration(FailingOrders.class, FailingDeadOrders.class)
			.withPropertyValues("delay-queue.topics.orders.backoff.initial-interval=10ms",
					"delay-queue.topics[orders#dead].backoff.initial-interval=10ms")
			.run((context) -> {
				RedisMessageStore store = context.getBean(RedisMessageStore.class);
				await().atMost(WAIT).until(() -> watched(context, "orders"));
				context.getBean(DelayQueueTemplate.class)
					.send(DelayMessage.builder("orders", "order-5").id("o-5").build());
				FailingDeadOrders dead = context.getBean(FailingDeadOrders.class);
				await().atMost(WAIT).until(() -> store.page("orders#dead", MessageState.DEAD, 0, 10).total() == 1);
				assertThat(dead.attempts).containsExactly(1, 2, 3);
				assertThat(store.page("orders#dead", MessageState.DEAD, 0, 10).messages().get(0).lastError())
					.isEqualTo("java.lang.IllegalStateException: alert service down");
				assertThat(store.page("orders", MessageState.DEAD, 0, 10).total()).isOne();
			});
	}

	@Test
	void aWatchRedisLostIsSetAgainByTheNextBurialOfAnApplicationListeningToThoseDeadLetters() {
		String prefix = QueueContexts.uniquePrefix();
		QueueContexts.runner(prefix).run((context) -> {
			RedisMessageStore store = context.getBean(RedisMessageStore.class);
			StringRedisTemplate redis = context.getBean(StringRedisTemplate.class);
			RedisMessageStore notListening = new RedisMessageStore(context.getBean(RedisConnectionFactory.class),
					prefix);
			store.watchDeadLetters("lost");
			String watch = store.keys("lost").deadLettersWatch();
			redis.delete(watch);
			bury(notListening, "lost", "n-1",
					(id, token) -> Transitions.deadLetter(notListening, "lost", id, token, "refused"));
			assertThat(redis.hasKey(watch)).as("an application not listening leaves it").isFalse();
			assertThat(store.stats("lost#dead").ready()).isZero();
			bury(store, "lost", "d-1", (id, token) -> Transitions.deadLetter(store, "lost", id, token, "refused"));
			assertThat(redis.hasKey(watch)).isTrue();
			assertThat(store.stats("lost#dead").ready()).isOne();
			redis.delete(watch);
			bury(store, "lost", "e-1", (id, token) -> await().atMost(WAIT)
				.until(() -> Transitions.expireLeases(store, "lost", 10, 1).deadLettered().size() == 1));
			assertThat(redis.hasKey(watch)).isTrue();
			assertThat(store.stats("lost#dead").ready()).isEqualTo(2);
		});
	}

	private static void bury(RedisMessageStore store, String topic, String id, BiConsumer<String, String> burial) {
		store.send(topic, List.of(NewMessage.afterDelay(id, Duration.ZERO,
				MessageFormat.encodeBody(Map.of(), "body".getBytes(StandardCharsets.UTF_8)))));
		Transitions.promote(store, topic, 10);
		List<ClaimedMessage> claimed = Transitions.claim(store, topic, 10, Duration.ZERO);
		assertThat(claimed).singleElement().extracting(ClaimedMessage::id).isEqualTo(id);
		burial.accept(id, claimed.get(0).leaseToken());
	}

	@Test
	void aMessageWhoseLeaseExpiredOnItsLastAttemptIsQueuedWithThatErrorAndTheConsumersAreSignalled() {
		QueueContexts.runner(QueueContexts.uniquePrefix()).run((context) -> {
			RedisMessageStore store = context.getBean(RedisMessageStore.class);
			store.watchDeadLetters("leases");
			List<String> signals = new CopyOnWriteArrayList<>();
			try (AutoCloseable subscription = store.subscribe(List.of("leases#dead"), new WakeUpListener() {

				@Override
				public void readyMessages(String partition) {
					signals.add(partition);
				}

				@Override
				public void earlierMessage(String partition) {
				}

			})) {
				store.send("leases", List.of(NewMessage.afterDelay("l-1", Duration.ZERO,
						MessageFormat.encodeBody(Map.of("tenant", "acme"), "body".getBytes(StandardCharsets.UTF_8)))));
				Transitions.promote(store, "leases", 10);
				assertThat(Transitions.claim(store, "leases", 10, Duration.ZERO)).hasSize(1);
				await().atMost(WAIT)
					.until(() -> Transitions.expireLeases(store, "leases", 10, 1).deadLettered().size() == 1);
				assertThat(store.stats("leases#dead").ready()).isOne();
				await().atMost(WAIT).until(() -> signals.contains("leases#dead"));
			}
			assertThat(store.inspect("leases#dead", "l-1", 1000)).isNotNull();
			DelayQueueEndpoint endpoint = new DelayQueueEndpoint(store, context.getBean(DelayQueueTemplate.class),
					context.getBean(DelayQueueRuntime.class), context.getBean(DelayQueueSchedules.class));
			assertThat(endpoint.queue().topics()).containsKeys("leases", "leases#dead");
			MessageDescriptor queued = endpoint.message("leases#dead", "l-1");
			assertThat(queued.headers()).containsExactly(Map.entry("tenant", "acme"));
			assertThat(queued.state()).isEqualTo("ready");
			assertThat(endpoint.cancel("leases#dead", "l-1").affected()).isOne();
		});
	}

	@Test
	void aCountChangedByAnotherApplicationHasTheNewPartitionsQueueDeadLettersToo() {
		String prefix = QueueContexts.uniquePrefix();
		listenToDeadOrders(prefix);
		QueueContexts.runner(prefix)
			.withUserConfiguration(FailingOrders.class)
			.withPropertyValues("delay-queue.topics.orders.backoff.initial-interval=10ms",
					"delay-queue.topics.orders.partitions=3")
			.run((context) -> {
				assertThat(watched(context, "orders")).isTrue();
				DelayQueueTemplate template = context.getBean(DelayQueueTemplate.class);
				for (int i = 0; i < 30; i++) {
					template.send(DelayMessage.builder("orders", "order").id("c-" + i).build());
				}
				RedisMessageStore store = context.getBean(RedisMessageStore.class);
				await().atMost(WAIT).until(() -> store.stats("orders#dead").ready() == 30);
			});
	}

	@Test
	void aCorruptMessageReachesTheListenerOfDeadLettersWithItsBytesAsThePayloadAndItsLastErrorAsPreviousError() {
		String prefix = QueueContexts.uniquePrefix();
		listenToDeadOrders(prefix);
		QueueContexts.runner(prefix)
			.withUserConfiguration(FailingOrders.class, DeadOrders.class)
			.withPropertyValues("delay-queue.topics.orders.backoff.initial-interval=10ms")
			.run((context) -> {
				RedisMessageStore store = context.getBean(RedisMessageStore.class);
				store.send("orders", List.of(NewMessage.afterDelay("garbled", Duration.ZERO,
						"not in the stored format".getBytes(StandardCharsets.UTF_8))));
				DeadOrders dead = context.getBean(DeadOrders.class);
				await().atMost(WAIT).until(() -> dead.deliveries.size() == 1);
				Delivery<String> delivery = dead.deliveries.get(0);
				assertThat(delivery.payload()).isEqualTo("not in the stored format");
				assertThat(delivery.deadLetter().error()).contains("corrupt");
				assertThat(delivery.previousError()).isEqualTo(delivery.deadLetter().error());
			});
	}

	@Test
	void anErrorTextIsKeptToItsFirst2000CharactersCutBetweenCodePointsInTheDeadLetterAndInItsQueuedCopy() {
		// Character 2000 is the first half of a surrogate pair: the text is cut before
		// it.
		String error = "e".repeat(1999) + "\uD83D\uDE00" + "x".repeat(20_000);
		String kept = "e".repeat(1999);
		QueueContexts.runner(QueueContexts.uniquePrefix())
			.withUserConfiguration(UnreadableOrders.class, DeadOrders.class)
			.withBean(PayloadConverter.class, () -> new UnreadableAsLong(error))
			.run((context) -> {
				DeadOrders dead = context.getBean(DeadOrders.class);
				await().atMost(WAIT).until(() -> watched(context, "orders"));
				context.getBean(DelayQueueTemplate.class)
					.send(DelayMessage.builder("orders", "order-7").id("o-7").build());
				await().atMost(WAIT).until(() -> dead.deliveries.size() == 1);
				Delivery<String> delivery = dead.deliveries.get(0);
				// Lengths first: a failure then shows numbers, not 20,000 characters.
				assertThat(delivery.deadLetter().error().length()).isEqualTo(kept.length());
				assertThat(delivery.deadLetter().error()).isEqualTo(kept);
				assertThat(delivery.previousError().length()).isEqualTo(kept.length());
				assertThat(delivery.previousError()).isEqualTo(kept);
				RedisMessageStore store = context.getBean(RedisMessageStore.class);
				String stored = (String) context.getBean(StringRedisTemplate.class)
					.opsForHash()
					.get(store.keys("orders").deadErrors(), "o-7");
				assertThat(stored.length()).isEqualTo(kept.length());
				assertThat(stored).isEqualTo(kept);
			});
	}

	@Test
	void aDeadLetterLaterThanTheInheritedLateThresholdIsStillDeliveredToItsListener() {
		String prefix = QueueContexts.uniquePrefix();
		listenToDeadOrders(prefix);
		failingOrders(prefix).run((context) -> {
			context.getBean(DelayQueueTemplate.class).send(DelayMessage.builder("orders", "order-8").id("o-8").build());
			await().atMost(WAIT)
				.until(() -> context.getBean(RedisMessageStore.class).stats("orders#dead").ready() == 1);
		});
		// It waited for this listener far longer than a millisecond.
		QueueContexts.runner(prefix)
			.withUserConfiguration(DeadOrders.class)
			.withPropertyValues("delay-queue.listener.late-policy=dead-letter",
					"delay-queue.listener.late-threshold=1ms")
			.run((context) -> {
				DeadOrders dead = context.getBean(DeadOrders.class);
				await().atMost(WAIT).until(() -> dead.deliveries.size() == 1);
				assertThat(dead.deliveries.get(0).deadLetter().id()).isEqualTo("o-8");
				assertThat(dead.deliveries.get(0).lateness()).isGreaterThan(Duration.ofMillis(1));
				assertThat(
						context.getBean(RedisMessageStore.class).page("orders#dead", MessageState.DEAD, 0, 10).total())
					.isZero();
			});
	}

	@Test
	void aDeadLetterLatePolicySetOnTheDeadLetterQueueFailsStartupNamingTheListenerAndTheProperty() {
		QueueContexts.runner(QueueContexts.uniquePrefix())
			.withUserConfiguration(DeadOrders.class)
			.withPropertyValues("delay-queue.topics[orders#dead].late-policy=dead-letter")
			.run((context) -> {
				assertThat(context).hasFailed();
				assertThat(context.getStartupFailure()).isInstanceOf(InvalidDelayListenerException.class)
					.hasMessageContainingAll(DeadOrders.class.getName() + ".on", "late-policy 'dead-letter'",
							"delay-queue.topics[orders#dead].late-policy");
			});
	}

	@Test
	void anApplicationWithOnlyAListenerOfDeadLettersNeverChangesTheCountOfAnEmptyTopic() {
		String prefix = QueueContexts.uniquePrefix();
		QueueContexts.runner(prefix)
			.withPropertyValues("delay-queue.topics.orders.partitions=3")
			.run((context) -> context.getBean(RedisMessageStore.class).agreePartitions("orders"));
		QueueContexts.runner(prefix).withUserConfiguration(DeadOrders.class).run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure()).rootCause()
				.isInstanceOf(PartitionCountException.class)
				.hasMessageContaining("delay-queue.topics.orders.partitions");
		});
		QueueContexts.runner(prefix)
			.withUserConfiguration(DeadOrders.class)
			.withPropertyValues("delay-queue.topics.orders.partitions=3")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				RedisMessageStore store = context.getBean(RedisMessageStore.class);
				assertThat(context.getBean(StringRedisTemplate.class)
					.opsForValue()
					.get(store.keys("orders").partitionCount())).isEqualTo("3");
			});
	}

	@Test
	void theCountOfPartitionsCannotChangeWhileTheDeadLetterQueueHoldsMessages() {
		String prefix = QueueContexts.uniquePrefix();
		listenToDeadOrders(prefix);
		failingOrders(prefix).run((context) -> {
			RedisMessageStore store = context.getBean(RedisMessageStore.class);
			context.getBean(DelayQueueTemplate.class).send(DelayMessage.builder("orders", "order-6").id("o-6").build());
			await().atMost(WAIT).until(() -> store.stats("orders#dead").ready() == 1);
			store.purgeDead("orders", 10);
		});
		QueueContexts.runner(prefix)
			.withPropertyValues("delay-queue.topics.orders.partitions=4")
			.run((context) -> assertThatExceptionOfType(PartitionCountException.class)
				.isThrownBy(() -> context.getBean(RedisMessageStore.class).agreePartitions("orders")));
	}

	/**
	 * Starts a listener of the dead letters of "orders" once, until it watches them,
	 * after the topic's count was set as a sender would (a listener of dead letters never
	 * sets it).
	 */
	private static void listenToDeadOrders(String prefix, String... properties) {
		QueueContexts.runner(prefix)
			.withPropertyValues(properties)
			.run((context) -> context.getBean(RedisMessageStore.class).agreePartitions("orders"));
		QueueContexts.runner(prefix)
			.withUserConfiguration(DeadOrders.class)
			.withPropertyValues(properties)
			.run((context) -> await().atMost(WAIT).until(() -> watched(context, "orders")));
	}

	/**
	 * An application whose listener of "orders" fails every attempt, retrying at once.
	 */
	private static ApplicationContextRunner failingOrders(String prefix) {
		return QueueContexts.runner(prefix)
			.withUserConfiguration(FailingOrders.class)
			.withPropertyValues("delay-queue.topics.orders.backoff.initial-interval=10ms");
	}

	private static boolean watched(AssertableApplicationContext context, String topic) {
		RedisMessageStore store = context.getBean(RedisMessageStore.class);
		StringRedisTemplate redis = context.getBean(StringRedisTemplate.class);
		return store.partitions()
			.names(topic)
			.stream()
			.allMatch((partition) -> redis.hasKey(store.keys(partition).deadLettersWatch()));
	}

	@Configuration(proxyBeanMethods = false)
	static class FailingOrders {

		@DelayListener(topic = "orders", maxAttempts = 2)
		void on(String payload) {
			throw new IllegalStateException("refused " + payload);
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class DeadOrders {

		final List<Delivery<String>> deliveries = new CopyOnWriteArrayList<>();

		@DelayListener(topic = "orders", deadLetters = true)
		void on(Delivery<String> delivery) {
			this.deliveries.add(delivery);
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class FailingDeadOrders {

		final List<Integer> attempts = new CopyOnWriteArrayList<>();

		@DelayListener(topic = "orders", deadLetters = true, maxAttempts = 3)
		void on(Delivery<String> delivery) {
			this.attempts.add(delivery.attempt());
			throw new IllegalStateException("alert service down");
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class RefusedPayments {

		@DelayListener(topic = "payments", noRetryFor = IllegalArgumentException.class)
		void on(String payload) {
			throw new IllegalArgumentException("card declined");
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class DeadPayments {

		final List<String> ids = new CopyOnWriteArrayList<>();

		@DelayListener(topic = "payments", deadLetters = true, concurrency = "4")
		void on(Delivery<String> delivery) {
			this.ids.add(delivery.deadLetter().id());
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class UnreadableOrders {

		@DelayListener(topic = "orders")
		void on(Order order) {
			throw new IllegalStateException("never called: the payload cannot be read");
		}

	}

	record Order(String id) {
	}

	/** Reads Strings, and fails to read anything else with a long error. */
	static final class UnreadableAsLong implements PayloadConverter {

		private final String error;

		UnreadableAsLong(String error) {
			this.error = error;
		}

		@Override
		public byte[] toBytes(Object payload) {
			return ((String) payload).getBytes(StandardCharsets.UTF_8);
		}

		@Override
		public Object fromBytes(byte[] bytes, Type targetType) {
			if (targetType == String.class) {
				return new String(bytes, StandardCharsets.UTF_8);
			}
			throw new PayloadConversionException(this.error);
		}

	}

}

package io.github.delayqueue.listener;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.IntStream;

import io.github.delayqueue.producer.DelayMessage;
import io.github.delayqueue.producer.DelayQueueTemplate;
import io.github.delayqueue.runtime.DelayQueueRuntime;
import io.github.delayqueue.store.TopicStats;
import io.github.delayqueue.store.redis.RedisMessageStore;
import io.github.delayqueue.store.redis.TopicKeys;
import io.github.delayqueue.testsupport.QueueContexts;
import org.junit.jupiter.api.Test;

import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;
import static org.awaitility.Awaitility.await;

/**
 * {@link DelayListener} methods taking a {@code List}: due messages arrive in batches of
 * at most the maximum batch size, or fewer once the batch timeout passed; a failure
 * retries the batch's messages, all of them or those a
 * {@link BatchListenerFailedException} names, each by the rules of single messages.
 */
class BatchListenerTests {

	private static final Duration WAIT = Duration.ofSeconds(15);

	@Test
	void dueMessagesArriveInBatchesOfAtMostTheMaxBatchSizeEachOnce() {
		String prefix = QueueContexts.uniquePrefix();
		List<String> ids = IntStream.range(0, 25).mapToObj((i) -> "m" + i).toList();
		// Sent while no application listens: all are due when the listener starts.
		QueueContexts.runner(prefix)
			.run((context) -> context.getBean(DelayQueueTemplate.class)
				.sendAll(ids.stream().map((id) -> DelayMessage.builder("batched", id).id(id).build()).toList()));
		QueueContexts.runner(prefix)
			.withUserConfiguration(DeliveryBatchListener.class)
			.withPropertyValues("delay-queue.topics.batched.max-batch-size=10",
					"delay-queue.topics.batched.batch-timeout=1s")
			.run((context) -> {
				DeliveryBatchListener listener = context.getBean(DeliveryBatchListener.class);
				await().atMost(WAIT).until(() -> listener.received().size() == 25);
				assertThat(listener.batches).allSatisfy((batch) -> assertThat(batch).hasSizeBetween(1, 10));
				assertThat(listener.batches.get(0)).hasSize(10);
				assertThat(listener.received()).extracting(Delivery::id).containsExactlyInAnyOrderElementsOf(ids);
				assertThat(listener.received()).extracting(Delivery::payload).containsExactlyInAnyOrderElementsOf(ids);
				assertThat(listener.received()).extracting(Delivery::attempt).containsOnly(1);
				assertNothingLeft(context.getBean(RedisMessageStore.class), "batched",
						context.getBean(StringRedisTemplate.class));
			});
	}

	@Test
	void aBatchThatIsNotFullGoesToTheListenerOnceTheBatchTimeoutPassed() {
		QueueContexts.runner(QueueContexts.uniquePrefix())
			.withUserConfiguration(PayloadBatchListener.class)
			.run((context) -> {
				PayloadBatchListener listener = context.getBean(PayloadBatchListener.class);
				long sent = System.nanoTime();
				context.getBean(DelayQueueTemplate.class)
					.sendAll(List.of(DelayMessage.builder("payloads", "a").build(),
							DelayMessage.builder("payloads", "b").build(),
							DelayMessage.builder("payloads", "c").build()));
				await().atMost(WAIT).until(() -> listener.received().size() == 3);
				assertThat(listener.received()).containsExactlyInAnyOrder("a", "b", "c");
				assertThat(listener.batches).hasSize(1);
				// Nothing came before the timeout (500 ms) after the first message.
				assertThat(listener.firstCallNanos - sent).isGreaterThanOrEqualTo(Duration.ofMillis(500).toNanos());
			});
	}

	@Test
	void aBatchListenerThatThrowsGetsEveryMessageOfTheBatchAgainAsTheNextAttempt() {
		QueueContexts.runner(QueueContexts.uniquePrefix())
			.withUserConfiguration(DeliveryBatchListener.class)
			.run((context) -> {
				DeliveryBatchListener listener = context.getBean(DeliveryBatchListener.class);
				listener.failFirstCall.set(true);
				context.getBean(DelayQueueTemplate.class)
					.sendAll(List.of(DelayMessage.builder("batched", "x").id("x").build(),
							DelayMessage.builder("batched", "y").id("y").build()));
				await().atMost(WAIT).untilAsserted(() -> {
					assertThat(listener.batches).isNotEmpty();
					List<Delivery<String>> first = listener.batches.get(0);
					assertThat(first).extracting(Delivery::attempt).containsOnly(1);
					assertThat(listener.received()).filteredOn((delivery) -> delivery.attempt() == 2)
						.extracting(Delivery::id)
						.containsExactlyInAnyOrderElementsOf(first.stream().map(Delivery::id).toList());
				});
				assertThat(listener.received()).extracting(Delivery::id).containsOnly("x", "y");
			});
	}

	@Test
	void aBatchListenerFailedExceptionRetriesOnlyTheMessagesItNamesAndAcknowledgesTheOthers() {
		QueueContexts.runner(QueueContexts.uniquePrefix())
			.withUserConfiguration(PartlyFailingListener.class)
			.run((context) -> {
				PartlyFailingListener listener = context.getBean(PartlyFailingListener.class);
				sendGoodAndBad(context.getBean(DelayQueueTemplate.class));
				await().atMost(WAIT).until(() -> listener.received.size() == 7);
				assertThat(listener.received).filteredOn((delivery) -> delivery.payload().startsWith("good"))
					.extracting(Delivery::attempt)
					.containsExactly(1, 1, 1);
				assertThat(listener.received).filteredOn((delivery) -> delivery.payload().startsWith("bad"))
					.extracting(Delivery::id, Delivery::attempt)
					.containsExactlyInAnyOrder(tuple("bad-1", 1), tuple("bad-2", 1), tuple("bad-1", 2),
							tuple("bad-2", 2));
				assertNothingLeft(context.getBean(RedisMessageStore.class), "partly",
						context.getBean(StringRedisTemplate.class));
			});
	}

	@Test
	void messagesNamedAsFailedOnTheirLastAttemptAreDeadLetteredAndTheOthersAcknowledged() {
		QueueContexts.runner(QueueContexts.uniquePrefix())
			.withUserConfiguration(PartlyFailingListener.class)
			.withPropertyValues("delay-queue.topics.partly.max-attempts=2")
			.run((context) -> {
				PartlyFailingListener listener = context.getBean(PartlyFailingListener.class);
				listener.alwaysFail = true;
				StringRedisTemplate redis = context.getBean(StringRedisTemplate.class);
				TopicKeys keys = context.getBean(RedisMessageStore.class).keys("partly");
				sendGoodAndBad(context.getBean(DelayQueueTemplate.class));
				await().atMost(WAIT).until(() -> redis.opsForHash().size(keys.deadErrors()) == 2);
				assertThat(redis.opsForZSet().range(keys.dead(), 0, -1)).containsExactlyInAnyOrder("bad-1", "bad-2");
				assertThat((String) redis.opsForHash().get(keys.deadErrors(), "bad-1"))
					.contains("IllegalStateException")
					.contains("partner refused");
				assertThat(listener.received).filteredOn((delivery) -> delivery.payload().startsWith("good"))
					.hasSize(3);
				await().atMost(WAIT)
					.untilAsserted(() -> assertThat(List.of(keys.messages(), keys.inFlight(), keys.scheduled()))
						.noneMatch((key) -> Boolean.TRUE.equals(redis.hasKey(key))));
			});
	}

	@Test
	void aBatchThatAsksToSlowDownComesAgainAsTheSameAttempt() {
		QueueContexts.runner(QueueContexts.uniquePrefix())
			.withUserConfiguration(DeliveryBatchListener.class)
			.run((context) -> {
				DeliveryBatchListener listener = context.getBean(DeliveryBatchListener.class);
				listener.slowDownFirstCall.set(true);
				context.getBean(DelayQueueTemplate.class).send("batched", "slow", Duration.ZERO);
				await().atMost(WAIT).until(() -> listener.received().size() == 2);
				assertThat(listener.received()).extracting(Delivery::payload).containsExactly("slow", "slow");
				assertThat(listener.received()).extracting(Delivery::attempt).containsExactly(1, 1);
			});
	}

	@Test
	void aBatchBeingGatheredKeepsTheRuntimeBusyAndIsHandedBackWhenTheApplicationStops() {
		DeliveryBatchListener listener = new DeliveryBatchListener();
		String prefix = QueueContexts.uniquePrefix();
		QueueContexts.runner(prefix)
			.withBean(DeliveryBatchListener.class, () -> listener)
			.withPropertyValues("delay-queue.topics.batched.batch-timeout=1m")
			.run((context) -> {
				DelayQueueRuntime runtime = context.getBean(DelayQueueRuntime.class);
				StringRedisTemplate redis = context.getBean(StringRedisTemplate.class);
				TopicKeys keys = context.getBean(RedisMessageStore.class).keys("batched");
				context.getBean(DelayQueueTemplate.class).send("batched", "waiting", Duration.ZERO);
				await().atMost(WAIT).until(() -> redis.opsForZSet().size(keys.inFlight()) == 1);
				assertThat(runtime.isIdle()).isFalse();
				assertThat(listener.batches).isEmpty();
			});
		assertThat(listener.received()).isEmpty();
		QueueContexts.runner(prefix).run((context) -> {
			TopicStats stats = context.getBean(RedisMessageStore.class).stats("batched");
			assertThat(stats.ready()).as("handed back").isEqualTo(1);
			assertThat(stats.inFlight()).isZero();
		});
	}

	@Test
	void annotationBatchSettingsWinOverTopicProperties() {
		QueueContexts.runner(QueueContexts.uniquePrefix())
			.withUserConfiguration(PayloadBatchListener.class)
			.withPropertyValues("delay-queue.topics.payloads.max-batch-size=7",
					"delay-queue.topics.payloads.batch-timeout=2s", "app.batch-size=20")
			.run((context) -> {
				ListenerSettings settings = context.getBean(DelayListenerEndpointRegistry.class)
					.getEndpoints()
					.get("payloads")
					.settings();
				assertThat(settings.maxBatchSize()).isEqualTo(20);
				assertThat(settings.batchTimeout()).isEqualTo(Duration.ofMillis(500));
			});
	}

	@Test
	void topicPropertiesSetTheBatchSettingsAndDefaultsApplyOtherwise() {
		QueueContexts.runner(QueueContexts.uniquePrefix())
			.withUserConfiguration(DeliveryBatchListener.class)
			.withPropertyValues("delay-queue.topics.batched.max-batch-size=7")
			.run((context) -> {
				ListenerSettings settings = context.getBean(DelayListenerEndpointRegistry.class)
					.getEndpoints()
					.get("batched")
					.settings();
				assertThat(settings.maxBatchSize()).isEqualTo(7);
				assertThat(settings.batchTimeout()).isEqualTo(Duration.ofMillis(100));
			});
	}

	@Test
	void aMaxBatchSizeOutOfRangeFailsStartupNamingTheTopicAndTheAttribute() {
		QueueContexts.runner(QueueContexts.uniquePrefix())
			.withUserConfiguration(ZeroBatchListener.class)
			.run((context) -> {
				assertThat(context).hasFailed();
				assertThat(context.getStartupFailure()).rootCause()
					.hasMessageContainingAll("'zero-batch'", "maxBatchSize", "between 1 and 1000, but was 0");
			});
	}

	@Test
	void aTopicBatchPropertyOutOfRangeFailsStartupNamingTheProperty() {
		QueueContexts.runner(QueueContexts.uniquePrefix())
			.withUserConfiguration(DeliveryBatchListener.class)
			.withPropertyValues("delay-queue.topics.batched.max-batch-size=1001",
					"delay-queue.topics.batched.batch-timeout=-1s")
			.run((context) -> {
				assertThat(context).hasFailed();
				assertThat(context.getStartupFailure()).rootCause()
					.hasMessageContainingAll("delay-queue.topics.batched.max-batch-size must be between 1 and 1000",
							"delay-queue.topics.batched.batch-timeout must be between");
			});
	}

	private static void sendGoodAndBad(DelayQueueTemplate template) {
		template.sendAll(List.of("good-1", "bad-1", "good-2", "bad-2", "good-3")
			.stream()
			.map((id) -> DelayMessage.builder("partly", id).id(id).build())
			.toList());
	}

	private static void assertNothingLeft(RedisMessageStore store, String topic, StringRedisTemplate redis) {
		await().atMost(WAIT)
			.untilAsserted(() -> assertThat(store.keys(topic).all())
				.noneMatch((key) -> Boolean.TRUE.equals(redis.hasKey(key))));
	}

	@Configuration(proxyBeanMethods = false)
	static class DeliveryBatchListener {

		final List<List<Delivery<String>>> batches = new CopyOnWriteArrayList<>();

		final AtomicBoolean failFirstCall = new AtomicBoolean();

		final AtomicBoolean slowDownFirstCall = new AtomicBoolean();

		@DelayListener(topic = "batched")
		void on(List<Delivery<String>> batch) {
			this.batches.add(List.copyOf(batch));
			if (this.failFirstCall.getAndSet(false)) {
				throw new IllegalStateException("the whole batch fails");
			}
			if (this.slowDownFirstCall.getAndSet(false)) {
				throw new SlowDownException(Duration.ofMillis(300));
			}
		}

		List<Delivery<String>> received() {
			List<Delivery<String>> all = new ArrayList<>();
			this.batches.forEach(all::addAll);
			return all;
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class PayloadBatchListener {

		final List<List<String>> batches = new CopyOnWriteArrayList<>();

		volatile long firstCallNanos;

		@DelayListener(topic = "payloads", maxBatchSize = "${app.batch-size:10}", batchTimeout = "500ms")
		void on(List<String> batch) {
			if (this.batches.isEmpty()) {
				this.firstCallNanos = System.nanoTime();
			}
			this.batches.add(List.copyOf(batch));
		}

		List<String> received() {
			List<String> all = new ArrayList<>();
			this.batches.forEach(all::addAll);
			return all;
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class PartlyFailingListener {

		final List<Delivery<String>> received = new CopyOnWriteArrayList<>();

		volatile boolean alwaysFail;

		@DelayListener(topic = "partly", maxBatchSize = "5", batchTimeout = "300ms")
		void on(List<Delivery<String>> batch) {
			this.received.addAll(batch);
			List<String> failed = batch.stream()
				.filter((delivery) -> delivery.payload().startsWith("bad")
						&& (this.alwaysFail || delivery.attempt() == 1))
				.map(Delivery::id)
				.toList();
			if (!failed.isEmpty()) {
				List<String> named = new ArrayList<>(failed);
				named.add("not-in-this-batch");
				throw new BatchListenerFailedException("partner refused some", named,
						new IllegalStateException("partner refused " + failed.get(0)));
			}
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class ZeroBatchListener {

		@DelayListener(topic = "zero-batch", maxBatchSize = "0")
		void on(List<String> batch) {
		}

	}

}

package io.github.delayqueue.review;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import io.github.delayqueue.producer.DelayMessage;
import io.github.delayqueue.producer.DelayQueueTemplate;
import io.github.delayqueue.producer.SendFailedException;
import io.github.delayqueue.producer.SendResult;
import io.github.delayqueue.listener.DelayListener;
import io.github.delayqueue.store.PartitionCountException;
import io.github.delayqueue.store.TopicPartitions;
import io.github.delayqueue.store.redis.RedisMessageStore;
import io.github.delayqueue.test.redis.TestRedis;
import io.github.delayqueue.test.redis.FaultyRedisProxy;
import io.github.delayqueue.testsupport.QueueContexts;
import org.junit.jupiter.api.Test;

import org.springframework.context.annotation.Configuration;
import org.springframework.dao.QueryTimeoutException;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.support.AbstractPlatformTransactionManager;
import org.springframework.transaction.support.DefaultTransactionStatus;
import org.springframework.transaction.support.TransactionTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * Adversarial review of the producer side of issue 34 (calls by id after unanswered
 * sends, transactions, deduplication windows, bookkeeping keys), on real Redis: each test
 * is a hole the review looked for.
 */
class ProducerReviewTests {

	private static final Duration WAIT = Duration.ofSeconds(15);

	@Test
	void aCancelAfterAnAsynchronousSendWinsFromSeveralThreadsWithRepliesDelayedAndDroppedOnAPartitionedTopic()
			throws Exception {
		TestRedis redis = TestRedis.shared();
		try (FaultyRedisProxy proxy = FaultyRedisProxy.start(redis.host(), redis.port())) {
			QueueContexts.runner(QueueContexts.uniquePrefix(), proxy)
				.withPropertyValues("delay-queue.topics.orders.partitions=3", "delay-queue.producer.send-timeout=3s")
				.run((context) -> {
					DelayQueueTemplate template = context.getBean(DelayQueueTemplate.class);
					RedisMessageStore store = context.getBean(RedisMessageStore.class);
					template.send(order("warm-up"));
					proxy.latency(Duration.ofMillis(5));
					ExecutorService threads = Executors.newFixedThreadPool(4);
					List<Long> slowest = new CopyOnWriteArrayList<>();
					try {
						List<Future<?>> rounds = new ArrayList<>();
						for (int t = 0; t < 4; t++) {
							int thread = t;
							rounds.add(threads.submit(() -> {
								for (int i = 0; i < 40; i++) {
									if (thread == 0 && i % 10 == 5) {
										proxy.dropNextReplyTo(FaultyRedisProxy.named("EVALSHA"));
									}
									String id = "o-" + thread + "-" + i;
									long start = System.nanoTime();
									CompletableFuture<SendResult> sent = template.sendAsync(order(id));
									template.sendAsync(order("other-" + thread + "-" + i));
									// A replacing send of the same id behind it, then the
									// cancel.
									template.sendAsync(DelayMessage.builder("orders", "replaced " + id)
										.id(id)
										.replaceIfPending()
										.delay(Duration.ofHours(2))
										.build());
									template.cancel("orders", id);
									sent.join();
									slowest.add(System.nanoTime() - start);
								}
								return null;
							}));
						}
						for (Future<?> round : rounds) {
							round.get(60, TimeUnit.SECONDS);
						}
					}
					finally {
						threads.shutdownNow();
					}
					for (int t = 0; t < 4; t++) {
						for (int i = 0; i < 40; i++) {
							String id = "o-" + t + "-" + i;
							assertThat(store.inspect("orders", id, 100)).as(id).isNull();
						}
					}
					assertThat(slowest.stream().mapToLong(Long::longValue).max().getAsLong()).as("longest round, ns")
						.isLessThan(Duration.ofSeconds(7).toNanos());
				});
		}
	}

	@Test
	void aPartitionCountKeyOfTheWrongTypeIsMovedAsideByTheListenerAndTheTopicGoesOn() {
		QueueContexts.runner(QueueContexts.uniquePrefix()).withUserConfiguration(Orders.class).run((context) -> {
			DelayQueueTemplate template = context.getBean(DelayQueueTemplate.class);
			RedisMessageStore store = context.getBean(RedisMessageStore.class);
			StringRedisTemplate redis = context.getBean(StringRedisTemplate.class);
			Orders orders = context.getBean(Orders.class);
			template.send(DelayMessage.builder("orders", "order before").id("before").build());
			await().atMost(WAIT).until(() -> orders.handled.contains("order before"));
			String countKey = store.keys("orders").partitionCount();
			redis.opsForHash().put(countKey, "written", "by something else");
			// Sends fail (WRONGTYPE) until the listener's broker moves the key aside.
			await().atMost(WAIT).ignoreExceptions().untilAsserted(() -> {
				template.send(DelayMessage.builder("orders", "order after").id("after").build());
				assertThat(orders.handled).contains("order after");
			});
			assertThat(redis.keys(countKey + ":quarantined:*")).hasSize(1);
		});
	}

	@Test
	void aPartitionCountKeyHoldingNoNumberFailsCallsByIdNamingTheKeyAndWhatItHolds() {
		QueueContexts.runner(QueueContexts.uniquePrefix()).run((context) -> {
			DelayQueueTemplate template = context.getBean(DelayQueueTemplate.class);
			RedisMessageStore store = context.getBean(RedisMessageStore.class);
			StringRedisTemplate redis = context.getBean(StringRedisTemplate.class);
			template.send(order("before"));
			String countKey = store.keys("orders").partitionCount();
			redis.opsForValue().set(countKey, "garbage");
			// It was a NumberFormatException, from send and cancel alike.
			assertThatThrownBy(() -> template.send(order("after"))).isInstanceOf(SendFailedException.class)
				.cause()
				.isInstanceOf(PartitionCountException.class)
				.hasMessageContainingAll(countKey, "'garbage'");
			assertThatExceptionOfType(PartitionCountException.class)
				.isThrownBy(() -> template.cancel("orders", "before"))
				.withMessageContainingAll(countKey, "'garbage'");
			redis.delete(countKey);
			assertThat(template.cancel("orders", "before")).isTrue();
		});
	}

	@Test
	void aPartitionsCountMarkerHoldingNoNumberIsRepairedByTheNextCallItRefuses() {
		QueueContexts.runner(QueueContexts.uniquePrefix())
			.withPropertyValues("delay-queue.topics.orders.partitions=3")
			.run((context) -> {
				DelayQueueTemplate template = context.getBean(DelayQueueTemplate.class);
				RedisMessageStore store = context.getBean(RedisMessageStore.class);
				StringRedisTemplate redis = context.getBean(StringRedisTemplate.class);
				template.send(order("warm-up"));
				for (String partition : TopicPartitions.names("orders", 3).subList(1, 3)) {
					redis.opsForValue().set(store.keys(partition).partitionCount(), "garbage");
				}
				List<DelayMessage> messages = new ArrayList<>();
				for (int i = 0; i < 30; i++) {
					messages.add(order("o-" + i));
				}
				assertThat(template.sendAll(messages)).noneMatch(SendResult::duplicate);
				for (int i = 0; i < 30; i++) {
					assertThat(store.inspect("orders", "o-" + i, 100)).as("o-%d", i).isNotNull();
				}
			});
	}

	@Test
	void stoppingWhileSendsAreUnansweredEndsWithinTheSendTimeoutAndFailsEachSendNamingItsIds() throws Exception {
		TestRedis redis = TestRedis.shared();
		try (FaultyRedisProxy proxy = FaultyRedisProxy.start(redis.host(), redis.port())) {
			QueueContexts.runner(QueueContexts.uniquePrefix(), proxy)
				.withPropertyValues("delay-queue.producer.send-timeout=2s")
				.run((context) -> {
					DelayQueueTemplate template = context.getBean(DelayQueueTemplate.class);
					template.send(order("warm-up"));
					proxy.pause();
					try {
						List<CompletableFuture<SendResult>> sent = new ArrayList<>();
						for (int i = 0; i < 10; i++) {
							sent.add(template.sendAsync(order("p-" + i)));
						}
						// The first send to a topic goes through the lane (its count is
						// read).
						CompletableFuture<SendResult> fresh = template
							.sendAsync(DelayMessage.builder("fresh", "first").id("f-1").build());
						long start = System.nanoTime();
						// Whether it waited for the send of p-9 to time out or ran out of
						// time itself, it
						// names the id (it said only "Redis did not answer within 47ms"
						// when the
						// earlier send's failure left it 47 ms).
						assertThatThrownBy(() -> template.cancel("orders", "p-9"))
							.isInstanceOf(QueryTimeoutException.class)
							.hasMessageContaining("p-9");
						context.close();
						assertThat(Duration.ofNanos(System.nanoTime() - start)).as("cancel and stop")
							.isLessThan(Duration.ofSeconds(8));
						for (int i = 0; i < 10; i++) {
							assertThat(sent.get(i)).failsWithin(Duration.ofSeconds(3))
								.withThrowableOfType(ExecutionException.class)
								.withCauseInstanceOf(SendFailedException.class)
								.withMessageContaining("p-" + i);
						}
						assertThat(fresh).failsWithin(Duration.ofSeconds(3))
							.withThrowableOfType(ExecutionException.class)
							.withCauseInstanceOf(SendFailedException.class)
							.withMessageContaining("f-1");
					}
					finally {
						proxy.resume();
					}
				});
		}
	}

	@Test
	void aTransactionOfFiveThousandSendsCommitsWithinTheSendTimeoutToARedisTwentyMillisecondsAway() throws Exception {
		TestRedis redis = TestRedis.shared();
		try (FaultyRedisProxy proxy = FaultyRedisProxy.start(redis.host(), redis.port())) {
			QueueContexts.runner(QueueContexts.uniquePrefix(), proxy)
				.withPropertyValues("delay-queue.topics.orders.partitions=3", "delay-queue.producer.send-timeout=2s")
				.run((context) -> {
					DelayQueueTemplate template = context.getBean(DelayQueueTemplate.class);
					RedisMessageStore store = context.getBean(RedisMessageStore.class);
					template.send(order("warm-up"));
					proxy.latency(Duration.ofMillis(20));
					List<DelayMessage> messages = new ArrayList<>();
					for (int i = 0; i < 5000; i++) {
						messages.add(order("t-" + i));
					}
					new TransactionTemplate(new ThreadTransactions()).executeWithoutResult((status) -> {
						template.sendAll(messages);
						// Dropped, then sent again: stored once at commit.
						assertThat(template.cancel("orders", "t-17")).isTrue();
						template.send(order("t-17"));
						assertThat(template.reschedule("orders", "t-18", Duration.ofDays(2))).isTrue();
					});
					proxy.latency(Duration.ZERO);
					assertThat(store.stats("orders").scheduled()).isEqualTo(5001);
					assertThat(store.inspect("orders", "t-18", 100).score())
						.isGreaterThan(System.currentTimeMillis() + Duration.ofDays(1).toMillis());
				});
		}
	}

	@Test
	void aDeduplicatedSendWhoseReplyIsLostIsStoredAndHandledOnceAndItsIdThenRemembered() throws Exception {
		TestRedis redis = TestRedis.shared();
		String prefix = QueueContexts.uniquePrefix();
		try (FaultyRedisProxy proxy = FaultyRedisProxy.start(redis.host(), redis.port())) {
			QueueContexts.runner(prefix).withUserConfiguration(Payments.class).run((listening) -> {
				Payments payments = listening.getBean(Payments.class);
				QueueContexts.runner(prefix, proxy).run((sending) -> {
					DelayQueueTemplate template = sending.getBean(DelayQueueTemplate.class);
					template.send(DelayMessage.builder("warm", "up").build());
					for (int i = 0; i < 10; i++) {
						proxy.dropNextReplyTo(FaultyRedisProxy.named("EVALSHA", "EVAL"));
						String id = "pay-" + i;
						template.send(DelayMessage.builder("payments", id)
							.id(id)
							.deduplicateFor(Duration.ofHours(1))
							.build());
						await().atMost(WAIT).until(() -> payments.handled.contains(id));
						await().atMost(WAIT)
							.untilAsserted(() -> assertThat(template
								.send(DelayMessage.builder("payments", id)
									.id(id)
									.deduplicateFor(Duration.ofHours(1))
									.build())
								.duplicate()).isTrue());
					}
					Thread.sleep(500);
					assertThat(payments.handled).hasSize(10).doesNotHaveDuplicates();
				});
			});
		}
	}

	private static DelayMessage order(String id) {
		return DelayMessage.builder("orders", "order " + id).id(id).delay(Duration.ofHours(1)).build();
	}

	@Configuration(proxyBeanMethods = false)
	static class Payments {

		final List<String> handled = new CopyOnWriteArrayList<>();

		@DelayListener(topic = "payments")
		void on(String id) {
			this.handled.add(id);
		}

	}

	/** Transactions with synchronization and nothing to commit, one per thread. */
	static class ThreadTransactions extends AbstractPlatformTransactionManager {

		private final ThreadLocal<Object> current = new ThreadLocal<>();

		@Override
		protected Object doGetTransaction() {
			return new Object[] { this.current.get() };
		}

		@Override
		protected boolean isExistingTransaction(Object transaction) {
			return ((Object[]) transaction)[0] != null;
		}

		@Override
		protected void doBegin(Object transaction, TransactionDefinition definition) {
			((Object[]) transaction)[0] = new Object();
			this.current.set(((Object[]) transaction)[0]);
		}

		@Override
		protected void doCommit(DefaultTransactionStatus status) {
		}

		@Override
		protected void doRollback(DefaultTransactionStatus status) {
		}

		@Override
		protected void doCleanupAfterCompletion(Object transaction) {
			this.current.remove();
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class Orders {

		final List<String> handled = new CopyOnWriteArrayList<>();

		@DelayListener(topic = "orders")
		void on(String payload) {
			this.handled.add(payload);
		}

	}

}

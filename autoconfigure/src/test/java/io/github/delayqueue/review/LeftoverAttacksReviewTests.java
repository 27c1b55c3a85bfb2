package io.github.delayqueue.review;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.delayqueue.listener.DelayListener;
import io.github.delayqueue.listener.Delivery;
import io.github.delayqueue.producer.DelayMessage;
import io.github.delayqueue.producer.DelayQueueTemplate;
import io.github.delayqueue.store.ReplayResult;
import io.github.delayqueue.store.TopicStats;
import io.github.delayqueue.store.redis.RedisMessageStore;
import io.github.delayqueue.test.redis.FaultyRedisProxy;
import io.github.delayqueue.test.redis.TestRedis;
import io.github.delayqueue.testsupport.QueueContexts;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Review of issue 34, leftover attacks whose tests were lost: a dead-letter call sent
 * again after its reply was lost, Redis' script cache flushed under load, and the
 * priorities of replayed dead letters. (Leftover (a), a send refused during a partition
 * count change behind a slow proxy, is {@code PartitionRefusalLatencyReviewTests} in
 * core.)
 */
@ExtendWith(OutputCaptureExtension.class)
class LeftoverAttacksReviewTests {

	private static final Duration WAIT = Duration.ofSeconds(20);

	/**
	 * The dead-letter call's reply comes after the send timeout, so the settlement sends
	 * it again (same lease token): Redis has buried the message already, and the second
	 * run finds no lease. The message is dead once, and its dead-letter listener gets it
	 * once.
	 */
	@Test
	void aDeadLetterCallSentAgainAfterItsReplyTimedOutBuriesTheMessageOnceAndItsListenerGetsItOnce(
			CapturedOutput output) {
		String prefix = QueueContexts.uniquePrefix();
		TestRedis redis = TestRedis.shared();
		Dead dead = new Dead();
		try (FaultyRedisProxy proxy = FaultyRedisProxy.start(redis.host(), redis.port())) {
			QueueContexts.runner(prefix, proxy)
				.withUserConfiguration(Refused.class)
				.withBean(Dead.class, () -> dead)
				.withPropertyValues("delay-queue.producer.send-timeout=300ms", "delay-queue.broker.max-sleep=200ms")
				.run((context) -> {
					// The dead-letter call goes in full (EVAL).
					FaultyRedisProxy.Fault held = proxy.delayNextReplyToCommand(
							FaultyRedisProxy.withArgumentContaining("EVAL", Refused.ERROR), Duration.ofMillis(900));
					context.getBean(DelayQueueTemplate.class)
						.send(DelayMessage.builder("orders", "order").id("o-1").build());
					assertThat(held.awaitFired(WAIT)).as("the dead-letter call's reply held").isTrue();
					RedisMessageStore store = context.getBean(RedisMessageStore.class);
					await().atMost(WAIT).untilAsserted(() -> {
						assertThat(dead.deliveries).containsExactly("o-1");
						TopicStats stats = store.stats("orders");
						assertThat(stats.dead()).as("dead letters").isOne();
						assertThat(stats.inFlight() + stats.ready() + stats.scheduled()).as("pending").isZero();
					});
					// Sent again: the copy for the dead-letter listener is not queued
					// twice.
					await().during(Duration.ofSeconds(1))
						.atMost(Duration.ofSeconds(3))
						.until(() -> dead.deliveries.size() == 1);
					assertThat(context.getBean(Refused.class).attempts).hasValue(1);
					// The call was sent again and found the message buried by its first
					// run
					// (the log then says it was not dead-lettered, though it was).
					assertThat(output).contains("message o-1 could not be dead-lettered");
				});
		}
	}

	/**
	 * The dead-letter call's reply is lost and the connection closed: Lettuce reconnects
	 * and sends the call again, which finds the message buried already.
	 */
	@Test
	void aDeadLetterCallWhoseReplyIsDroppedAndReplayedBuriesTheMessageOnceAndItsListenerGetsItOnce() {
		String prefix = QueueContexts.uniquePrefix();
		TestRedis redis = TestRedis.shared();
		Dead dead = new Dead();
		try (FaultyRedisProxy proxy = FaultyRedisProxy.start(redis.host(), redis.port())) {
			QueueContexts.runner(prefix, proxy)
				.withUserConfiguration(Refused.class)
				.withBean(Dead.class, () -> dead)
				.withPropertyValues("delay-queue.broker.max-sleep=200ms")
				.run((context) -> {
					Refused refused = context.getBean(Refused.class);
					// Armed by the handler as it fails: the next script call in full is
					// the dead-letter call (claims and promotions go by digest).
					refused.onFailure = () -> refused.fault = proxy.dropNextReplyTo(FaultyRedisProxy.named("EVAL"));
					context.getBean(DelayQueueTemplate.class)
						.send(DelayMessage.builder("orders", "order").id("o-1").build());
					RedisMessageStore store = context.getBean(RedisMessageStore.class);
					await().atMost(WAIT).untilAsserted(() -> {
						assertThat(refused.fault).isNotNull();
						assertThat(refused.fault.hasFired()).isTrue();
						assertThat(dead.deliveries).containsExactly("o-1");
						TopicStats stats = store.stats("orders");
						assertThat(stats.dead()).as("dead letters").isOne();
						assertThat(stats.inFlight() + stats.ready() + stats.scheduled()).as("pending").isZero();
					});
					await().during(Duration.ofSeconds(1))
						.atMost(Duration.ofSeconds(3))
						.until(() -> dead.deliveries.size() == 1);
					assertThat(refused.attempts).hasValue(1);
				});
		}
	}

	/**
	 * {@code SCRIPT FLUSH} four times while a sender sends batches and a listener
	 * consumes: every call that meets {@code NOSCRIPT} sends its script again, no send
	 * fails, every message is delivered once and none dies.
	 */
	@Test
	void scriptFlushesWhileMessagesAreSentAndConsumedLoseNothingAndFailNoSend() throws Exception {
		String prefix = QueueContexts.uniquePrefix();
		Counted counted = new Counted();
		QueueContexts.runner(prefix)
			.withBean(Counted.class, () -> counted)
			.withPropertyValues("delay-queue.topics.flushed.concurrency=4", "delay-queue.broker.max-sleep=200ms")
			.run((context) -> {
				DelayQueueTemplate template = context.getBean(DelayQueueTemplate.class);
				StringRedisTemplate redis = context.getBean(StringRedisTemplate.class);
				Queue<Throwable> failures = new ConcurrentLinkedQueue<>();
				List<String> ids = new CopyOnWriteArrayList<>();
				Thread sender = new Thread(() -> {
					for (int batch = 0; batch < 20; batch++) {
						List<DelayMessage> messages = new ArrayList<>();
						for (int i = 0; i < 10; i++) {
							String id = "f-" + batch + "-" + i;
							messages.add(DelayMessage.builder("flushed", id)
								.id(id)
								.delay(Duration.ofMillis(20L * (i % 3)))
								.priority(i % 2)
								.build());
							ids.add(id);
						}
						try {
							template.sendAll(messages);
							Thread.sleep(20);
						}
						catch (InterruptedException ex) {
							Thread.currentThread().interrupt();
							return;
						}
						catch (RuntimeException ex) {
							failures.add(ex);
						}
					}
				});
				sender.start();
				for (int i = 0; i < 4; i++) {
					await().atMost(WAIT).until(() -> !ids.isEmpty());
					redis.execute((RedisCallback<Object>) (connection) -> {
						connection.scriptingCommands().scriptFlush();
						return null;
					});
					Thread.sleep(60);
				}
				sender.join(WAIT.toMillis());
				assertThat(failures).as("sends that failed").isEmpty();
				assertThat(ids).hasSize(200);
				await().atMost(WAIT).until(() -> counted.handled.size() == ids.size());
				assertThat(counted.handled.keySet()).containsExactlyInAnyOrderElementsOf(ids);
				assertThat(counted.handled).allSatisfy((id, count) -> assertThat(count).as(id).hasValue(1));
				TopicStats stats = context.getBean(RedisMessageStore.class).stats("flushed");
				assertThat(stats.dead()).as("dead letters").isZero();
			});
	}

	/**
	 * Dead letters of priorities 0, 1, 5 and 9 (dead in that order) replayed together: a
	 * listener of concurrency 1 that claims one at a time gets them highest priority
	 * first, each with its priority.
	 */
	@Test
	void replayedDeadLettersAreDeliveredHighestPriorityFirstWithTheirPriorities() {
		String prefix = QueueContexts.uniquePrefix();
		List<Integer> priorities = List.of(0, 1, 5, 9);
		QueueContexts.runner(prefix)
			.withUserConfiguration(RefusedPriorities.class)
			.withPropertyValues("delay-queue.broker.max-sleep=200ms")
			.run((context) -> {
				DelayQueueTemplate template = context.getBean(DelayQueueTemplate.class);
				RedisMessageStore store = context.getBean(RedisMessageStore.class);
				for (int priority : priorities) {
					template.send(DelayMessage.builder("ranked", "x").id("p" + priority).priority(priority).build());
					long dead = priorities.indexOf(priority) + 1;
					await().atMost(WAIT).until(() -> store.stats("ranked").dead() == dead);
				}
			});
		Ranked ranked = new Ranked();
		QueueContexts.runner(prefix).run((context) -> {
			ReplayResult replayed = context.getBean(RedisMessageStore.class)
				.replayDead("ranked", List.of("p0", "p1", "p5", "p9"));
			assertThat(replayed.replayed()).containsExactlyInAnyOrder("p0", "p1", "p5", "p9");
		});
		QueueContexts.runner(prefix)
			.withBean(Ranked.class, () -> ranked)
			.withPropertyValues("delay-queue.listener.prefetch=0", "delay-queue.topics.ranked.concurrency=1")
			.run((context) -> await().atMost(WAIT).until(() -> ranked.order.size() == 4));
		assertThat(ranked.order).containsExactly("p9:9", "p5:5", "p1:1", "p0:0");
	}

	@Configuration(proxyBeanMethods = false)
	static class Refused {

		static final String ERROR = "refused-for-review-0xdead";

		final AtomicInteger attempts = new AtomicInteger();

		volatile Runnable onFailure = () -> {
		};

		volatile FaultyRedisProxy.Fault fault;

		@DelayListener(topic = "orders", maxAttempts = 1)
		void on(String payload) {
			this.attempts.incrementAndGet();
			this.onFailure.run();
			throw new IllegalStateException(ERROR);
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class Dead {

		final List<String> deliveries = new CopyOnWriteArrayList<>();

		@DelayListener(topic = "orders", deadLetters = true)
		void on(Delivery<String> delivery) {
			this.deliveries.add(delivery.id());
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class Counted {

		final Map<String, AtomicInteger> handled = new ConcurrentHashMap<>();

		@DelayListener(topic = "flushed")
		void on(Delivery<String> delivery) {
			this.handled.computeIfAbsent(delivery.id(), (id) -> new AtomicInteger()).incrementAndGet();
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class RefusedPriorities {

		@DelayListener(topic = "ranked", maxAttempts = 1)
		void on(String payload) {
			throw new IllegalStateException("refused");
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class Ranked {

		final List<String> order = new CopyOnWriteArrayList<>();

		@DelayListener(topic = "ranked")
		void on(Delivery<String> delivery) {
			this.order.add(delivery.id() + ":" + delivery.priority());
		}

	}

}

package io.github.delayqueue.runtime.consumer;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;

import io.github.delayqueue.producer.DelayMessage;
import io.github.delayqueue.producer.DelayQueueTemplate;
import io.github.delayqueue.listener.DelayListener;
import io.github.delayqueue.store.redis.RedisMessageStore;
import io.github.delayqueue.store.redis.TopicKeys;
import io.github.delayqueue.test.redis.FaultyRedisProxy;
import io.github.delayqueue.test.redis.TestRedis;
import io.github.delayqueue.testsupport.QueueContexts;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Messages of one partition reach a listener of concurrency 1 in due order, and in send
 * order within the same due time, however late the replies of the claims that brought
 * them came.
 */
class DispatchOrderTests {

	@Test
	void messagesDueTogetherComeInSendOrderWhenTheFirstOnesClaimReplyWasLate() {
		TestRedis redis = TestRedis.shared();
		try (FaultyRedisProxy proxy = FaultyRedisProxy.start(redis.host(), redis.port())) {
			String prefix = QueueContexts.uniquePrefix();
			QueueContexts.runner(prefix, proxy)
				.withBean(SequenceListener.class)
				.withPropertyValues("delay-queue.broker.lookahead=10s", "delay-queue.listener.idle-check-interval=1m")
				.run((context) -> {
					DelayQueueTemplate template = context.getBean(DelayQueueTemplate.class);
					StringRedisTemplate commands = context.getBean(StringRedisTemplate.class);
					TopicKeys keys = context.getBean(RedisMessageStore.class).keys("sequence");
					SequenceListener listener = context.getBean(SequenceListener.class);
					// The listener's first claim is answered.
					await().pollDelay(Duration.ofSeconds(1)).atMost(Duration.ofSeconds(5)).until(() -> true);
					Instant dueAt = Instant.now().plusMillis(2000);
					FaultyRedisProxy.Fault late = proxy.delayNextReplyToCommand(
							FaultyRedisProxy.withArgumentContaining("EVALSHA", prefix + ":{sequence}:c:"),
							Duration.ofMillis(800));
					String first = template.send(DelayMessage.builder("sequence", "0").dueAt(dueAt).build()).id();
					assertThat(late.awaitFired(Duration.ofSeconds(5))).isTrue();
					await().atMost(Duration.ofSeconds(5))
						.until(() -> commands.opsForZSet().score(keys.inFlight(), first) != null);
					// The late reply was handled: the next claim takes the second
					// message.
					await().pollDelay(Duration.ofMillis(1000)).atMost(Duration.ofSeconds(5)).until(() -> true);
					String second = template.send(DelayMessage.builder("sequence", "1").dueAt(dueAt).build()).id();
					await().atMost(Duration.ofSeconds(5))
						.until(() -> commands.opsForZSet().score(keys.inFlight(), second) != null);
					assertThat(listener.received).isEmpty();
					await().atMost(Duration.ofSeconds(10)).until(() -> listener.received.size() == 2);
					assertThat(listener.received).containsExactly("0", "1");
				});
		}
	}

	@Test
	void aMessageHeldAfterALateClaimReplyComesBeforeOneDueTogetherClaimedWhenDue() {
		TestRedis redis = TestRedis.shared();
		try (FaultyRedisProxy proxy = FaultyRedisProxy.start(redis.host(), redis.port())) {
			String prefix = QueueContexts.uniquePrefix();
			QueueContexts.runner(prefix, proxy)
				.withBean(SequenceListener.class)
				.withPropertyValues("delay-queue.broker.lookahead=10s", "delay-queue.listener.idle-check-interval=1m")
				.run((context) -> {
					DelayQueueTemplate template = context.getBean(DelayQueueTemplate.class);
					StringRedisTemplate commands = context.getBean(StringRedisTemplate.class);
					TopicKeys keys = context.getBean(RedisMessageStore.class).keys("sequence");
					SequenceListener listener = context.getBean(SequenceListener.class);
					await().pollDelay(Duration.ofSeconds(1)).atMost(Duration.ofSeconds(5)).until(() -> true);
					Instant dueAt = Instant.now().plusMillis(500);
					// Held until about two seconds after its due time by the estimate of
					// its claim, whose reply came that late.
					FaultyRedisProxy.Fault late = proxy.delayNextReplyToCommand(
							FaultyRedisProxy.withArgumentContaining("EVALSHA", prefix + ":{sequence}:c:"),
							Duration.ofMillis(2000));
					template.send(DelayMessage.builder("sequence", "0").dueAt(dueAt).build());
					assertThat(late.awaitFired(Duration.ofSeconds(5))).isTrue();
					// Sent while that reply is on its way (every reply on the connection
					// waits for it), and due when claimed right after it: handed over at
					// once, yet after the one held.
					await().pollDelay(Duration.ofMillis(1000)).atMost(Duration.ofSeconds(5)).until(() -> true);
					template.send(DelayMessage.builder("sequence", "1").dueAt(dueAt).build());
					await().atMost(Duration.ofSeconds(10)).until(() -> listener.received.size() == 2);
					assertThat(listener.received).containsExactly("0", "1");
				});
		}
	}

	@Test
	void messagesDueTogetherComeInSendOrderRoundAfterRoundWhileRedisLatencyJitters() throws Exception {
		TestRedis redis = TestRedis.shared();
		try (FaultyRedisProxy proxy = FaultyRedisProxy.start(redis.host(), redis.port())) {
			AtomicBoolean jittering = new AtomicBoolean(true);
			Thread jitter = new Thread(() -> {
				while (jittering.get()) {
					proxy.latency(Duration.ofMillis(ThreadLocalRandom.current().nextInt(12)));
					LockSupport.parkNanos(Duration.ofMillis(3).toNanos());
				}
			});
			jitter.setDaemon(true);
			jitter.start();
			try {
				QueueContexts.runner(QueueContexts.uniquePrefix(), proxy)
					.withBean(SequenceListener.class)
					.withPropertyValues("delay-queue.broker.lookahead=300ms", "delay-queue.broker.batch-size=7")
					.run((context) -> {
						DelayQueueTemplate template = context.getBean(DelayQueueTemplate.class);
						SequenceListener listener = context.getBean(SequenceListener.class);
						for (int round = 0; round < 6; round++) {
							listener.received.clear();
							Instant dueAt = Instant.now().plusMillis(1000);
							List<DelayMessage> messages = new ArrayList<>();
							for (int i = 0; i < 60; i++) {
								messages
									.add(DelayMessage.builder("sequence", Integer.toString(i)).dueAt(dueAt).build());
							}
							template.sendAll(messages.subList(0, 20));
							for (DelayMessage message : messages.subList(20, 60)) {
								template.send(message);
							}
							await().atMost(Duration.ofSeconds(15)).until(() -> listener.received.size() == 60);
							assertThat(listener.received).as("round " + round)
								.isSortedAccordingTo(Comparator.comparingInt(Integer::parseInt));
						}
					});
			}
			finally {
				jittering.set(false);
				jitter.join();
			}
		}
	}

	static class SequenceListener {

		final List<String> received = new CopyOnWriteArrayList<>();

		@DelayListener(topic = "sequence")
		void on(String payload) {
			this.received.add(payload);
		}

	}

}

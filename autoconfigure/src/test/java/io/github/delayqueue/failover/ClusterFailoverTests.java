package io.github.delayqueue.failover;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import io.github.delayqueue.core.DelayMessage;
import io.github.delayqueue.core.DelayQueueTemplate;
import io.github.delayqueue.core.SendFailedException;
import io.github.delayqueue.listener.DelayListener;
import io.github.delayqueue.listener.Delivery;
import io.github.delayqueue.store.RedisMessageStore;
import io.github.delayqueue.store.TopicStats;
import io.github.delayqueue.test.redis.RedisServerProcess;
import io.github.delayqueue.test.redis.TestRedis;
import io.github.delayqueue.test.redis.TestRedisCluster;
import io.github.delayqueue.testsupport.QueueContexts;
import io.lettuce.core.cluster.SlotHash;
import org.junit.jupiter.api.Test;

import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * A Cluster of three primaries with a replica each; three busy topics, one on each
 * primary; the primary of {@code orders} is killed with SIGKILL mid-run. Its replica
 * takes over, Lettuce follows (adaptive topology refresh, as the README advises), and
 * every topic goes on: the other two without a pause, {@code orders} once its replica is
 * promoted. Nothing is stuck; the test reports lost and duplicated messages and the time
 * until a message sent to {@code orders} after the kill was delivered.
 */
class ClusterFailoverTests {

	private static final List<String> TOPICS = List.of("orders", "payments", "reminders");

	private static final Duration RUN = Duration.ofSeconds(8);

	private static final Duration KILL_AFTER = Duration.ofSeconds(2);

	@Test
	void everyTopicGoesOnAfterAPrimaryIsKilledAndNothingIsStuck() {
		assumeTrue(TestRedis.canStartPrivateServer(), "no redis-server binary here");
		try (TestRedisCluster cluster = TestRedisCluster.start(3, 1, Duration.ofMillis(1000))) {
			RedisServerProcess ordersPrimary = cluster.primaryOf(SlotHash.getSlot("orders"));
			QueueContexts.runner(QueueContexts.uniquePrefix(), cluster.springProperties())
				.withPropertyValues("delay-queue.producer.send-timeout=1s",
						"delay-queue.listener.visibility-timeout=3s",
						"spring.data.redis.lettuce.cluster.refresh.adaptive=true",
						"spring.data.redis.lettuce.cluster.refresh.period=1s")
				.withUserConfiguration(Listener.class)
				.run((context) -> {
					DelayQueueTemplate queue = context.getBean(DelayQueueTemplate.class);
					Listener listener = context.getBean(Listener.class);
					Set<String> acknowledged = ConcurrentHashMap.newKeySet();
					AtomicInteger failed = new AtomicInteger();
					long start = System.nanoTime();
					int sequence = 0;
					while (System.nanoTime() - start < RUN.toNanos()) {
						if (listener.killedAtNanos == 0 && System.nanoTime() - start > KILL_AFTER.toNanos()) {
							listener.firstSequenceAfterKill = sequence;
							listener.killedAtNanos = System.nanoTime();
							ordersPrimary.stop();
						}
						String topic = TOPICS.get(sequence % TOPICS.size());
						String id = topic + "-" + sequence++;
						try {
							queue.send(DelayMessage.builder(topic, id).id(id).delay(Duration.ofMillis(100)).build());
							acknowledged.add(id);
						}
						catch (SendFailedException ex) {
							failed.incrementAndGet();
						}
						sleep(5);
					}
					cluster.awaitHealthy(Duration.ofSeconds(30));
					RedisMessageStore store = context.getBean(RedisMessageStore.class);
					await().atMost(Duration.ofSeconds(40))
						.until(() -> TOPICS.stream().allMatch((topic) -> isSettled(store.stats(topic))));
					long lost = acknowledged.stream().filter((id) -> !listener.deliveries.containsKey(id)).count();
					long duplicated = listener.deliveries.values().stream().filter((count) -> count.get() > 1).count();
					System.out.printf(
							"FAILOVER cluster: sent %d, acknowledged %d, failed %d, delivered %d, lost %d, duplicated %d, "
									+ "first delivery of an orders message sent after the kill %d ms after it%n",
							sequence, acknowledged.size(), failed.get(), listener.deliveries.size(), lost, duplicated,
							Duration.ofNanos(listener.firstOrdersAfterKill.get() - listener.killedAtNanos).toMillis());
					assertThat(listener.firstOrdersAfterKill.get()).as("an orders message sent after the kill")
						.isNotZero();
					assertThat(lost).as("acknowledged messages lost (asynchronous replication)")
						.isLessThan(acknowledged.size() / 10);
				});
		}
	}

	private static boolean isSettled(TopicStats stats) {
		return stats.scheduled() == 0 && stats.ready() == 0 && stats.inFlight() == 0;
	}

	private static void sleep(long millis) {
		try {
			Thread.sleep(millis);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	@Configuration(proxyBeanMethods = false)
	static class Listener {

		final Map<String, AtomicInteger> deliveries = new ConcurrentHashMap<>();

		final AtomicLong firstOrdersAfterKill = new AtomicLong();

		volatile long killedAtNanos;

		volatile int firstSequenceAfterKill = Integer.MAX_VALUE;

		@DelayListener(topic = "orders")
		void onOrder(Delivery<String> delivery) {
			record(delivery);
			if (sequence(delivery) >= this.firstSequenceAfterKill) {
				this.firstOrdersAfterKill.compareAndSet(0, System.nanoTime());
			}
		}

		@DelayListener(topic = "payments")
		void onPayment(Delivery<String> delivery) {
			record(delivery);
		}

		@DelayListener(topic = "reminders")
		void onReminder(Delivery<String> delivery) {
			record(delivery);
		}

		private void record(Delivery<String> delivery) {
			this.deliveries.computeIfAbsent(delivery.id(), (id) -> new AtomicInteger()).incrementAndGet();
		}

		private static int sequence(Delivery<String> delivery) {
			return Integer.parseInt(delivery.id().substring(delivery.id().indexOf('-') + 1));
		}

	}

}

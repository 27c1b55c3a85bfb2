package io.github.delayqueue.failover;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import io.github.delayqueue.producer.DelayMessage;
import io.github.delayqueue.producer.DelayQueueTemplate;
import io.github.delayqueue.producer.SendFailedException;
import io.github.delayqueue.listener.DelayListener;
import io.github.delayqueue.listener.Delivery;
import io.github.delayqueue.store.TopicPartitions;
import io.github.delayqueue.store.TopicStats;
import io.github.delayqueue.store.redis.RedisMessageStore;
import io.github.delayqueue.test.redis.RedisServerProcess;
import io.github.delayqueue.test.redis.TestRedis;
import io.github.delayqueue.test.redis.TestRedisCluster;
import io.github.delayqueue.testsupport.QueueContexts;
import io.github.delayqueue.testsupport.RedisVersionDependent;
import io.lettuce.core.cluster.SlotHash;
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import org.springframework.context.annotation.Configuration;
import org.springframework.dao.QueryTimeoutException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * A Cluster of three primaries with a replica each; three busy topics, one on each
 * primary, {@code orders} spread over three partitions (one on each primary); the primary
 * of {@code orders} (its partition 0) is killed with SIGKILL mid-run. Its replica takes
 * over, Lettuce follows (adaptive topology refresh, as the README advises), and every
 * topic goes on: the other topics and partitions without a pause, partition 0 of
 * {@code orders} once its replica is promoted. Nothing is stuck; the test reports lost
 * and duplicated messages and the time until a message sent to partition 0 after the kill
 * was delivered; once all is delivered, a message sent to partition 0 comes at once,
 * woken by its signal on the promoted replica.
 */
@RedisVersionDependent
@Tag("failover")
@Tag("cluster")
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
				.withPropertyValues("delay-queue.producer.send-timeout=1s", "delay-queue.topics.orders.partitions=3",
						"delay-queue.listener.visibility-timeout=3s",
						"spring.data.redis.lettuce.cluster.refresh.adaptive=true",
						"spring.data.redis.lettuce.cluster.refresh.period=1s", "delay-queue.broker.max-sleep=30s",
						"delay-queue.listener.idle-check-interval=30s")
				.withUserConfiguration(Listener.class)
				.run((context) -> {
					DelayQueueTemplate queue = context.getBean(DelayQueueTemplate.class);
					Listener listener = context.getBean(Listener.class);
					Set<String> acknowledged = ConcurrentHashMap.newKeySet();
					int failed = 0;
					long start = System.nanoTime();
					int sequence = 0;
					while (System.nanoTime() - start < RUN.toNanos()) {
						if (!listener.all.isKilled() && System.nanoTime() - start > KILL_AFTER.toNanos()) {
							listener.all.killed(sequence);
							listener.orders.killed(sequence);
							ordersPrimary.stop();
						}
						String topic = TOPICS.get(sequence % TOPICS.size());
						String id = topic + "-" + sequence++;
						try {
							queue.send(DelayMessage.builder(topic, id).id(id).delay(Duration.ofMillis(100)).build());
							acknowledged.add(id);
						}
						catch (SendFailedException ex) {
							failed++;
						}
						Deliveries.pause(5);
					}
					cluster.awaitHealthy(Duration.ofSeconds(30));
					RedisMessageStore store = context.getBean(RedisMessageStore.class);
					// Healthy, but the client may send a call to the killed
					// primary until its next topology refresh: it times out. A
					// wake-up published while a subscription was moving is not
					// heard: the broker then promotes after max-sleep and a
					// listener claims after its idle check, 30 s each.
					Map<String, Object> lastSeen = new ConcurrentHashMap<>();
					try {
						await().atMost(Duration.ofSeconds(75))
							.ignoreExceptionsInstanceOf(QueryTimeoutException.class)
							.until(() -> TOPICS.stream().allMatch((topic) -> {
								TopicStats stats = store.stats(topic);
								lastSeen.put(topic, stats);
								return Deliveries.isSettled(stats);
							}));
					}
					catch (ConditionTimeoutException ex) {
						throw new AssertionError("Not settled 75 s after the Cluster was healthy; last stats read: "
								+ lastSeen + "; delivered " + listener.all.delivered(), ex);
					}
					// Nothing is scheduled now, and brokers and listeners sleep 30 s: a
					// message
					// sent to the killed partition comes at once only if its signal is
					// heard,
					// so the subscription followed the promoted replica.
					String signalled;
					do {
						signalled = "orders-" + sequence++;
					}
					while (TopicPartitions.indexOf(signalled, 3) != 0);
					int before = listener.all.delivered();
					queue.send(DelayMessage.builder("orders", signalled).id(signalled).build());
					await().atMost(Duration.ofSeconds(5)).until(() -> listener.all.delivered() == before + 1);
					long lost = listener.all.lost(acknowledged);
					System.out.printf(
							"FAILOVER cluster: sent %d, acknowledged %d, failed %d, delivered %d, lost %d, duplicated %d, "
									+ "first delivery of a message of the killed partition sent after the kill %d ms after it%n",
							sequence, acknowledged.size(), failed, listener.all.delivered(), lost,
							listener.all.duplicated(), listener.orders.firstDeliveryAfterKillMillis());
					assertThat(listener.orders.firstDeliveryAfterKillMillis())
						.as("a message of the killed partition sent after the kill")
						.isNotNegative();
					assertThat(lost).as("acknowledged messages lost (asynchronous replication)")
						.isLessThan(acknowledged.size() / 10);
				});
		}
	}

	@Configuration(proxyBeanMethods = false)
	static class Listener {

		final Deliveries all = new Deliveries();

		/** The orders of partition 0, on the primary that is killed. */
		final Deliveries orders = new Deliveries();

		@DelayListener(topic = "orders")
		void onOrder(Delivery<String> delivery) {
			this.all.delivered(delivery.id(), sequence(delivery));
			if (TopicPartitions.indexOf(delivery.id(), 3) == 0) {
				this.orders.delivered(delivery.id(), sequence(delivery));
			}
		}

		@DelayListener(topic = "payments")
		void onPayment(Delivery<String> delivery) {
			this.all.delivered(delivery.id(), sequence(delivery));
		}

		@DelayListener(topic = "reminders")
		void onReminder(Delivery<String> delivery) {
			this.all.delivered(delivery.id(), sequence(delivery));
		}

		private static int sequence(Delivery<String> delivery) {
			return Integer.parseInt(delivery.id().substring(delivery.id().indexOf('-') + 1));
		}

	}

}

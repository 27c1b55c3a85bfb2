package io.github.delayqueue.failover;

import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import io.github.delayqueue.core.DelayMessage;
import io.github.delayqueue.core.DelayQueueTemplate;
import io.github.delayqueue.core.SendFailedException;
import io.github.delayqueue.listener.DelayListener;
import io.github.delayqueue.listener.Delivery;
import io.github.delayqueue.store.RedisMessageStore;
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
					await().atMost(Duration.ofSeconds(40))
						.until(() -> TOPICS.stream().allMatch((topic) -> Deliveries.isSettled(store.stats(topic))));
					long lost = listener.all.lost(acknowledged);
					System.out.printf(
							"FAILOVER cluster: sent %d, acknowledged %d, failed %d, delivered %d, lost %d, duplicated %d, "
									+ "first delivery of an orders message sent after the kill %d ms after it%n",
							sequence, acknowledged.size(), failed, listener.all.delivered(), lost,
							listener.all.duplicated(), listener.orders.firstDeliveryAfterKillMillis());
					assertThat(listener.orders.firstDeliveryAfterKillMillis())
						.as("an orders message sent after the kill")
						.isNotNegative();
					assertThat(lost).as("acknowledged messages lost (asynchronous replication)")
						.isLessThan(acknowledged.size() / 10);
				});
		}
	}

	@Configuration(proxyBeanMethods = false)
	static class Listener {

		final Deliveries all = new Deliveries();

		final Deliveries orders = new Deliveries();

		@DelayListener(topic = "orders")
		void onOrder(Delivery<String> delivery) {
			this.all.delivered(delivery.id(), sequence(delivery));
			this.orders.delivered(delivery.id(), sequence(delivery));
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

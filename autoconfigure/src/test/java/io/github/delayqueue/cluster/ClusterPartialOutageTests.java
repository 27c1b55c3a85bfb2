package io.github.delayqueue.cluster;

import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import io.github.delayqueue.listener.DelayListener;
import io.github.delayqueue.listener.Delivery;
import io.github.delayqueue.producer.DelayMessage;
import io.github.delayqueue.producer.DelayQueueTemplate;
import io.github.delayqueue.producer.SendFailedException;
import io.github.delayqueue.test.redis.RedisServerProcess;
import io.github.delayqueue.test.redis.TestRedis;
import io.github.delayqueue.test.redis.TestRedisCluster;
import io.github.delayqueue.testsupport.QueueContexts;
import io.lettuce.core.cluster.SlotHash;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * A Cluster of three primaries without replicas, one of which dies and stays down, as
 * docs/redis.md describes it: with {@code cluster-require-full-coverage no} the topics of
 * the other primaries go on sending and delivering while a send to the dead primary's
 * topic fails within its timeout, and that topic resumes when its primary is back; with
 * Redis's default ({@code yes}) every topic stops once the Cluster marks the primary
 * failed.
 */
@Tag("cluster")
class ClusterPartialOutageTests {

	/** On the first primary (slot 105), the one killed. */
	private static final String DOWN_TOPIC = "orders";

	/** On the second primary (slot 8507). */
	private static final String LIVE_TOPIC = "payments";

	@Test
	void theTopicsOfTheOtherPrimariesGoOnWithoutFullCoverageAndTheDeadOnesResumeWhenItIsBack() {
		assumeTrue(TestRedis.canStartPrivateServer(), "no redis-server binary to start a cluster with");
		try (TestRedisCluster cluster = TestRedisCluster.start(3, 0, Duration.ofSeconds(1))) {
			cluster.primaries()
				.forEach((primary) -> primary.command("CONFIG", "SET", "cluster-require-full-coverage", "no"));
			RedisServerProcess down = cluster.primaryOf(SlotHash.getSlot(DOWN_TOPIC));
			String liveTopic = topicServedByAnotherPrimaryThan(cluster, down);
			QueueContexts.runner(QueueContexts.uniquePrefix(), cluster.springProperties())
				.withPropertyValues("delay-queue.producer.send-timeout=1s")
				.withUserConfiguration(Listener.class)
				.run((context) -> {
					DelayQueueTemplate queue = context.getBean(DelayQueueTemplate.class);
					Listener listener = context.getBean(Listener.class);
					down.stop();
					awaitMarkedFailed(cluster, down);
					queue.send(DelayMessage.builder(liveTopic, "after the kill").id("live-1").build());
					await().atMost(Duration.ofSeconds(10)).until(() -> listener.delivered.contains("live-1"));
					assertThatExceptionOfType(SendFailedException.class).isThrownBy(
							() -> queue.send(DelayMessage.builder(DOWN_TOPIC, "while down").id("down-1").build()));
					down.start();
					cluster.awaitHealthy(Duration.ofSeconds(30));
					await().atMost(Duration.ofSeconds(30))
						.untilAsserted(() -> queue
							.send(DelayMessage.builder(DOWN_TOPIC, "after the restart").id("down-2").build()));
					await().atMost(Duration.ofSeconds(30)).until(() -> listener.delivered.contains("down-2"));
					queue.send(DelayMessage.builder(liveTopic, "still going").id("live-2").build());
					await().atMost(Duration.ofSeconds(10)).until(() -> listener.delivered.contains("live-2"));
				});
		}
	}

	@Test
	void withRedisDefaultFullCoverageEveryTopicStopsOnceAPrimaryIsMarkedFailed() {
		assumeTrue(TestRedis.canStartPrivateServer(), "no redis-server binary to start a cluster with");
		try (TestRedisCluster cluster = TestRedisCluster.start(3, 0, Duration.ofSeconds(1))) {
			RedisServerProcess down = cluster.primaryOf(SlotHash.getSlot(DOWN_TOPIC));
			String liveTopic = topicServedByAnotherPrimaryThan(cluster, down);
			QueueContexts.runner(QueueContexts.uniquePrefix(), cluster.springProperties())
				.withPropertyValues("delay-queue.producer.send-timeout=1s")
				.run((context) -> {
					DelayQueueTemplate queue = context.getBean(DelayQueueTemplate.class);
					down.stop();
					awaitMarkedFailed(cluster, down);
					assertThatExceptionOfType(SendFailedException.class)
						.isThrownBy(() -> queue.send(DelayMessage.builder(liveTopic, "x").id("live-1").build()))
						.withStackTraceContaining("CLUSTERDOWN");
				});
		}
	}

	private static String topicServedByAnotherPrimaryThan(TestRedisCluster cluster, RedisServerProcess primary) {
		assertThat(cluster.primaryOf(SlotHash.getSlot(LIVE_TOPIC))).as("the primary of %s", LIVE_TOPIC)
			.isNotSameAs(primary);
		return LIVE_TOPIC;
	}

	private static void awaitMarkedFailed(TestRedisCluster cluster, RedisServerProcess down) {
		RedisServerProcess observer = cluster.primaries()
			.stream()
			.filter((node) -> node != down)
			.findFirst()
			.orElseThrow();
		await().atMost(Duration.ofSeconds(20))
			.until(() -> observer.command("CLUSTER", "NODES")
				.lines()
				.anyMatch((line) -> line.contains(":" + down.port() + "@") && line.contains("fail")
						&& !line.contains("fail?")));
	}

	@Configuration(proxyBeanMethods = false)
	static class Listener {

		final Set<String> delivered = ConcurrentHashMap.newKeySet();

		@DelayListener(topic = DOWN_TOPIC)
		void onOrder(Delivery<String> delivery) {
			this.delivered.add(delivery.id());
		}

		@DelayListener(topic = LIVE_TOPIC)
		void onPayment(Delivery<String> delivery) {
			this.delivered.add(delivery.id());
		}

	}

}

package io.github.delayqueue.failover;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;

import io.github.delayqueue.producer.DelayMessage;
import io.github.delayqueue.producer.DelayQueueTemplate;
import io.github.delayqueue.producer.SendFailedException;
import io.github.delayqueue.listener.DelayListener;
import io.github.delayqueue.listener.Delivery;
import io.github.delayqueue.store.NotReplicatedException;
import io.github.delayqueue.store.redis.RedisMessageStore;
import io.github.delayqueue.test.redis.RedisServerProcess;
import io.github.delayqueue.test.redis.TestRedis;
import io.github.delayqueue.test.redis.TestRedisSentinel;
import io.github.delayqueue.testsupport.QueueContexts;
import io.github.delayqueue.testsupport.RedisVersionDependent;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * A primary, a replica and a Sentinel as processes; the application connects through
 * {@code spring.data.redis.sentinel.*}, sends and consumes about 200 messages a second,
 * and the primary is killed with SIGKILL in the middle. Consumption resumes on the
 * promoted replica by itself and no message is stuck there. Replication is asynchronous,
 * so a send acknowledged just before the kill may be lost: the test reports how many, and
 * shows that none is when each send waits for a replica's confirmation
 * ({@code delay-queue.producer.replication.min-replicas=1}); and how long sending, and
 * delivering a message sent after the kill, took to resume.
 */
@RedisVersionDependent
@Tag("failover")
class SentinelFailoverTests {

	private static final Duration RUN = Duration.ofSeconds(6);

	private static final Duration KILL_AFTER = Duration.ofSeconds(2);

	@ParameterizedTest(name = "with {0} replicas confirming each send")
	@ValueSource(ints = { 0, 1 })
	void consumptionResumesOnThePromotedReplicaAndNothingIsStuck(int confirmingReplicas) {
		assumeTrue(TestRedis.canStartPrivateServer(), "no redis-server binary here");
		try (TestRedisSentinel redis = TestRedisSentinel.start(1, 1, Duration.ofMillis(500))) {
			QueueContexts.runner(QueueContexts.uniquePrefix(), redis.springProperties())
				.withPropertyValues("delay-queue.producer.send-timeout=1s",
						"delay-queue.producer.replication.min-replicas=" + confirmingReplicas)
				.withUserConfiguration(Listener.class)
				.run((context) -> {
					DelayQueueTemplate queue = context.getBean(DelayQueueTemplate.class);
					Listener listener = context.getBean(Listener.class);
					Sends sends = new Sends(queue);
					long start = System.nanoTime();
					while (System.nanoTime() - start < RUN.toNanos()) {
						if (!listener.deliveries.isKilled() && System.nanoTime() - start > KILL_AFTER.toNanos()) {
							listener.deliveries.killed(sends.sequence);
							redis.firstPrimary().stop();
						}
						sends.sendOne(listener.deliveries.isKilled());
						Deliveries.pause(5);
					}
					RedisServerProcess promoted = redis.awaitFailoverFrom(redis.firstPrimary(), Duration.ofSeconds(30));
					assertThat(promoted).isSameAs(redis.replicas().get(0));
					if (confirmingReplicas > 0) {
						// Sends failed while Redis was down; once the promoted replica
						// took over, for want of a replica to confirm them, until the
						// old primary is back as its replica.
						assertThat(sends.failureCauses).anyMatch(NotReplicatedException.class::isInstance);
						redis.restartAsReplica(redis.firstPrimary(), promoted, Duration.ofSeconds(30));
						sends.sendOne(true);
					}
					RedisMessageStore store = context.getBean(RedisMessageStore.class);
					await().atMost(Duration.ofSeconds(30)).until(() -> Deliveries.isSettled(store.stats("failover")));
					long lost = listener.deliveries.lost(sends.acknowledged);
					System.out.printf(
							"FAILOVER sentinel, %d confirming replicas: sent %d, acknowledged %d, failed %d, "
									+ "delivered %d, lost %d, duplicated %d, first send acknowledged %d ms after the "
									+ "kill, first delivery of a message sent after the kill %d ms after it%n",
							confirmingReplicas, sends.sequence, sends.acknowledged.size(), sends.failureCauses.size(),
							listener.deliveries.delivered(), lost, listener.deliveries.duplicated(),
							listener.deliveries.millisAfterKill(sends.firstAcknowledgedAfterKill),
							listener.deliveries.firstDeliveryAfterKillMillis());
					assertThat(sends.firstAcknowledgedAfterKill).as("a send acknowledged after the failover")
						.isNotZero();
					assertThat(listener.deliveries.firstDeliveryAfterKillMillis()).as("a delivery after the failover")
						.isNotNegative();
					if (confirmingReplicas > 0) {
						assertThat(lost).as("acknowledged messages lost although a replica confirmed them").isZero();
					}
					else {
						assertThat(lost).as("acknowledged messages lost (asynchronous replication)")
							.isLessThan(sends.acknowledged.size() / 10);
					}
				});
		}
	}

	/** Sends numbered messages, due within 300 ms, and keeps what happened to each. */
	private static final class Sends {

		private final DelayQueueTemplate queue;

		final Set<String> acknowledged = ConcurrentHashMap.newKeySet();

		final List<Throwable> failureCauses = new ArrayList<>();

		int sequence;

		long firstAcknowledgedAfterKill;

		Sends(DelayQueueTemplate queue) {
			this.queue = queue;
		}

		void sendOne(boolean afterKill) {
			String id = "m-" + this.sequence++;
			try {
				this.queue.send(DelayMessage.builder("failover", id)
					.id(id)
					.delay(Duration.ofMillis(ThreadLocalRandom.current().nextInt(300)))
					.build());
				this.acknowledged.add(id);
				if (afterKill && this.firstAcknowledgedAfterKill == 0) {
					this.firstAcknowledgedAfterKill = System.nanoTime();
				}
			}
			catch (SendFailedException ex) {
				this.failureCauses.add(ex.getCause());
			}
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class Listener {

		final Deliveries deliveries = new Deliveries();

		@DelayListener(topic = "failover", concurrency = "4")
		void onMessage(Delivery<String> delivery) {
			this.deliveries.delivered(delivery.id(), Integer.parseInt(delivery.id().substring(2)));
		}

	}

}

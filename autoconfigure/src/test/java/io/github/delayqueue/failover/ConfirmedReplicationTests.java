package io.github.delayqueue.failover;

import java.time.Duration;

import io.github.delayqueue.producer.DelayMessage;
import io.github.delayqueue.producer.DelayQueueTemplate;
import io.github.delayqueue.producer.SendFailedException;
import io.github.delayqueue.producer.SendResult;
import io.github.delayqueue.store.MessageState;
import io.github.delayqueue.store.NotReplicatedException;
import io.github.delayqueue.store.redis.RedisMessageStore;
import io.github.delayqueue.test.redis.RedisServerProcess;
import io.github.delayqueue.test.redis.TestRedis;
import io.github.delayqueue.testsupport.QueueContexts;
import io.github.delayqueue.testsupport.RedisVersionDependent;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * {@code delay-queue.producer.replication.min-replicas}: a send returns once a replica
 * confirmed it, and fails with the ids when none does in time, the message then being on
 * the primary.
 */
@RedisVersionDependent
@Tag("failover")
class ConfirmedReplicationTests {

	@Test
	void aSendNoReplicaConfirmsFailsNamingItsTopicAndIdsAndIsStoredOnThePrimary() {
		QueueContexts.runner(QueueContexts.uniquePrefix())
			.withPropertyValues("delay-queue.producer.replication.min-replicas=1",
					"delay-queue.producer.replication.timeout=100ms")
			.run((context) -> {
				DelayQueueTemplate queue = context.getBean(DelayQueueTemplate.class);
				assertThatExceptionOfType(SendFailedException.class).isThrownBy(() -> queue.send(
						DelayMessage.builder("jobs", "payload").id("unconfirmed").delay(Duration.ofMinutes(1)).build()))
					.satisfies((ex) -> assertThat(ex.messageIds()).containsExactly("unconfirmed"))
					.withMessageContaining("topic 'jobs'")
					.havingCause()
					.isInstanceOf(NotReplicatedException.class)
					.withMessageContaining("confirmed by 0 of the 1 replicas required within 100ms");
				assertThat(context.getBean(RedisMessageStore.class).inspect("jobs", "unconfirmed", 100).state())
					.isEqualTo(MessageState.SCHEDULED);
			});
	}

	@Test
	void aSendReturnsOnceItsReplicaConfirmedIt() {
		assumeTrue(TestRedis.canStartPrivateServer(), "no redis-server binary here");
		try (RedisServerProcess primary = TestRedis.startPrivateServer();
				RedisServerProcess replica = TestRedis.startPrivateServer("--replicaof", primary.host(),
						String.valueOf(primary.port()))) {
			replica.awaitReplicaOf(primary, Duration.ofSeconds(10));
			QueueContexts.runner(QueueContexts.uniquePrefix(), primary.springProperties())
				.withPropertyValues("delay-queue.producer.replication.min-replicas=1")
				.run((context) -> {
					DelayQueueTemplate queue = context.getBean(DelayQueueTemplate.class);
					for (int i = 0; i < 20; i++) {
						SendResult sent = queue.send("jobs", "payload-" + i, Duration.ofMinutes(1));
						assertThat(sent.duplicate()).isFalse();
					}
					assertThat(context.getBean(RedisMessageStore.class).stats("jobs").scheduled()).isEqualTo(20);
				});
		}
	}

	@Test
	void aNegativeNumberOfReplicasIsRefusedAtStartup() {
		QueueContexts.runner(QueueContexts.uniquePrefix())
			.withPropertyValues("delay-queue.producer.replication.min-replicas=-1")
			.run((context) -> assertThat(context).getFailure()
				.rootCause()
				.hasMessageContaining("delay-queue.producer.replication.min-replicas must be 0"));
	}

}

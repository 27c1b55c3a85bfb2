package io.github.delayqueue.store.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import io.github.delayqueue.store.ClaimedMessage;
import io.github.delayqueue.store.NewMessage;
import io.github.delayqueue.testsupport.QueueContexts;
import io.github.delayqueue.testsupport.RedisVersionDependent;
import io.github.delayqueue.testsupport.Transitions;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Dead-letter retention ({@code delay-queue.topics.<topic>.dead-letters.*}) on real
 * Redis: the script that buries a dead letter deletes the oldest beyond the topic's
 * bounds from every dead key alike (ids by time, messages, errors, priorities); topics
 * without keep every dead letter.
 */
@RedisVersionDependent
class DeadLetterRetentionTests {

	private static final Duration LEASE = Duration.ofMinutes(1);

	@Test
	void theDeadSetKeepsItsNewestDeadLettersUpToTheMaxCountInEveryDeadKey() {
		QueueContexts.runner(QueueContexts.uniquePrefix())
			.withPropertyValues("delay-queue.topics.kept.dead-letters.max-count=3")
			.run((context) -> {
				RedisMessageStore store = context.getBean(RedisMessageStore.class);
				for (int i = 0; i < 8; i++) {
					bury(store, "kept", "k-" + i);
					bury(store, "all", "a-" + i);
				}
				assertDeadKeysHoldExactly(context, "kept", "k-5", "k-6", "k-7");
				assertThat(store.stats("all").dead()).isEqualTo(8);
			});
	}

	@Test
	void aPartitionedTopicKeepsItsMaxCountAcrossItsPartitionsNotThatManyInEach() {
		QueueContexts.runner(QueueContexts.uniquePrefix())
			.withPropertyValues("delay-queue.topics.wide.partitions=4",
					"delay-queue.topics.wide.dead-letters.max-count=8")
			.run((context) -> {
				RedisMessageStore store = context.getBean(RedisMessageStore.class);
				for (int i = 0; i < 40; i++) {
					String id = "w-" + i;
					String partition = store.partitions().nameFor("wide", id);
					store.send("wide", List.of(message(id)));
					Transitions.promote(store, partition, 100);
					List<ClaimedMessage> claimed = Transitions.claim(store, partition, 10, LEASE);
					assertThat(claimed).extracting(ClaimedMessage::id).containsExactly(id);
					assertThat(Transitions.deadLetter(store, partition, id, claimed.get(0).leaseToken(), "failed"))
						.isTrue();
				}
				// Each of the 4 partitions keeps 8 / 4 = 2 (32 before: 8 in each).
				assertThat(store.stats("wide").dead()).isEqualTo(8);
			});
	}

	@Test
	void deadLettersOlderThanTheMaxAgeAreDeletedByTheNextBurial() {
		QueueContexts.runner(QueueContexts.uniquePrefix())
			.withPropertyValues("delay-queue.listener.dead-letters.max-age=1h")
			.run((context) -> {
				RedisMessageStore store = context.getBean(RedisMessageStore.class);
				StringRedisTemplate redis = context.getBean(StringRedisTemplate.class);
				bury(store, "aged", "old-1");
				bury(store, "aged", "old-2");
				// They died two hours ago.
				long twoHoursAgo = System.currentTimeMillis() - Duration.ofHours(2).toMillis();
				redis.opsForZSet().add(store.keys("aged").dead(), "old-1", twoHoursAgo);
				redis.opsForZSet().add(store.keys("aged").dead(), "old-2", twoHoursAgo);
				bury(store, "aged", "new");
				assertDeadKeysHoldExactly(context, "aged", "new");
			});
	}

	@Test
	void aDeadLetterQueueKeepsWhatItsOwnPropertiesSayNotItsTopics() {
		QueueContexts.runner(QueueContexts.uniquePrefix())
			.withPropertyValues("delay-queue.topics.queued.dead-letters.max-count=1",
					"delay-queue.topics[queued#dead].dead-letters.max-count=2")
			.run((context) -> {
				RedisMessageStore store = context.getBean(RedisMessageStore.class);
				for (int i = 0; i < 4; i++) {
					bury(store, "queued#dead", "q-" + i);
				}
				assertDeadKeysHoldExactly(context, "queued#dead", "q-2", "q-3");
			});
	}

	@Test
	void aMessageWhoseLeaseExpiredOnItsLastAttemptIsBuriedUnderTheSameRetention() {
		QueueContexts.runner(QueueContexts.uniquePrefix())
			.withPropertyValues("delay-queue.topics.leased.dead-letters.max-count=2")
			.run((context) -> {
				RedisMessageStore store = context.getBean(RedisMessageStore.class);
				for (int i = 0; i < 5; i++) {
					store.send("leased", List.of(message("l-" + i)));
				}
				Transitions.promote(store, "leased", 100);
				assertThat(Transitions.claim(store, "leased", 10, Duration.ofMillis(1))).hasSize(5);
				AtomicLong buried = new AtomicLong();
				await().atMost(Duration.ofSeconds(10)).until(() -> {
					buried.addAndGet(Transitions.expireLeases(store, "leased", 100, 1).deadLettered().size());
					return buried.get() == 5;
				});
				assertThat(store.stats("leased").dead()).isEqualTo(2);
				assertThat(context.getBean(StringRedisTemplate.class)
					.opsForHash()
					.size(store.keys("leased").deadMessages())).isEqualTo(2);
			});
	}

	@Test
	void aMaxCountBelowOneOrAMaxAgeBelowAMillisecondFailsStartupNamingTheProperty() {
		QueueContexts.runner(QueueContexts.uniquePrefix())
			.withPropertyValues("delay-queue.topics.kept.dead-letters.max-count=0",
					"delay-queue.listener.dead-letters.max-age=-1s")
			.run((context) -> {
				assertThat(context).hasFailed();
				assertThat(context.getStartupFailure()).rootCause()
					.hasMessageContainingAll("delay-queue.topics.kept.dead-letters.max-count must be at least 1",
							"delay-queue.listener.dead-letters.max-age must be at least 1ms");
			});
	}

	private static void bury(RedisMessageStore store, String topic, String id) {
		store.send(topic, List.of(message(id)));
		Transitions.promote(store, topic, 100);
		List<ClaimedMessage> claimed = Transitions.claim(store, topic, 10, LEASE);
		assertThat(claimed).extracting(ClaimedMessage::id).containsExactly(id);
		assertThat(Transitions.deadLetter(store, topic, id, claimed.get(0).leaseToken(), "failed " + id)).isTrue();
	}

	private static NewMessage message(String id) {
		return NewMessage.afterDelay(id, Duration.ZERO, ("body of " + id).getBytes(StandardCharsets.UTF_8))
			.withPriority(5);
	}

	private static void assertDeadKeysHoldExactly(AssertableApplicationContext context, String topic, String... ids) {
		RedisMessageStore store = context.getBean(RedisMessageStore.class);
		StringRedisTemplate redis = context.getBean(StringRedisTemplate.class);
		TopicKeys keys = store.keys(topic);
		assertThat(redis.opsForZSet().range(keys.dead(), 0, -1)).containsExactly(ids);
		assertThat(redis.<String, String>opsForHash().keys(keys.deadMessages())).containsExactlyInAnyOrder(ids);
		assertThat(redis.<String, String>opsForHash().keys(keys.deadErrors())).containsExactlyInAnyOrder(ids);
		assertThat(redis.<String, String>opsForHash().keys(keys.deadPriorities())).containsExactlyInAnyOrder(ids);
	}

}

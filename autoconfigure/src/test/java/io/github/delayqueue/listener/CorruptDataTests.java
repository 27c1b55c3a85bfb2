package io.github.delayqueue.listener;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import io.github.delayqueue.producer.DelayQueueTemplate;
import io.github.delayqueue.store.redis.TopicKeys;
import io.github.delayqueue.testsupport.QueueContexts;
import org.junit.jupiter.api.Test;

import org.springframework.context.ApplicationContext;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Garbage under the queue's keys is dead-lettered, skipped or moved aside, and never
 * stalls a topic.
 */
class CorruptDataTests {

	@Test
	void unreadableStoredMessagesAreDeadLetteredAndTheTopicKeepsMoving() {
		String prefix = QueueContexts.uniquePrefix();
		TopicKeys keys = new TopicKeys(prefix, "notes");
		QueueContexts.runner(prefix).run((context) -> {
			StringRedisTemplate redis = context.getBean(StringRedisTemplate.class);
			// Ready: no header at all, and a header whose body is garbage.
			redis.opsForHash().put(keys.messages(), "no-header", "garbage");
			redis.opsForHash().put(keys.messages(), "bad-body", "0:1:9:zzz");
			redis.opsForList().rightPushAll(keys.ready(), "no-header", "bad-body");
			// Ids without a stored message, in ready and in scheduled.
			redis.opsForList().rightPush(keys.ready(), "orphan-ready");
			redis.opsForZSet().add(keys.scheduled(), "orphan-scheduled", 0);
			// In flight with an expired lease and no header.
			redis.opsForHash().put(keys.messages(), "expired-garbage", "x");
			redis.opsForZSet().add(keys.inFlight(), "expired-garbage", 0);
		});
		QueueContexts.runner(prefix)
			.withBean(NoteListener.class)
			.withPropertyValues("delay-queue.broker.max-sleep=200ms")
			.run((context) -> {
				NoteListener listener = context.getBean(NoteListener.class);
				context.getBean(DelayQueueTemplate.class).send("notes", "still works", Duration.ZERO);
				await().atMost(Duration.ofSeconds(10)).until(() -> listener.received.contains("still works"));
				StringRedisTemplate redis = context.getBean(StringRedisTemplate.class);
				await().atMost(Duration.ofSeconds(10)).until(() -> redis.opsForHash().size(keys.deadErrors()) == 3);
				assertThat((String) redis.opsForHash().get(keys.deadErrors(), "no-header")).contains("corrupt");
				assertThat((String) redis.opsForHash().get(keys.deadErrors(), "bad-body")).contains("corrupt");
				assertThat((String) redis.opsForHash().get(keys.deadErrors(), "expired-garbage")).contains("corrupt");
				assertThat(listener.received).containsExactly("still works");
				await().atMost(Duration.ofSeconds(10)).until(() -> pendingKeys(context, keys).isEmpty());
			});
	}

	@Test
	void keysOfTheWrongTypeAreMovedAsideAndTheTopicKeepsMoving() {
		String prefix = QueueContexts.uniquePrefix();
		TopicKeys keys = new TopicKeys(prefix, "notes");
		QueueContexts.runner(prefix)
			.withBean(NoteListener.class)
			.withPropertyValues("delay-queue.broker.max-sleep=200ms", "delay-queue.listener.idle-check-interval=200ms")
			.run((context) -> {
				StringRedisTemplate redis = context.getBean(StringRedisTemplate.class);
				redis.opsForValue().set(keys.ready(), "not a list");
				redis.opsForValue().set(keys.inFlight(), "not a zset");
				NoteListener listener = context.getBean(NoteListener.class);
				await().atMost(Duration.ofSeconds(20)).ignoreExceptions().until(() -> {
					context.getBean(DelayQueueTemplate.class).send("notes", "after repair", Duration.ZERO);
					return listener.received.contains("after repair");
				});
				assertThat(redis.keys(keys.ready() + ":quarantined:*")).hasSize(1);
				assertThat(redis.keys(keys.inFlight() + ":quarantined:*")).hasSize(1);
			});
	}

	private static List<String> pendingKeys(ApplicationContext context, TopicKeys keys) {
		StringRedisTemplate redis = context.getBean(StringRedisTemplate.class);
		return List.of(keys.messages(), keys.scheduled(), keys.ready(), keys.inFlight())
			.stream()
			.filter((key) -> Boolean.TRUE.equals(redis.hasKey(key)))
			.toList();
	}

	static class NoteListener {

		final List<String> received = new CopyOnWriteArrayList<>();

		@DelayListener(topic = "notes")
		void on(String payload) {
			this.received.add(payload);
		}

	}

}

package io.github.delayqueue.listener;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import io.github.delayqueue.producer.DelayQueueTemplate;
import io.github.delayqueue.producer.SendResult;
import io.github.delayqueue.store.redis.RedisMessageStore;
import io.github.delayqueue.store.redis.TopicKeys;
import io.github.delayqueue.testsupport.QueueContexts;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * With a lookahead, the broker makes messages ready before they are due and the listener
 * holds them until their due time: never early, and handed back if the listener stops
 * meanwhile.
 */
class LookaheadDeliveryTests {

	@Test
	void messageMadeReadyAheadOfItsDueTimeIsDeliveredAtItsDueTimeNotBefore() {
		QueueContexts.runner(QueueContexts.uniquePrefix())
			.withBean(RecordingListener.class)
			.withPropertyValues("delay-queue.broker.lookahead=5s")
			.run((context) -> {
				RecordingListener listener = context.getBean(RecordingListener.class);
				StringRedisTemplate redis = context.getBean(StringRedisTemplate.class);
				TopicKeys keys = context.getBean(RedisMessageStore.class).keys("jobs");
				SendResult sent = context.getBean(DelayQueueTemplate.class).send("jobs", "work", Duration.ofSeconds(2));
				// Claimed and held long before it is due: in flight, no longer scheduled.
				await().atMost(Duration.ofSeconds(1))
					.until(() -> redis.opsForZSet().score(keys.inFlight(), sent.id()) != null);
				assertThat(redis.opsForZSet().score(keys.scheduled(), sent.id())).isNull();
				assertThat(listener.handledAt).isEmpty();
				await().atMost(Duration.ofSeconds(10)).until(() -> listener.handledAt.size() == 1);
				// Redis runs on this machine, so its clock and ours agree.
				assertThat(listener.handledAt.get(0)).isAfterOrEqualTo(sent.dueAt());
				assertThat(listener.deliveries.get(0).lateness()).isLessThan(Duration.ofSeconds(1));
			});
	}

	@Test
	void messageHeldWhenTheListenerStopsIsHandedBackAndDeliveredByTheNextOne() {
		String prefix = QueueContexts.uniquePrefix();
		String[] id = new String[1];
		QueueContexts.runner(prefix)
			.withBean(RecordingListener.class)
			.withPropertyValues("delay-queue.broker.lookahead=1m")
			.run((context) -> {
				StringRedisTemplate redis = context.getBean(StringRedisTemplate.class);
				TopicKeys keys = context.getBean(RedisMessageStore.class).keys("jobs");
				id[0] = context.getBean(DelayQueueTemplate.class).send("jobs", "work", Duration.ofSeconds(3)).id();
				await().atMost(Duration.ofSeconds(2))
					.until(() -> redis.opsForZSet().score(keys.inFlight(), id[0]) != null);
			});
		QueueContexts.runner(prefix).withBean(RecordingListener.class).run((context) -> {
			RecordingListener listener = context.getBean(RecordingListener.class);
			await().atMost(Duration.ofSeconds(10)).until(() -> listener.deliveries.size() == 1);
			assertThat(listener.deliveries.get(0).id()).isEqualTo(id[0]);
			assertThat(listener.deliveries.get(0).attempt()).isEqualTo(1);
			assertThat(listener.handledAt.get(0)).isAfterOrEqualTo(listener.deliveries.get(0).dueAt());
		});
	}

	static class RecordingListener {

		final List<Delivery<String>> deliveries = new CopyOnWriteArrayList<>();

		final List<Instant> handledAt = new CopyOnWriteArrayList<>();

		@DelayListener(topic = "jobs")
		void on(Delivery<String> delivery) {
			this.handledAt.add(Instant.now());
			this.deliveries.add(delivery);
		}

	}

}

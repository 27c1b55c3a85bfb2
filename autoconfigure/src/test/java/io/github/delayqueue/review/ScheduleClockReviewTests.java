package io.github.delayqueue.review;

import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import io.github.delayqueue.autoconfigure.DelayQueueProperties;
import io.github.delayqueue.listener.DelayListener;
import io.github.delayqueue.listener.Delivery;
import io.github.delayqueue.schedule.DelayQueueSchedules;
import io.github.delayqueue.schedule.Schedule;
import io.github.delayqueue.store.redis.RedisMessageStore;
import io.github.delayqueue.store.redis.ScriptClock;
import io.github.delayqueue.testsupport.QueueContexts;
import org.junit.jupiter.api.Disabled;
import org.junit.jupiter.api.Test;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Adversarial review of the schedules under a Redis clock that steps back (a failover to
 * a replica whose clock is behind, simulated with an offset clock): the docs hold that a
 * tick id is never sent twice, as advancing keeps the next tick and resuming never goes
 * back before it.
 */
class ScheduleClockReviewTests {

	private static final String PREFIX = QueueContexts.uniquePrefix();

	private static final String OFFSET_KEY = PREFIX + ":clock-offset";

	@Test
	void aSaveOfAnotherDefinitionAfterTheClockSteppedBackSendsNoTickIdTwice() {
		List<String> ticks = new CopyOnWriteArrayList<>();
		Clocked.deliveries = ticks;
		QueueContexts.runner(PREFIX).withUserConfiguration(SteppingStore.class, Clocked.class).run((context) -> {
			DelayQueueSchedules schedules = context.getBean(DelayQueueSchedules.class);
			schedules.save(Schedule.cron("stepped", "clocked", "* * * * * *").withPayload("first"));
			await().atMost(Duration.ofSeconds(10)).until(() -> ticks.size() >= 4);
			step(context.getBean(StringRedisTemplate.class), Duration.ofSeconds(-4));
			schedules.save(Schedule.cron("stepped", "clocked", "* * * * * *").withPayload("second"));
			int before = ticks.size();
			await().atMost(Duration.ofSeconds(15)).until(() -> ticks.size() >= before + 6);
			List<String> all = List.copyOf(ticks);
			assertThat(new HashSet<>(all)).as("each tick id once: " + all).hasSameSizeAs(all);
		});
	}

	@Test
	@Disabled("hole (open): a schedule removed and saved again after the Redis clock stepped back starts from the"
			+ " stepped-back time, as nothing of it is left to say which ticks were sent: a cron schedule sends"
			+ " again, with the same ids, the ticks of the seconds stepped over. Proposal: the registry keeps, per"
			+ " name, the last tick sent (written by advance_schedule beside '~#<name>'), and a save starts after it")
	void aScheduleRemovedAndSavedAgainAfterTheClockSteppedBackSendsNoTickIdTwice() {
		List<String> ticks = new CopyOnWriteArrayList<>();
		Clocked.deliveries = ticks;
		QueueContexts.runner(PREFIX).withUserConfiguration(SteppingStore.class, Clocked.class).run((context) -> {
			DelayQueueSchedules schedules = context.getBean(DelayQueueSchedules.class);
			schedules.save(Schedule.cron("removed", "clocked", "* * * * * *"));
			await().atMost(Duration.ofSeconds(10)).until(() -> ticks.size() >= 4);
			step(context.getBean(StringRedisTemplate.class), Duration.ofSeconds(-4));
			schedules.remove("removed");
			schedules.save(Schedule.cron("removed", "clocked", "* * * * * *"));
			int before = ticks.size();
			await().atMost(Duration.ofSeconds(15)).until(() -> ticks.size() >= before + 6);
			List<String> all = List.copyOf(ticks);
			assertThat(new HashSet<>(all)).as("each tick id once: " + all).hasSameSizeAs(all);
		});
	}

	/** Moves the store's clock by the given step from where it stands. */
	private static void step(StringRedisTemplate redis, Duration step) {
		String current = redis.opsForValue().get(OFFSET_KEY);
		long offset = ((current != null) ? Long.parseLong(current) : 0) + step.toNanos() / 1000;
		redis.opsForValue().set(OFFSET_KEY, Long.toString(offset));
	}

	@Configuration(proxyBeanMethods = false)
	static class SteppingStore {

		@Bean
		RedisMessageStore steppingStore(RedisConnectionFactory connectionFactory, DelayQueueProperties properties) {
			return new RedisMessageStore(connectionFactory, properties.getKeyPrefix(),
					properties.getProducer().getSendTimeout(), ScriptClock.offsetBy(OFFSET_KEY));
		}

	}

	static class Clocked {

		static volatile List<String> deliveries = new CopyOnWriteArrayList<>();

		@DelayListener(topic = "clocked")
		void on(Delivery<String> delivery) {
			deliveries.add(delivery.id());
		}

	}

}

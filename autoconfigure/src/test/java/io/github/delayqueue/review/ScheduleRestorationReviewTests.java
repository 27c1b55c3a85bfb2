package io.github.delayqueue.review;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import io.github.delayqueue.producer.DelayMessage;
import io.github.delayqueue.producer.DelayQueueTemplate;
import io.github.delayqueue.listener.DelayListener;
import io.github.delayqueue.listener.Delivery;
import io.github.delayqueue.runtime.RedisDataLossWatch;
import io.github.delayqueue.schedule.DelayQueueSchedules;
import io.github.delayqueue.schedule.Schedule;
import io.github.delayqueue.store.redis.RedisMessageStore;
import io.github.delayqueue.store.redis.TopicKeys;
import io.github.delayqueue.test.redis.RedisServerProcess;
import io.github.delayqueue.test.redis.TestRedis;
import io.github.delayqueue.testsupport.QueueContexts;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Adversarial review of issue 34's claims on the schedules' bookkeeping and the
 * restoration after Redis lost data: "no schedule can become invisible or stop ticking
 * silently", "one bad key stops no other schedule", "the loss is said once per instance",
 * "a FLUSHALL under a running 1 s declared schedule ticks again within 10 s, then every
 * second".
 */
class ScheduleRestorationReviewTests {

	private static final Duration RESTORED_WITHIN = Duration.ofSeconds(10);

	@Test
	void aScheduleSavedThroughTheApiKeepsTickingWhenTheRegistryKeyAloneIsLost() {
		// The registry is one key on one node: a Cluster node that lost its data alone,
		// an
		// eviction or a stray DEL takes it while every schedules hash stays.
		String prefix = QueueContexts.uniquePrefix();
		List<String> ticks = new CopyOnWriteArrayList<>();
		Beats.deliveries = ticks;
		QueueContexts.runner(prefix).withUserConfiguration(Beats.class).run((context) -> {
			DelayQueueSchedules schedules = context.getBean(DelayQueueSchedules.class);
			schedules.save(Schedule.fixedRate("api-beat", "beats", Duration.ofMillis(300)).withPayload("beat"));
			await().atMost(RESTORED_WITHIN).until(() -> ticks.size() >= 2);
			StringRedisTemplate redis = context.getBean(StringRedisTemplate.class);
			redis.delete(TopicKeys.scheduleRegistry(prefix));
			String stateKey = context.getBean(RedisMessageStore.class).keys("beats").schedules();
			assertThat(redis.opsForHash().hasKey(stateKey, "api-beat")).as("the schedule's state is still there")
				.isTrue();
			int before = ticks.size();
			await().atMost(RESTORED_WITHIN).until(() -> ticks.size() >= before + 3);
			assertThat(schedules.get("api-beat")).isPresent();
		});
	}

	@Test
	void aScheduleSavedThroughTheApiKeepsTickingWhenTheRegistryKeyHoldsTheWrongType() {
		String prefix = QueueContexts.uniquePrefix();
		List<String> ticks = new CopyOnWriteArrayList<>();
		Beats.deliveries = ticks;
		QueueContexts.runner(prefix).withUserConfiguration(Beats.class).run((context) -> {
			DelayQueueSchedules schedules = context.getBean(DelayQueueSchedules.class);
			schedules.save(Schedule.fixedRate("api-beat", "beats", Duration.ofMillis(300)).withPayload("beat"));
			await().atMost(RESTORED_WITHIN).until(() -> ticks.size() >= 2);
			StringRedisTemplate redis = context.getBean(StringRedisTemplate.class);
			String registry = TopicKeys.scheduleRegistry(prefix);
			redis.delete(registry);
			redis.opsForValue().set(registry, "not a hash");
			int before = ticks.size();
			await().atMost(RESTORED_WITHIN).until(() -> ticks.size() >= before + 3);
			assertThat(schedules.get("api-beat")).isPresent();
		});
	}

	@Test
	void aDeclaredScheduleWhoseStateIsUnreadableIsRestoredAsAMissingOneIs() {
		String prefix = QueueContexts.uniquePrefix();
		List<String> ticks = new CopyOnWriteArrayList<>();
		Beats.deliveries = ticks;
		QueueContexts.runner(prefix)
			.withUserConfiguration(Beats.class)
			.withPropertyValues("delay-queue.schedules.heartbeat.topic=beats",
					"delay-queue.schedules.heartbeat.fixed-rate=300ms", "delay-queue.schedules.heartbeat.payload=beat")
			.run((context) -> {
				await().atMost(RESTORED_WITHIN).until(() -> ticks.size() >= 2);
				StringRedisTemplate redis = context.getBean(StringRedisTemplate.class);
				String stateKey = context.getBean(RedisMessageStore.class).keys("beats").schedules();
				redis.opsForHash().put(stateKey, "heartbeat", "garbage");
				int before = ticks.size();
				await().atMost(RESTORED_WITHIN).until(() -> ticks.size() >= before + 3);
			});
	}

	@Test
	void aRestartFromAnOlderSnapshotIsSaidAsALoss() {
		// Redis's default persistence (RDB snapshots, no AOF): a kill -9 brings back the
		// last
		// snapshot, which holds the marker as it was: what was stored after it is lost.
		Assumptions.assumeTrue(TestRedis.canStartPrivateServer(), "needs a redis-server binary");
		try (RedisServerProcess redis = TestRedis.startPrivateServer()) {
			QueueContexts.runner(QueueContexts.uniquePrefix(), redis.springProperties()).run((context) -> {
				RedisDataLossWatch watch = context.getBean(RedisDataLossWatch.class);
				DelayQueueTemplate template = context.getBean(DelayQueueTemplate.class);
				watch.check();
				redis.command("SAVE");
				template.send(
						DelayMessage.builder("orders", "late").id("after-snapshot").delay(Duration.ofHours(1)).build());
				// A look after the snapshot, as the watch makes every 5 s (a restart
				// within
				// one look of the snapshot it comes back from is not seen).
				watch.check();
				redis.stop();
				redis.start();
				await().atMost(RESTORED_WITHIN).ignoreExceptions().until(() -> {
					watch.check();
					return true;
				});
				assertThat(redis.command("DBSIZE")).as("the snapshot came back").isNotEqualTo("0");
				assertThat(template.cancel("orders", "after-snapshot")).as("the message sent after it is lost")
					.isFalse();
				assertThat(watch.lastLoss()).as("the loss is said").isNotNull();
			});
		}
	}

	@Test
	void twoInstancesDeclaringOneScheduleSendEachTickOnceAndEverySecondAfterAFlushAll() {
		Assumptions.assumeTrue(TestRedis.canStartPrivateServer(), "needs a redis-server binary");
		try (RedisServerProcess redis = TestRedis.startPrivateServer()) {
			List<String> ticks = new CopyOnWriteArrayList<>();
			Beats.deliveries = ticks;
			ApplicationContextRunner runner = QueueContexts
				.runner(QueueContexts.uniquePrefix(), redis.springProperties())
				.withUserConfiguration(Beats.class)
				.withPropertyValues("delay-queue.topics.beats.partitions=3",
						"delay-queue.schedules.heartbeat.topic=beats", "delay-queue.schedules.heartbeat.fixed-rate=1s",
						"delay-queue.schedules.heartbeat.payload=beat");
			runner.run((first) -> runner.run((second) -> {
				await().atMost(RESTORED_WITHIN).until(() -> ticks.size() >= 2);
				redis.command("FLUSHALL");
				int before = ticks.size();
				await().atMost(RESTORED_WITHIN.plusSeconds(5)).until(() -> ticks.size() >= before + 5);
				List<String> after = new ArrayList<>(ticks.subList(before, ticks.size()));
				assertThat(new HashSet<>(after)).as("each tick once: " + after).hasSameSizeAs(after);
				List<Long> times = after.stream()
					.map((id) -> Long.parseLong(id.substring(id.indexOf('~') + 1)))
					.sorted()
					.toList();
				for (int i = 1; i < times.size(); i++) {
					assertThat(times.get(i) - times.get(i - 1)).as("gap between ticks " + times).isEqualTo(1000);
				}
			}));
		}
	}

	@Test
	void aRestartWithoutPersistenceUnderADeclaredScheduleIsSaidOnceAndItTicksAgain() {
		Assumptions.assumeTrue(TestRedis.canStartPrivateServer(), "needs a redis-server binary");
		try (RedisServerProcess redis = TestRedis.startPrivateServer()) {
			List<String> ticks = new CopyOnWriteArrayList<>();
			Beats.deliveries = ticks;
			QueueContexts.runner(QueueContexts.uniquePrefix(), redis.springProperties())
				.withUserConfiguration(Beats.class)
				.withPropertyValues("delay-queue.schedules.heartbeat.topic=beats",
						"delay-queue.schedules.heartbeat.fixed-rate=1s", "delay-queue.schedules.heartbeat.payload=beat")
				.run((context) -> {
					RedisDataLossWatch watch = context.getBean(RedisDataLossWatch.class);
					await().atMost(RESTORED_WITHIN).until(() -> ticks.size() >= 2);
					watch.check();
					redis.stop();
					redis.start();
					int before = ticks.size();
					await().atMost(RESTORED_WITHIN).until(() -> ticks.size() >= before + 3);
					await().atMost(RESTORED_WITHIN).until(() -> watch.lastLoss() != null);
					List<String> after = new ArrayList<>(ticks.subList(before, ticks.size()));
					assertThat(new HashSet<>(after)).as("each tick once: " + after).hasSameSizeAs(after);
				});
		}
	}

	static class Beats {

		static volatile List<String> deliveries = new CopyOnWriteArrayList<>();

		@DelayListener(topic = "beats")
		void on(Delivery<String> delivery) {
			deliveries.add(delivery.id());
		}

	}

}

package io.github.delayqueue.runtime;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import io.github.delayqueue.actuate.DelayQueueHealthCheck;
import io.github.delayqueue.producer.DelayQueueTemplate;
import io.github.delayqueue.listener.DelayListener;
import io.github.delayqueue.listener.Delivery;
import io.github.delayqueue.metrics.DelayQueueMeterNames;
import io.github.delayqueue.store.redis.RedisMessageStore;
import io.github.delayqueue.test.redis.RedisServerProcess;
import io.github.delayqueue.test.redis.TestRedis;
import io.github.delayqueue.testsupport.QueueContexts;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

import org.springframework.context.ApplicationContext;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Redis that comes back empty (issue 34, item 6): a FLUSHALL under a running application
 * is noticed and said once (ERROR, counter, health detail), and what the application
 * declares comes back by itself within ten seconds: a schedule from its properties ticks
 * again every second, its dead letters reach their listener again, and its partitioned
 * topic takes sends again.
 */
class RedisDataLossTests {

	private static final Duration RESTORED_WITHIN = Duration.ofSeconds(10);

	@Test
	void afterAFlushAllWhatTheApplicationDeclaresComesBackWithinTenSecondsAndTheLossIsSaidOnce() {
		Assumptions.assumeTrue(TestRedis.canStartPrivateServer(), "needs a redis-server binary");
		try (RedisServerProcess redis = TestRedis.startPrivateServer()) {
			List<String> ticks = new CopyOnWriteArrayList<>();
			Ticks.deliveries = ticks;
			QueueContexts.runner(QueueContexts.uniquePrefix(), redis.springProperties())
				.withUserConfiguration(Ticks.class, FailingOrders.class, DeadOrders.class)
				.withBean(MeterRegistry.class, SimpleMeterRegistry::new)
				.withPropertyValues("delay-queue.schedules.every-second.topic=ticks",
						"delay-queue.schedules.every-second.fixed-rate=1s", "delay-queue.topics.wide.partitions=3",
						"delay-queue.topics.orders.backoff.initial-interval=10ms")
				.run((context) -> {
					DelayQueueTemplate template = context.getBean(DelayQueueTemplate.class);
					RedisDataLossWatch watch = context.getBean(RedisDataLossWatch.class);
					DeadOrders dead = context.getBean(DeadOrders.class);
					template.send("wide", "before", Duration.ofHours(1));
					await().atMost(RESTORED_WITHIN).until(() -> ticks.size() >= 2);
					await().atMost(RESTORED_WITHIN).until(() -> watched(context, "orders"));
					watch.check();

					redis.command("FLUSHALL");
					int before = ticks.size();
					await().atMost(RESTORED_WITHIN).until(() -> ticks.size() >= before + 2);
					await().atMost(RESTORED_WITHIN).until(() -> watch.lastLoss() != null);
					assertThat(watch.lastLoss().message()).contains("Redis lost the delay queue's data")
						.contains("appendonly");
					assertThat(
							context.getBean(MeterRegistry.class).counter(DelayQueueMeterNames.REDIS_DATA_LOST).count())
						.isOne();
					assertThat(watch.check()).as("said once").isFalse();
					await().atMost(RESTORED_WITHIN).until(() -> watched(context, "orders"));
					template.send("orders", "after-flush", Duration.ZERO);
					await().atMost(RESTORED_WITHIN).until(() -> dead.payloads.contains("after-flush"));
					await().atMost(RESTORED_WITHIN).ignoreExceptions().until(() -> {
						template.send("wide", "after-flush", Duration.ofHours(1));
						return true;
					});
				});
		}
	}

	@Test
	void theHealthOfAnApplicationThatSawRedisLoseItsDataSaysWhenAndWhy() {
		Assumptions.assumeTrue(TestRedis.canStartPrivateServer(), "needs a redis-server binary");
		try (RedisServerProcess redis = TestRedis.startPrivateServer()) {
			QueueContexts.runner(QueueContexts.uniquePrefix(), redis.springProperties()).run((context) -> {
				RedisDataLossWatch watch = context.getBean(RedisDataLossWatch.class);
				watch.check();
				redis.command("FLUSHALL");
				// Noticed by this look, or by the watch's own meanwhile.
				watch.check();
				assertThat(watch.lastLoss()).isNotNull();
				try (DelayQueueHealthCheck health = new DelayQueueHealthCheck(context.getBean(RedisMessageStore.class),
						context.getBean(DelayQueueRuntime.class), null, Duration.ofSeconds(5), watch)) {
					DelayQueueHealthCheck.Health checked = health.check();
					assertThat(checked.verdict()).isEqualTo(DelayQueueHealthCheck.Verdict.UP);
					assertThat(checked.details()).containsKey("redisDataLost");
					assertThat(checked.details().get("redisDataLost").toString()).contains("noticedAt")
						.contains("FLUSHALL");
				}
			});
		}
	}

	private static boolean watched(ApplicationContext context, String topic) {
		RedisMessageStore store = context.getBean(RedisMessageStore.class);
		StringRedisTemplate redis = context.getBean(StringRedisTemplate.class);
		return store.partitions()
			.names(topic)
			.stream()
			.allMatch((partition) -> Boolean.TRUE.equals(redis.hasKey(store.keys(partition).deadLettersWatch())));
	}

	static class Ticks {

		static volatile List<String> deliveries = new CopyOnWriteArrayList<>();

		@DelayListener(topic = "ticks")
		void on(Delivery<String> delivery) {
			deliveries.add(delivery.id());
		}

	}

	static class FailingOrders {

		@DelayListener(topic = "orders", maxAttempts = 1)
		void on(String payload) {
			throw new IllegalStateException("refused " + payload);
		}

	}

	static class DeadOrders {

		final List<String> payloads = new CopyOnWriteArrayList<>();

		@DelayListener(topic = "orders", deadLetters = true)
		void on(String payload) {
			this.payloads.add(payload);
		}

	}

}

package io.github.delayqueue.review;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;

import io.github.delayqueue.listener.DelayListener;
import io.github.delayqueue.listener.Delivery;
import io.github.delayqueue.metrics.DelayQueueMeterNames;
import io.github.delayqueue.runtime.RedisDataLossWatch;
import io.github.delayqueue.schedule.DelayQueueSchedules;
import io.github.delayqueue.schedule.Schedule;
import io.github.delayqueue.test.redis.RedisServerProcess;
import io.github.delayqueue.test.redis.TestRedis;
import io.github.delayqueue.testsupport.QueueContexts;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Adversarial review of "a Redis that lost its data is noticed and what the application
 * declares comes back by itself", on a Redis of the test's own: a restart from an older
 * snapshot under two instances, one declared 1 s schedule and schedules saved through the
 * API before and after the snapshot.
 */
@ExtendWith(OutputCaptureExtension.class)
class ScheduleDataLossReviewTests {

	private static final Duration RESTORED_WITHIN = Duration.ofSeconds(10);

	@Test
	void aRestartFromAnOlderSnapshotIsSaidOncePerInstanceAndTheDeclaredScheduleTicksAgainEverySecond(
			CapturedOutput output) {
		Assumptions.assumeTrue(TestRedis.canStartPrivateServer(), "needs a redis-server binary");
		try (RedisServerProcess redis = TestRedis.startPrivateServer()) {
			List<String> ticks = new CopyOnWriteArrayList<>();
			Beats.deliveries = ticks;
			ApplicationContextRunner runner = QueueContexts
				.runner(QueueContexts.uniquePrefix(), redis.springProperties())
				.withUserConfiguration(Beats.class)
				.withBean(MeterRegistry.class, SimpleMeterRegistry::new)
				.withPropertyValues("delay-queue.schedules.heartbeat.topic=beats",
						"delay-queue.schedules.heartbeat.fixed-rate=1s",
						"delay-queue.schedules.heartbeat.payload=beat");
			runner.run((first) -> runner.run((second) -> {
				List<RedisDataLossWatch> watches = List.of(first.getBean(RedisDataLossWatch.class),
						second.getBean(RedisDataLossWatch.class));
				DelayQueueSchedules schedules = first.getBean(DelayQueueSchedules.class);
				await().atMost(RESTORED_WITHIN).until(() -> ticks.size() >= 2);
				watches.forEach(RedisDataLossWatch::check);
				redis.command("SAVE");
				schedules.save(Schedule.fixedRate("saved-after-snapshot", "other", Duration.ofHours(1)));
				// Ticks sent (and handled) after the snapshot, and a look of each watch.
				int atSnapshot = ticks.size();
				await().atMost(RESTORED_WITHIN).until(() -> ticks.size() >= atSnapshot + 3);
				watches.forEach(RedisDataLossWatch::check);
				List<String> beforeRestart = List.copyOf(ticks);
				redis.stop();
				redis.start();
				await().atMost(RESTORED_WITHIN).until(() -> watches.stream().allMatch((w) -> w.lastLoss() != null));
				int atRestart = ticks.size();
				await().atMost(RESTORED_WITHIN).until(() -> ticks.size() >= atRestart + 4);
				watches.forEach(RedisDataLossWatch::check);
				for (var context : List.of(first, second)) {
					assertThat(
							context.getBean(MeterRegistry.class).counter(DelayQueueMeterNames.REDIS_DATA_LOST).count())
						.as("the loss counted once per instance")
						.isOne();
				}
				List<String> after = new ArrayList<>(ticks.subList(beforeRestart.size(), ticks.size()));
				assertThat(new HashSet<>(after)).as("each tick once after the restart: " + after).hasSameSizeAs(after);
				List<Long> times = after.stream()
					.map((id) -> Long.parseLong(id.substring(id.indexOf('~') + 1)))
					.sorted()
					.toList();
				for (int i = 1; i < times.size(); i++) {
					assertThat(times.get(i) - times.get(i - 1)).as("gap between ticks " + times).isEqualTo(1000);
				}
				// At least once: the snapshot's state sends again, with their ids, the
				// ticks
				// sent since the snapshot (within a minute: the misfire policy after
				// that),
				// as the messages of those not handled yet were lost with it.
				Set<String> again = new HashSet<>(after);
				again.retainAll(beforeRestart);
				assertThat(again).as("ticks sent again after the restart")
					.isSubsetOf(beforeRestart.subList(atSnapshot - 1, beforeRestart.size()));
				assertThat(output.toString()
					.lines()
					.filter((line) -> line.contains("ERROR")
							&& line.contains("'saved-after-snapshot' (topic 'other')")))
					.as("the schedule saved through the API, lost, is named once per instance")
					.hasSize(2);
			}));
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

package io.github.delayqueue.schedule;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import io.github.delayqueue.producer.InvalidMessageException;
import io.github.delayqueue.producer.SendResult;
import io.github.delayqueue.listener.DelayListener;
import io.github.delayqueue.listener.Delivery;
import io.github.delayqueue.store.ScheduleStore;
import io.github.delayqueue.store.redis.RedisMessageStore;
import io.github.delayqueue.test.redis.RedisServerProcess;
import io.github.delayqueue.test.redis.TestRedis;
import io.github.delayqueue.testsupport.QueueContexts;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * The schedules' bookkeeping on real Redis: the registry and the schedules hashes stay in
 * agreement through races between instances, and one broken topic or key stops no other
 * schedule (issue 34, items 1 to 4).
 */
class ScheduleBookkeepingTests {

	private static final Duration WAIT = Duration.ofSeconds(20);

	@Test
	void aSaveBetweenTheTwoHalvesOfARemoveLeavesTheScheduleVisibleAndTicking() {
		QueueContexts.runner(QueueContexts.uniquePrefix()).run((context) -> {
			ScheduleStore store = context.getBean(RedisMessageStore.class).schedules();
			DelayQueueSchedules schedules = context.getBean(DelayQueueSchedules.class);
			schedules.save(Schedule.fixedRate("race", "jobs", Duration.ofHours(1)));
			// Instance A removes the schedule from its partition...
			assertThat(store.remove("jobs", "race", null)).isTrue();
			// ...instance B saves it whole, and is told so...
			ScheduleInfo saved = schedules.save(Schedule.fixedRate("race", "jobs", Duration.ofHours(1)));
			// ...then A forgets the registration.
			store.unregister("race", "jobs");
			context.getBean(SchedulePoller.class).pollOnce();
			assertThat(schedules.get("race")).contains(saved);
			assertThat(schedules.list()).containsExactly(saved);
		});
	}

	@Test
	void ofTwoSavesOfOneNameOnTwoTopicsAtOnceOneIsRefusedAndTheOtherTicks() {
		ApplicationContextRunner runner = QueueContexts.runner(QueueContexts.uniquePrefix());
		runner.run((first) -> runner.run((second) -> {
			DelayQueueSchedules one = first.getBean(DelayQueueSchedules.class);
			DelayQueueSchedules other = second.getBean(DelayQueueSchedules.class);
			ExecutorService threads = Executors.newFixedThreadPool(2);
			try {
				for (int round = 0; round < 30; round++) {
					String name = "twice-" + round;
					CountDownLatch go = new CountDownLatch(1);
					Future<Boolean> onA = threads
						.submit(() -> saved(go, one, Schedule.fixedRate(name, "a", Duration.ofHours(1))));
					Future<Boolean> onB = threads
						.submit(() -> saved(go, other, Schedule.fixedRate(name, "b", Duration.ofHours(1))));
					go.countDown();
					assertThat(List.of(onA.get(), onB.get())).as(name).containsExactlyInAnyOrder(true, false);
				}
			}
			finally {
				threads.shutdownNow();
			}
			first.getBean(SchedulePoller.class).pollOnce();
			ScheduleStore store = first.getBean(RedisMessageStore.class).schedules();
			Set<String> onTopics = new HashSet<>();
			List<String> both = new ArrayList<>();
			for (String topic : List.of("a", "b")) {
				store.readTopic(topic).schedules().keySet().forEach((name) -> {
					if (!onTopics.add(name)) {
						both.add(name);
					}
				});
			}
			assertThat(both).isEmpty();
			assertThat(onTopics).hasSize(30);
			assertThat(one.list()).hasSize(30);
		}));
	}

	private static boolean saved(CountDownLatch go, DelayQueueSchedules schedules, Schedule schedule)
			throws InterruptedException {
		go.await();
		try {
			schedules.save(schedule);
			return true;
		}
		catch (IllegalArgumentException ex) {
			// Refused: the other save has the name, saved or still on its way.
			assertThat(ex.getMessage()).containsAnyOf("sends to topic", "may still be on its way");
			return false;
		}
	}

	@Test
	void aTopicWhosePartitionCountThisInstanceDoesNotShareStopsNoOtherSchedule() {
		String prefix = QueueContexts.uniquePrefix();
		QueueContexts.runner(prefix).withPropertyValues("delay-queue.topics.wide.partitions=3").run((wide) -> {
			wide.getBean(DelayQueueSchedules.class)
				.save(Schedule.fixedRate("wide-hourly", "wide", Duration.ofHours(1)));
			List<String> ticks = new CopyOnWriteArrayList<>();
			Beats.deliveries = ticks;
			QueueContexts.runner(prefix)
				.withUserConfiguration(Beats.class)
				.withPropertyValues("delay-queue.schedules.heartbeat.topic=beats",
						"delay-queue.schedules.heartbeat.fixed-rate=300ms",
						"delay-queue.schedules.heartbeat.payload=beat")
				.run((narrow) -> {
					await().atMost(WAIT).until(() -> ticks.size() >= 3);
					assertThat(narrow.getBean(DelayQueueSchedules.class).list())
						.extracting((info) -> info.schedule().name())
						.containsExactly("heartbeat");
				});
		});
	}

	@Test
	@ExtendWith(OutputCaptureExtension.class)
	void aSchedulesHashOfTheWrongTypeIsMovedAsideAndTheOtherTopicsTick(CapturedOutput output) {
		String prefix = QueueContexts.uniquePrefix();
		List<String> ticks = new CopyOnWriteArrayList<>();
		Beats.deliveries = ticks;
		QueueContexts.runner(prefix)
			.withUserConfiguration(Beats.class)
			.withPropertyValues("delay-queue.schedules.heartbeat.topic=beats",
					"delay-queue.schedules.heartbeat.fixed-rate=300ms", "delay-queue.schedules.heartbeat.payload=beat")
			.run((context) -> {
				RedisMessageStore store = context.getBean(RedisMessageStore.class);
				context.getBean(DelayQueueSchedules.class)
					.save(Schedule.fixedRate("broken-hourly", "broken", Duration.ofHours(1)));
				StringRedisTemplate redis = context.getBean(StringRedisTemplate.class);
				String schedulesKey = store.keys("broken").schedules();
				redis.delete(schedulesKey);
				redis.opsForValue().set(schedulesKey, "not a hash");
				int before = ticks.size();
				await().atMost(WAIT).until(() -> ticks.size() >= before + 3);
				assertThat(redis.keys(schedulesKey + ":quarantined:*")).hasSize(1);
				// Said by the poller just after it moved the key aside.
				await().atMost(WAIT)
					.untilAsserted(() -> assertThat(output)
						.contains("Partition 'broken' of topic 'broken' had keys of the wrong type, moved aside"));
				assertThat(output).doesNotContain("Schedule 'broken'");
			});
	}

	@Test
	void triggersInTheSameMillisecondSendOneMessageEach() {
		// A Redis of its own: in CI the shared one lost some of these messages once
		// (under
		// investigation, see docs/reliability.md); this test is about the ids.
		Assumptions.assumeTrue(TestRedis.canStartPrivateServer(), "needs a redis-server binary");
		try (RedisServerProcess redis = TestRedis.startPrivateServer()) {
			triggers(QueueContexts.runner(QueueContexts.uniquePrefix(), redis.springProperties()));
		}
	}

	private static void triggers(ApplicationContextRunner runner) {
		runner.run((context) -> {
			DelayQueueSchedules schedules = context.getBean(DelayQueueSchedules.class);
			schedules.save(Schedule.fixedRate("manual", "manuals", Duration.ofHours(1)));
			Set<String> sent = new HashSet<>();
			for (int i = 0; i < 20; i++) {
				SendResult result = schedules.trigger("manual");
				assertThat(result.duplicate()).isFalse();
				sent.add(result.id());
			}
			assertThat(sent).hasSize(20).allMatch((id) -> id.matches("manual~\\d+~\\d{1,5}"));
			RedisMessageStore store = context.getBean(RedisMessageStore.class);
			for (String id : sent) {
				assertThat(store.inspect("manuals", id, 100)).as(id + " stored").isNotNull();
			}
		});
	}

	@Test
	void aSchedulePayloadTheTopicsListenerCannotReadIsRefusedWhenSavedAndFailsTheStartWhenDeclared() {
		ApplicationContextRunner runner = QueueContexts.runner(QueueContexts.uniquePrefix())
			.withUserConfiguration(Reminders.class);
		runner.run((context) -> {
			DelayQueueSchedules schedules = context.getBean(DelayQueueSchedules.class);
			assertThatExceptionOfType(InvalidMessageException.class)
				.isThrownBy(() -> schedules.save(Schedule.fixedRate("empty", "reminders", Duration.ofHours(1))))
				.withMessageContaining("dead-lettered at every tick")
				.withMessageContaining(Reminders.class.getName() + ".on");
			assertThat(schedules.get("empty")).isEmpty();
			schedules
				.save(Schedule.fixedRate("hello", "reminders", Duration.ofHours(1)).withPayload("{\"text\":\"hi\"}"));
		});
		runner
			.withPropertyValues("delay-queue.schedules.empty.topic=reminders",
					"delay-queue.schedules.empty.fixed-rate=1h")
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.rootCause()
				.hasMessageContaining("Schedule 'empty' has a payload that would be dead-lettered at every tick"));
	}

	static class Reminders {

		record Reminder(String text) {
		}

		@DelayListener(topic = "reminders")
		void on(Reminder reminder) {
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

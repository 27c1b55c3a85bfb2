package io.github.delayqueue.review;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import io.github.delayqueue.producer.DelayMessage;
import io.github.delayqueue.producer.DelayQueueTemplate;
import io.github.delayqueue.listener.DelayListener;
import io.github.delayqueue.schedule.DelayQueueSchedules;
import io.github.delayqueue.schedule.Schedule;
import io.github.delayqueue.schedule.SchedulePoller;
import io.github.delayqueue.store.redis.RedisMessageStore;
import io.github.delayqueue.test.redis.FaultyRedisProxy;
import io.github.delayqueue.test.redis.RedisServerProcess;
import io.github.delayqueue.test.redis.TestRedis;
import io.github.delayqueue.testsupport.QueueContexts;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatRuntimeException;
import static org.awaitility.Awaitility.await;

/**
 * Adversarial review of the schedule registry (issue 34): a claim whose reply was lost,
 * the topics the registry keeps forever, and the dead-letter watches of a partitioned
 * topic after Redis lost its data.
 */
class ScheduleRegistryReviewTests {

	private static final Duration RESTORED_WITHIN = Duration.ofSeconds(10);

	@Test
	void aSaveWhoseRegistryClaimReplyWasLostDoesNotKeepTheNameFromAnotherTopic() {
		TestRedis redis = TestRedis.shared();
		try (FaultyRedisProxy proxy = FaultyRedisProxy.start(redis.host(), redis.port())) {
			QueueContexts.runner(QueueContexts.uniquePrefix(), proxy).run((context) -> {
				DelayQueueSchedules schedules = context.getBean(DelayQueueSchedules.class);
				FaultyRedisProxy.Fault lost = proxy.delayNextReplyToCommand(
						FaultyRedisProxy.withArgumentContaining("EVALSHA", "lost-claim"), Duration.ofSeconds(6));
				assertThatRuntimeException()
					.isThrownBy(() -> schedules.save(Schedule.fixedRate("lost-claim", "a", Duration.ofHours(1))));
				assertThat(lost.hasFired()).isTrue();
				await().atMost(RESTORED_WITHIN).ignoreExceptions().until(() -> {
					schedules.list();
					return true;
				});
				assertThat(schedules.get("lost-claim")).as("the save was refused and nothing is saved").isEmpty();
				// The user, told the save on 'a' failed and seeing no schedule, saves it
				// on 'b'.
				assertThat(
						schedules.save(Schedule.fixedRate("lost-claim", "b", Duration.ofHours(1))).schedule().topic())
					.isEqualTo("b");
			});
		}
	}

	@Test
	void aLookAtTheSchedulesCostsNoMoreOnceTheSchedulesOfManyTopicsAreRemoved() {
		TestRedis redis = TestRedis.shared();
		try (FaultyRedisProxy proxy = FaultyRedisProxy.start(redis.host(), redis.port())) {
			// A send timeout of two seconds (one timed out on a loaded machine): the wait
			// below is two of them and a second.
			QueueContexts.runner(QueueContexts.uniquePrefix(), proxy)
				.withPropertyValues("delay-queue.producer.send-timeout=2s")
				.run((context) -> {
					DelayQueueSchedules schedules = context.getBean(DelayQueueSchedules.class);
					SchedulePoller poller = context.getBean(SchedulePoller.class);
					int before = scriptsRunBy(proxy, poller);
					for (int i = 0; i < 200; i++) {
						String name = "tenant-" + i;
						schedules.save(Schedule.fixedRate(name, "tenant-" + i, Duration.ofHours(1)));
						assertThat(schedules.remove(name)).isTrue();
					}
					assertThat(schedules.list()).isEmpty();
					// A topic is forgotten once no save of it can be on its way (two send
					// timeouts and a second after its last claim), by the first look
					// after.
					await().atMost(Duration.ofSeconds(30))
						.untilAsserted(() -> assertThat(scriptsRunBy(proxy, poller))
							.as("scripts run by one look with no schedule, before %d", before)
							.isLessThanOrEqualTo(before + 5));
				});
		}
	}

	private static int scriptsRunBy(FaultyRedisProxy proxy, SchedulePoller poller) {
		int before = proxy.forwardedCount(FaultyRedisProxy.named("EVALSHA", "EVAL"));
		poller.sendDueTicks();
		return proxy.forwardedCount(FaultyRedisProxy.named("EVALSHA", "EVAL")) - before;
	}

	@Test
	void messagesThatDieJustAfterAFlushAllReachTheDeadLetterListener() {
		Assumptions.assumeTrue(TestRedis.canStartPrivateServer(), "needs a redis-server binary");
		try (RedisServerProcess redis = TestRedis.startPrivateServer()) {
			QueueContexts.runner(QueueContexts.uniquePrefix(), redis.springProperties())
				.withUserConfiguration(FailingOrders.class, DeadOrders.class)
				.withPropertyValues("delay-queue.topics.orders.partitions=3",
						"delay-queue.topics.orders.backoff.initial-interval=10ms")
				.run((context) -> {
					DelayQueueTemplate template = context.getBean(DelayQueueTemplate.class);
					DeadOrders dead = context.getBean(DeadOrders.class);
					template.send(DelayMessage.builder("orders", "before").id("before").delay(Duration.ZERO).build());
					await().atMost(RESTORED_WITHIN).until(() -> dead.payloads.contains("before"));
					redis.command("FLUSHALL");
					await().atMost(RESTORED_WITHIN).ignoreExceptions().until(() -> {
						for (int i = 0; i < 12; i++) {
							template.send(DelayMessage.builder("orders", "after-" + i)
								.id("after-" + i)
								.delay(Duration.ZERO)
								.build());
						}
						return true;
					});
					await().atMost(RESTORED_WITHIN)
						.untilAsserted(() -> assertThat(dead.payloads).as("dead letters delivered")
							.containsAll(List.of("after-0", "after-1", "after-2", "after-3", "after-4", "after-5",
									"after-6", "after-7", "after-8", "after-9", "after-10", "after-11")));
				});
		}
	}

	@Test
	void aScheduleSavedByANewerVersionHidesNoOtherScheduleFromTheList() {
		String prefix = QueueContexts.uniquePrefix();
		QueueContexts.runner(prefix).run((context) -> {
			DelayQueueSchedules schedules = context.getBean(DelayQueueSchedules.class);
			schedules.save(Schedule.fixedRate("good", "jobs", Duration.ofHours(1)));
			schedules.save(Schedule.fixedRate("future", "jobs", Duration.ofHours(1)));
			StringRedisTemplate redis = context.getBean(StringRedisTemplate.class);
			String key = context.getBean(RedisMessageStore.class).keys("jobs").schedules();
			String state = (String) redis.opsForHash().get(key, "future");
			// "<next tick>:<paused>:1<FIELD>..." as a later version might write
			// "2<FIELD>...".
			int definition = state.indexOf(':', state.indexOf(':') + 1) + 1;
			redis.opsForHash()
				.put(key, "future", state.substring(0, definition) + "2" + state.substring(definition + 1));
			assertThat(schedules.list()).extracting((info) -> info.schedule().name()).contains("good");
		});
	}

	@Test
	void aScheduleMovedToAnotherTopicDuringALookIsNotRemovedByThatLook() {
		TestRedis redis = TestRedis.shared();
		String prefix = QueueContexts.uniquePrefix();
		try (FaultyRedisProxy proxy = FaultyRedisProxy.start(redis.host(), redis.port())) {
			QueueContexts.runner(prefix).run((user) -> {
				DelayQueueSchedules schedules = user.getBean(DelayQueueSchedules.class);
				// The registry lists topic x before topic y.
				schedules.save(Schedule.fixedRate("moving", "x", Duration.ofHours(1)));
				schedules.save(Schedule.fixedRate("other", "y", Duration.ofHours(1)));
				schedules.remove("other");
				String xSchedules = user.getBean(RedisMessageStore.class).keys("x").schedules();
				QueueContexts.runner(prefix, proxy)
					.withPropertyValues("delay-queue.producer.send-timeout=5s")
					.run((poller) -> {
						// Another instance's look reads topic x (the reply is 1.5 s on
						// its way)...
						FaultyRedisProxy.Fault slow = proxy.delayNextReplyToCommand(
								FaultyRedisProxy.withArgumentContaining("EVALSHA", xSchedules),
								Duration.ofMillis(1500));
						assertThat(slow.awaitFired(Duration.ofSeconds(10))).isTrue();
						// ...the user moves the schedule to topic y, as the docs say:
						// remove, then
						// save...
						assertThat(schedules.remove("moving")).isTrue();
						schedules.save(Schedule.fixedRate("moving", "y", Duration.ofHours(1)));
						// ...and that look goes on to read topic y.
						poller.getBean(SchedulePoller.class).sendDueTicks();
						assertThat(schedules.get("moving")).as("the schedule the user was told is saved").isPresent();
					});
			});
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

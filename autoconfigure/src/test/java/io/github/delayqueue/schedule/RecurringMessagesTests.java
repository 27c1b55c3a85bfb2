package io.github.delayqueue.schedule;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import io.github.delayqueue.listener.DelayListener;
import io.github.delayqueue.listener.Delivery;
import io.github.delayqueue.store.ScheduleState;
import io.github.delayqueue.store.ScheduleStore;
import io.github.delayqueue.store.redis.RedisMessageStore;
import io.github.delayqueue.testsupport.QueueContexts;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.awaitility.Awaitility.await;

/**
 * Recurring messages on real Redis: each tick sent once across several instances that
 * declare the same schedule, through restarts and an instance gone; the misfire policies
 * after an outage; a changed definition, pause, resume, trigger and remove.
 */
class RecurringMessagesTests {

	private static final Duration WAIT = Duration.ofSeconds(20);

	private static final List<String> EVERY_300_MS = List.of("delay-queue.schedules.heartbeat.topic=beats",
			"delay-queue.schedules.heartbeat.fixed-rate=300ms", "delay-queue.schedules.heartbeat.payload=beat");

	@Test
	void eachTickIsDeliveredOnceAcrossThreeInstancesWhileTheyRestartAndOneGoesAway() {
		String prefix = QueueContexts.uniquePrefix();
		List<String> ticks = new CopyOnWriteArrayList<>();
		Beats.deliveries = ticks;
		ApplicationContextRunner runner = QueueContexts.runner(prefix)
			.withUserConfiguration(Beats.class)
			.withPropertyValues(EVERY_300_MS.toArray(String[]::new));
		List<Instance> instances = new ArrayList<>();
		try {
			for (int i = 0; i < 3; i++) {
				instances.add(start(runner));
			}
			await().atMost(WAIT).until(() -> ticks.size() >= 5);
			instances.remove(0).close();
			instances.add(start(runner));
			await().atMost(WAIT).until(() -> ticks.size() >= 10);
			instances.remove(0).close();
			await().atMost(WAIT).until(() -> ticks.size() >= 15);
		}
		finally {
			instances.forEach(Instance::close);
		}
		List<Long> times = ticks.stream().map((id) -> Long.parseLong(id.substring("heartbeat~".length()))).toList();
		assertThat(ticks).doesNotHaveDuplicates();
		List<Long> sorted = times.stream().sorted().toList();
		for (int i = 1; i < sorted.size(); i++) {
			assertThat(sorted.get(i) - sorted.get(i - 1)).as("ticks %s", sorted).isEqualTo(300);
		}
	}

	@Test
	void afterAnOutageTheMisfirePolicyDecidesWhatIsSentForTheMissedTicks() {
		QueueContexts.runner(QueueContexts.uniquePrefix()).run((context) -> {
			RedisMessageStore store = context.getBean(RedisMessageStore.class);
			DelayQueueSchedules schedules = context.getBean(DelayQueueSchedules.class);
			for (MisfirePolicy policy : MisfirePolicy.values()) {
				String name = "minutely-" + policy.name().toLowerCase();
				schedules.save(Schedule.cron(name, "reports", "0 * * * * *").withMisfire(policy));
			}
			// Every instance was down for ten minutes: the next tick of each is ten
			// minutes old.
			long now = store.schedules().read("reports", "minutely-skip").nowMillis();
			long tenMinutesAgo = (now / 60_000 - 10) * 60_000;
			StringRedisTemplate redis = context.getBean(StringRedisTemplate.class);
			for (MisfirePolicy policy : MisfirePolicy.values()) {
				String name = "minutely-" + policy.name().toLowerCase();
				String stored = store.schedules().read("reports", name).schedules().get(name).stored();
				// <next tick>:<paused>:<definition>
				String definition = stored.substring(stored.indexOf(':') + 3);
				redis.opsForHash()
					.put(store.keys(store.partitions().nameFor("reports", name)).schedules(), name,
							tenMinutesAgo + ":0:" + definition);
			}
			SchedulePoller poller = context.getBean(SchedulePoller.class);
			poller.pollOnce();
			Map<String, Long> sent = new TreeMap<>();
			for (MisfirePolicy policy : MisfirePolicy.values()) {
				String name = "minutely-" + policy.name().toLowerCase();
				sent.put(name,
						redis.opsForHash()
							.keys(store.keys("reports").messages())
							.stream()
							.filter((id) -> ((String) id).startsWith(name + "~"))
							.count());
				assertThat(schedules.get(name).orElseThrow().nextFire().toEpochMilli()).isGreaterThan(now);
			}
			// Ticks within the last minute are on time: at most one, for each policy.
			assertThat(sent.get("minutely-skip")).isBetween(0L, 1L);
			assertThat(sent.get("minutely-fire_once")).isEqualTo(sent.get("minutely-skip") + 1);
			assertThat(sent.get("minutely-fire_all")).isBetween(9L, 11L);
		});
	}

	@Test
	void aChangedDefinitionReplacesTheNextTickWhileTheSameOneChangesNothing() {
		QueueContexts.runner(QueueContexts.uniquePrefix()).run((context) -> {
			DelayQueueSchedules schedules = context.getBean(DelayQueueSchedules.class);
			ScheduleInfo nightly = schedules
				.save(Schedule.cron("digest", "digests", "0 0 2 * * *").withZone(ZoneId.of("Europe/Berlin")));
			assertThat(schedules
				.save(Schedule.cron("digest", "digests", "0 0 2 * * *").withZone(ZoneId.of("Europe/Berlin"))))
				.isEqualTo(nightly);
			ScheduleInfo hourly = schedules.save(Schedule.cron("digest", "digests", "@hourly"));
			assertThat(hourly.nextFire()).isNotEqualTo(nightly.nextFire());
			assertThat(hourly.nextFire().toEpochMilli() % 3_600_000).isZero();
			assertThat(schedules.list()).extracting((info) -> info.schedule().trigger())
				.containsExactly(new ScheduleTrigger.Cron("@hourly"));
			assertThatIllegalArgumentException()
				.isThrownBy(() -> schedules.save(Schedule.cron("digest", "other-topic", "@hourly")))
				.withMessageContaining("remove it first");
		});
	}

	@Test
	void aPausedScheduleSendsNothingUntilResumedAndATriggerSendsOneMessageNow() {
		QueueContexts.runner(QueueContexts.uniquePrefix())
			.withUserConfiguration(Beats.class)
			.withPropertyValues(EVERY_300_MS.toArray(String[]::new))
			.run((context) -> {
				List<String> ticks = new CopyOnWriteArrayList<>();
				Beats.deliveries = ticks;
				DelayQueueSchedules schedules = context.getBean(DelayQueueSchedules.class);
				await().atMost(WAIT).until(() -> ticks.size() >= 2);
				assertThat(schedules.pause("heartbeat")).isTrue();
				assertThat(schedules.pause("heartbeat")).isFalse();
				int paused = ticks.size();
				// A second in which a running schedule would have sent three ticks.
				await().pollDelay(Duration.ofSeconds(1)).until(() -> true);
				assertThat(ticks).hasSizeLessThanOrEqualTo(paused + 1);
				int beforeTrigger = ticks.size();
				assertThat(schedules.trigger("heartbeat").duplicate()).isFalse();
				await().atMost(WAIT).until(() -> ticks.size() == beforeTrigger + 1);
				assertThat(schedules.resume("heartbeat")).isTrue();
				await().atMost(WAIT).until(() -> ticks.size() >= beforeTrigger + 3);
				assertThat(schedules.remove("heartbeat")).isTrue();
				assertThat(schedules.get("heartbeat")).isEmpty();
				assertThatIllegalArgumentException().isThrownBy(() -> schedules.pause("heartbeat"))
					.withMessage("No schedule named 'heartbeat'");
			});
	}

	@Test
	void aSaveFromAStateReadBeforeATickWasSentIsRefusedSoNoTickComesTwice() {
		QueueContexts.runner(QueueContexts.uniquePrefix()).run((context) -> {
			ScheduleStore store = context.getBean(RedisMessageStore.class).schedules();
			DelayQueueSchedules schedules = context.getBean(DelayQueueSchedules.class);
			schedules.save(Schedule.fixedRate("sec", "secs", Duration.ofHours(1)));
			ScheduleState read = store.read("secs", "sec").schedules().get("sec");
			// Another instance sends the tick meanwhile.
			assertThat(store.advance(read, read.nextTickMillis() + 3_600_000, List.of(read.nextTickMillis()),
					"tick".getBytes(StandardCharsets.UTF_8)))
				.isTrue();
			assertThat(store.save("secs", "sec",
					ScheduleDefinitions.of(Schedule.fixedRate("sec", "secs", Duration.ofMinutes(1))),
					read.nextTickMillis() - 1000, read))
				.isNull();
			ScheduleInfo saved = schedules.save(Schedule.fixedRate("sec", "secs", Duration.ofMinutes(1)));
			assertThat(saved.nextFire().toEpochMilli()).isGreaterThan(read.nextTickMillis() - 3_600_000);
		});
	}

	@Test
	void aTriggeredMessageNeverTakesTheIdOfATick() {
		QueueContexts.runner(QueueContexts.uniquePrefix()).run((context) -> {
			DelayQueueSchedules schedules = context.getBean(DelayQueueSchedules.class);
			schedules.save(Schedule.cron("report", "reports", "@daily"));
			assertThat(schedules.trigger("report").id()).matches("report~[0-9]+~[0-9]{1,5}");
		});
	}

	@Test
	void aScheduleThatCannotBeReadOrSavedLeavesTheOthersTicking() {
		List<String> ticks = new CopyOnWriteArrayList<>();
		Beats.deliveries = ticks;
		String prefix = QueueContexts.uniquePrefix();
		QueueContexts.runner(prefix).run((context) -> {
			context.getBean(DelayQueueSchedules.class).save(Schedule.cron("taken", "elsewhere", "@daily"));
			RedisMessageStore store = context.getBean(RedisMessageStore.class);
			context.getBean(StringRedisTemplate.class)
				.opsForHash()
				.put(store.keys(store.partitions().nameFor("beats", "garbled")).schedules(), "garbled", "not a state");
		});
		QueueContexts.runner(prefix)
			.withUserConfiguration(Beats.class)
			.withPropertyValues(EVERY_300_MS.toArray(String[]::new))
			.withPropertyValues("delay-queue.schedules.taken.topic=beats", "delay-queue.schedules.taken.cron=@hourly")
			.run((context) -> await().atMost(WAIT).until(() -> ticks.size() >= 3));
	}

	@Test
	void aScheduleWithoutATopicOrWithABadCronIsRefusedAtStartupNamingTheProperty() {
		QueueContexts.runner(QueueContexts.uniquePrefix())
			.withPropertyValues("delay-queue.schedules.broken.topic=t",
					"delay-queue.schedules.broken.cron=61 * * * * *")
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.hasStackTraceContaining("delay-queue.schedules.broken: Schedule 'broken': Invalid cron expression"));
		QueueContexts.runner(QueueContexts.uniquePrefix())
			.withPropertyValues("delay-queue.schedules.lost.cron=@daily")
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.hasStackTraceContaining("delay-queue.schedules.lost: topic must be set"));
	}

	@Test
	void aZoneWithAFixedRateOrBothTriggersAreRefusedAtStartupNamingTheProblem() {
		QueueContexts.runner(QueueContexts.uniquePrefix())
			.withPropertyValues("delay-queue.schedules.zoned.topic=t", "delay-queue.schedules.zoned.fixed-rate=1s",
					"delay-queue.schedules.zoned.zone=Europe/Berlin")
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.hasStackTraceContaining(
						"delay-queue.schedules.zoned: zone is set, but a fixed rate has no time zone"));
		QueueContexts.runner(QueueContexts.uniquePrefix())
			.withPropertyValues("delay-queue.schedules.both.topic=t", "delay-queue.schedules.both.fixed-rate=1s",
					"delay-queue.schedules.both.cron=@daily")
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.hasStackTraceContaining("delay-queue.schedules.both: set cron or fixed-rate, not both"));
	}

	/** Runs a context of the runner on a thread of its own until it is closed. */
	private static Instance start(ApplicationContextRunner runner) {
		Instance instance = new Instance();
		instance.thread = new Thread(() -> runner.run((context) -> {
			instance.started.countDown();
			instance.stop.await();
		}));
		instance.thread.start();
		try {
			assertThat(instance.started.await(30, TimeUnit.SECONDS)).isTrue();
		}
		catch (InterruptedException ex) {
			throw new IllegalStateException(ex);
		}
		return instance;
	}

	private static final class Instance implements AutoCloseable {

		final CountDownLatch started = new CountDownLatch(1);

		final CountDownLatch stop = new CountDownLatch(1);

		Thread thread;

		@Override
		public void close() {
			this.stop.countDown();
			try {
				this.thread.join(30_000);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class Beats {

		static volatile List<String> deliveries = new CopyOnWriteArrayList<>();

		@DelayListener(topic = "beats")
		void on(Delivery<String> delivery) {
			assertThat(delivery.payload()).isEqualTo("beat");
			deliveries.add(delivery.id());
		}

	}

}

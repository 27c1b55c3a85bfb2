package io.github.delayqueue.review;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import io.github.delayqueue.listener.DelayListener;
import io.github.delayqueue.listener.Delivery;
import io.github.delayqueue.schedule.DelayQueueSchedules;
import io.github.delayqueue.schedule.Schedule;
import io.github.delayqueue.schedule.ScheduleInfo;
import io.github.delayqueue.schedule.SchedulePoller;
import io.github.delayqueue.store.TopicPartitions;
import io.github.delayqueue.store.redis.RedisMessageStore;
import io.github.delayqueue.store.redis.TopicKeys;
import io.github.delayqueue.test.redis.TestRedis;
import io.github.delayqueue.test.redis.FaultyRedisProxy;
import io.github.delayqueue.testsupport.QueueContexts;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Adversarial review of the schedules' bookkeeping after issue 34, on real Redis: races
 * of pause, resume and save between instances, bad entries in the registry and in a
 * topic's schedules, and what the WARN lines tell an operator. Promise under attack: "a
 * schedule never stops without saying so".
 */
@ExtendWith(OutputCaptureExtension.class)
class ScheduleRacesReviewTests {

	private static final Duration RESTORED_WITHIN = Duration.ofSeconds(10);

	private static final String DECLARED = "delay-queue.schedules.heartbeat.";

	@Test
	void aDeclaredScheduleWhoseStoredDefinitionIsGarbageIsRestored() {
		// The state is in its form ("<tick>:<paused>:<definition>"), the definition is
		// not one any version wrote: the poller found it "there" and never saved it
		// again, sending no tick of it.
		String prefix = QueueContexts.uniquePrefix();
		List<String> ticks = new CopyOnWriteArrayList<>();
		Beats.deliveries = ticks;
		QueueContexts.runner(prefix)
			.withUserConfiguration(Beats.class)
			.withPropertyValues(DECLARED + "topic=beats", DECLARED + "fixed-rate=300ms", DECLARED + "payload=beat")
			.run((context) -> {
				await().atMost(RESTORED_WITHIN).until(() -> ticks.size() >= 2);
				StringRedisTemplate redis = context.getBean(StringRedisTemplate.class);
				String stateKey = context.getBean(RedisMessageStore.class).keys("beats").schedules();
				redis.opsForHash().put(stateKey, "heartbeat", "1000:0:garbage");
				int before = ticks.size();
				await().atMost(RESTORED_WITHIN).until(() -> ticks.size() >= before + 3);
			});
	}

	@Test
	void garbageInTheRegistryStopsNoDeclaredSchedule() {
		// Garbage in <prefix>:schedules: the name registered to a topic that is no topic,
		// its last claim a time that is no number. The poller registers the schedule
		// again where it finds it (once a save elsewhere cannot be on its way): its claim
		// failed on the time, in Lua, at every look, and no tick was sent any more.
		String prefix = QueueContexts.uniquePrefix();
		List<String> ticks = new CopyOnWriteArrayList<>();
		Beats.deliveries = ticks;
		QueueContexts.runner(prefix)
			.withUserConfiguration(Beats.class)
			.withPropertyValues(DECLARED + "topic=beats", DECLARED + "fixed-rate=300ms", DECLARED + "payload=beat")
			.run((context) -> {
				await().atMost(RESTORED_WITHIN).until(() -> ticks.size() >= 2);
				StringRedisTemplate redis = context.getBean(StringRedisTemplate.class);
				String registry = TopicKeys.scheduleRegistry(prefix);
				redis.opsForHash().put(registry, "heartbeat", "no{topic}");
				redis.opsForHash().put(registry, "~#heartbeat", "garbage");
				int before = ticks.size();
				Duration saveTime = context.getBean(RedisMessageStore.class).schedules().saveTime();
				await().atMost(RESTORED_WITHIN.plus(saveTime)).until(() -> ticks.size() >= before + 3);
				assertThat(context.getBean(DelayQueueSchedules.class).get("heartbeat")).isPresent();
			});
	}

	@Test
	void aResumeRacingASaveOfANewDefinitionTicksByTheNewDefinition() {
		// Instance A resumes a paused hourly schedule; the read its resume starts with is
		// answered late, and meanwhile instance B gives the schedule a definition of
		// every 300 ms (kept paused). A then resumed it at the next tick of the hourly
		// definition: the new definition sent nothing for an hour, silently.
		TestRedis redis = TestRedis.shared();
		String prefix = QueueContexts.uniquePrefix();
		List<String> ticks = new CopyOnWriteArrayList<>();
		Beats.deliveries = ticks;
		try (FaultyRedisProxy proxy = FaultyRedisProxy.start(redis.host(), redis.port())) {
			QueueContexts.runner(prefix).withUserConfiguration(Beats.class).run((b) -> {
				DelayQueueSchedules fromB = b.getBean(DelayQueueSchedules.class);
				fromB.save(Schedule.fixedRate("racing", "beats", Duration.ofHours(1)).withPayload("hourly"));
				fromB.pause("racing");
				String stateKey = b.getBean(RedisMessageStore.class).keys("beats").schedules();
				QueueContexts.runner(prefix, proxy).run((a) -> {
					a.getBean(SchedulePoller.class).stop();
					FaultyRedisProxy.Fault late = proxy.delayNextReplyToCommand(
							FaultyRedisProxy.withArgumentContaining("EVALSHA", stateKey), Duration.ofMillis(1500));
					Thread resume = new Thread(() -> a.getBean(DelayQueueSchedules.class).resume("racing"));
					resume.start();
					assertThat(late.awaitFired(Duration.ofSeconds(5))).isTrue();
					fromB.save(Schedule.fixedRate("racing", "beats", Duration.ofMillis(300)).withPayload("fast"));
					resume.join(10_000);
					ScheduleInfo info = fromB.get("racing").orElseThrow();
					assertThat(info.paused()).isFalse();
					assertThat(info.nextFire()).as("the next tick of every 300 ms")
						.isBefore(java.time.Instant.now().plusSeconds(60));
					await().atMost(RESTORED_WITHIN).until(() -> ticks.size() >= 3);
				});
			});
		}
	}

	@Test
	void aPartitionMovedAsideIsReportedAsAPartitionOfItsTopicNotAsASchedule(CapturedOutput output) {
		String prefix = QueueContexts.uniquePrefix();
		QueueContexts.runner(prefix).withPropertyValues("delay-queue.topics.jobs.partitions=2").run((context) -> {
			DelayQueueSchedules schedules = context.getBean(DelayQueueSchedules.class);
			schedules.save(Schedule.fixedRate("report", "jobs", Duration.ofHours(1)));
			RedisMessageStore store = context.getBean(RedisMessageStore.class);
			StringRedisTemplate redis = context.getBean(StringRedisTemplate.class);
			String other = null;
			for (String partition : TopicPartitions.names("jobs", 2)) {
				if (!redis.opsForHash().hasKey(store.keys(partition).schedules(), "report")) {
					other = store.keys(partition).schedules();
				}
			}
			redis.opsForValue().set(other, "not a hash");
			await().atMost(RESTORED_WITHIN).until(() -> output.toString().contains("moved aside"));
			String line = output.toString().lines().filter((l) -> l.contains("moved aside")).findFirst().orElseThrow();
			assertThat(line).contains("topic 'jobs'").doesNotContain("Schedule 'jobs");
		});
	}

	@Test
	void aScheduleThatCannotBeSentAgainAfterItRecoveredIsSaidAgain(CapturedOutput output) {
		// The WARN of a schedule that could not be sent was said once per message for the
		// life of the instance: a second outage of its partition, hours later, with the
		// same error, stopped it without a word.
		String prefix = QueueContexts.uniquePrefix();
		QueueContexts.runner(prefix).run((context) -> {
			context.getBean(DelayQueueSchedules.class)
				.save(Schedule.fixedRate("unsendable", "quiet", Duration.ofMillis(200)));
			StringRedisTemplate redis = context.getBean(StringRedisTemplate.class);
			String messages = context.getBean(RedisMessageStore.class).keys("quiet").messages();
			await().atMost(RESTORED_WITHIN).until(() -> redis.opsForHash().size(messages) >= 2);
			for (int outage = 1; outage <= 2; outage++) {
				redis.delete(messages);
				redis.opsForValue().set(messages, "not a hash");
				int said = outage;
				await().atMost(RESTORED_WITHIN)
					.until(() -> output.toString()
						.lines()
						.filter((line) -> line.contains("WARN")
								&& line.contains("'unsendable' of topic 'quiet' could not be sent"))
						.count() == said);
				redis.delete(messages);
				await().atMost(RESTORED_WITHIN).until(() -> redis.opsForHash().size(messages) >= 2);
			}
		});
	}

	@Test
	void threeInstancesRacingSavesRemovesPausesResumesAndTriggersOfOneNameNeverTickItTwice() throws Exception {
		// Three instances (one direct, two 5 ms and 30 ms away, replies of scripts
		// dropped now and then so that Lettuce sends them again) save one name on two
		// topics, remove, pause, resume and trigger it at random for 6 s. A fixed rate
		// of 500 ms: every save and resume sets the next tick at least 500 ms after every
		// tick sent, so two ticks closer than that mean two states ticking at once.
		TestRedis redis = TestRedis.shared();
		String prefix = QueueContexts.uniquePrefix();
		List<String> ticks = new CopyOnWriteArrayList<>();
		TwoTopics.deliveries = ticks;
		long rate = 500;
		try (FaultyRedisProxy near = FaultyRedisProxy.start(redis.host(), redis.port());
				FaultyRedisProxy far = FaultyRedisProxy.start(redis.host(), redis.port())) {
			near.latency(Duration.ofMillis(5));
			far.latency(Duration.ofMillis(30));
			QueueContexts.runner(prefix).withUserConfiguration(TwoTopics.class).run((x) -> {
				QueueContexts.runner(prefix, near).withUserConfiguration(TwoTopics.class).run((y) -> {
					QueueContexts.runner(prefix, far).withUserConfiguration(TwoTopics.class).run((z) -> {
						List<DelayQueueSchedules> apis = List.of(x.getBean(DelayQueueSchedules.class),
								y.getBean(DelayQueueSchedules.class), z.getBean(DelayQueueSchedules.class));
						long end = System.currentTimeMillis() + 6_000;
						List<Thread> threads = new java.util.ArrayList<>();
						List<Throwable> unexpected = new CopyOnWriteArrayList<>();
						for (int i = 0; i < apis.size(); i++) {
							DelayQueueSchedules api = apis.get(i);
							long seed = i;
							threads.add(new Thread(() -> race(api, new java.util.Random(seed), end, rate, unexpected)));
						}
						threads.forEach(Thread::start);
						while (System.currentTimeMillis() < end) {
							(((System.nanoTime() / 1000) % 2 == 0) ? near : far)
								.dropNextReplyTo(FaultyRedisProxy.named("EVALSHA"));
							Thread.sleep(700);
						}
						for (Thread thread : threads) {
							thread.join(30_000);
						}
						assertThat(unexpected).as("only refusals and Redis failures").isEmpty();
						// Quiet: the pollers mend within a look; then every instance sees
						// one schedule, on one topic.
						await().atMost(RESTORED_WITHIN).ignoreExceptions().untilAsserted(() -> {
							List<java.util.Optional<ScheduleInfo>> seen = apis.stream()
								.map((api) -> api.get("racer"))
								.toList();
							assertThat(seen).as("get() of the three instances")
								.allMatch((info) -> info.equals(seen.get(0)));
							StringRedisTemplate template = x.getBean(StringRedisTemplate.class);
							RedisMessageStore store = x.getBean(RedisMessageStore.class);
							long states = java.util.stream.Stream.of("a", "b")
								.filter((topic) -> template.opsForHash().hasKey(store.keys(topic).schedules(), "racer"))
								.count();
							assertThat(states).as("topics holding a state").isEqualTo(seen.get(0).isPresent() ? 1 : 0);
						});
						// Then it runs: one last save and resume, and it ticks every 500
						// ms.
						apis.get(0).remove("racer");
						apis.get(1).save(Schedule.fixedRate("racer", "b", Duration.ofMillis(rate)).withPayload("last"));
						apis.get(2).resume("racer");
						int before = ticks.size();
						await().atMost(RESTORED_WITHIN).until(() -> ticks.size() >= before + 4);
						// Ticks and triggers: a trigger whose send's reply was lost was
						// sent
						// again by Lettuce and delivered twice when handled meanwhile (1
						// of
						// about 50 in one run), until triggers were remembered once
						// handled.
						List<String> all = List.copyOf(ticks);
						assertThat(new java.util.HashSet<>(all)).as("each tick and trigger delivered once: " + all)
							.hasSameSizeAs(all);
						List<Long> times = all.stream()
							.map((entry) -> entry.substring(entry.indexOf(' ') + 1))
							.filter((id) -> id.indexOf('~') == id.lastIndexOf('~'))
							.map((id) -> Long.parseLong(id.substring(id.indexOf('~') + 1)))
							.sorted()
							.toList();
						for (int i = 1; i < times.size(); i++) {
							assertThat(times.get(i) - times.get(i - 1)).as("gap between ticks in " + all)
								.isGreaterThanOrEqualTo(rate);
						}
					});
				});
			});
		}
	}

	private static void race(DelayQueueSchedules api, java.util.Random random, long end, long rate,
			List<Throwable> unexpected) {
		while (System.currentTimeMillis() < end) {
			try {
				switch (random.nextInt(6)) {
					case 0, 1 ->
						api.save(Schedule.fixedRate("racer", random.nextBoolean() ? "a" : "b", Duration.ofMillis(rate))
							.withPayload("p" + random.nextInt(3)));
					case 2 -> api.remove("racer");
					case 3 -> api.pause("racer");
					case 4 -> api.resume("racer");
					default -> api.trigger("racer");
				}
			}
			catch (IllegalArgumentException | IllegalStateException | org.springframework.dao.DataAccessException ex) {
				// Refused (no such schedule, another topic has it), or Redis failed.
			}
			catch (Throwable ex) {
				unexpected.add(ex);
			}
			try {
				Thread.sleep(random.nextInt(60));
			}
			catch (InterruptedException ex) {
				return;
			}
		}
	}

	static class Beats {

		static volatile List<String> deliveries = new CopyOnWriteArrayList<>();

		@DelayListener(topic = "beats")
		void on(Delivery<String> delivery) {
			deliveries.add(delivery.id());
		}

	}

	static class TwoTopics {

		static volatile List<String> deliveries = new CopyOnWriteArrayList<>();

		@DelayListener(topic = "a")
		void onA(Delivery<String> delivery) {
			deliveries.add("a " + delivery.id());
		}

		@DelayListener(topic = "b")
		void onB(Delivery<String> delivery) {
			deliveries.add("b " + delivery.id());
		}

	}

}

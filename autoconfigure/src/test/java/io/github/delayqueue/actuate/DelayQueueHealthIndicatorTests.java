package io.github.delayqueue.actuate;

import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

import io.github.delayqueue.autoconfigure.DelayQueueActuatorAutoConfiguration;
import io.github.delayqueue.producer.DelayQueueTemplate;
import io.github.delayqueue.listener.DelayListener;
import io.github.delayqueue.runtime.DelayQueueRuntime;
import io.github.delayqueue.testsupport.FailingClaims;
import io.github.delayqueue.testsupport.QueueContexts;
import io.github.delayqueue.test.redis.RedisServerProcess;
import io.github.delayqueue.test.redis.TestRedis;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.awaitility.Awaitility.await;

/**
 * The {@code delayQueue} health contributor: {@code UP} with the counts of each topic
 * that has a listener here, {@code DOWN} when Redis is unreachable or a listener died,
 * the lateness status when a topic is later than {@code delay-queue.health.max-lateness}.
 */
class DelayQueueHealthIndicatorTests {

	private static final Instant LONG_AGO = Instant.parse("2020-01-01T00:00:00Z");

	private final ApplicationContextRunner runner = runner(TestRedis.shared().springProperties());

	@Test
	void upWithTheListenerStateAndCountsOfEachTopicWithAListenerHere() {
		this.runner.run((context) -> {
			context.getBean(DelayQueueTemplate.class).send("notes", "later", Duration.ofHours(1));
			context.getBean(DelayQueueTemplate.class).send("elsewhere", "later", Duration.ofHours(1));
			Health health = health(context);
			assertThat(health.getStatus()).isEqualTo(Status.UP);
			assertThat(health.getDetails()).containsOnlyKeys("topics");
			assertThat(topics(health)).containsOnlyKeys("notes");
			assertThat(topics(health).get("notes")).containsEntry("listener", "running")
				.containsEntry("scheduled", 1L)
				.containsEntry("ready", 0L)
				.containsEntry("inFlight", 0L)
				.containsEntry("dead", 0L)
				.containsEntry("oldestLateness", "PT0S");
		});
	}

	@Test
	void upWithoutDetailsWhenNoTopicHasAListenerHere() {
		QueueContexts.runner(QueueContexts.uniquePrefix())
			.withConfiguration(AutoConfigurations.of(DelayQueueActuatorAutoConfiguration.class))
			.run((context) -> {
				Health health = health(context);
				assertThat(health.getStatus()).isEqualTo(Status.UP);
				assertThat(health.getDetails()).isEmpty();
			});
	}

	@Test
	void aTopicNobodyListensToIsCheckedWhenThePropertiesNameItAndItsOverdueMessagesMakeItLate() {
		QueueContexts.runner(QueueContexts.uniquePrefix())
			.withConfiguration(AutoConfigurations.of(DelayQueueActuatorAutoConfiguration.class))
			.withPropertyValues("delay-queue.metrics.topics=webhooks", "delay-queue.health.max-lateness=100ms")
			.run((context) -> {
				context.getBean(DelayQueueTemplate.class).send("webhooks", "nobody consumes it", Duration.ZERO);
				await().atMost(Duration.ofSeconds(10))
					.until(() -> health(context).getStatus().equals(Status.OUT_OF_SERVICE));
				Health health = health(context);
				assertThat(topics(health)).containsOnlyKeys("webhooks");
				assertThat(topics(health).get("webhooks")).containsEntry("listener", "none")
					.containsEntry("scheduled", 1L)
					.containsEntry("status", "LATE");
				assertThat(health.getDetails()).containsEntry("late", List.of("webhooks"));
			});
	}

	@Test
	void downWhileRedisIsUnreachableAndUpAgainWhenItIsBack() {
		Assumptions.assumeTrue(TestRedis.canStartPrivateServer(), "needs a redis-server binary");
		try (RedisServerProcess redis = TestRedis.startPrivateServer()) {
			runner(redis.springProperties()).withPropertyValues("spring.data.redis.timeout=1s").run((context) -> {
				assertThat(health(context).getStatus()).isEqualTo(Status.UP);

				redis.stop();
				await().atMost(Duration.ofSeconds(20)).until(() -> health(context).getStatus().equals(Status.DOWN));
				assertThat(health(context).getDetails()).containsKey("error");

				redis.start();
				await().atMost(Duration.ofSeconds(30)).until(() -> health(context).getStatus().equals(Status.UP));
			});
		}
	}

	@Test
	void downWithinItsOwnTimeoutWhenRedisStopsAnsweringAndTheClientHasNoCommandTimeout() {
		Assumptions.assumeTrue(TestRedis.canStartPrivateServer(), "needs a redis-server binary");
		try (RedisServerProcess redis = TestRedis.startPrivateServer()) {
			runner(redis.springProperties()).withPropertyValues("delay-queue.health.timeout=1s").run((context) -> {
				assertThat(health(context).getStatus()).isEqualTo(Status.UP);

				redis.stop();
				Health health = assertTimeoutPreemptively(Duration.ofSeconds(10), () -> health(context));
				assertThat(health.getStatus()).isEqualTo(Status.DOWN);
				assertThat(health.getDetails()).hasEntrySatisfying("error",
						(error) -> assertThat(error).asString().startsWith("Redis did not answer for partitions "));

				redis.start();
			});
		}
	}

	@Test
	void downAtOnceWhileEarlierChecksStillWaitForRedis() {
		Assumptions.assumeTrue(TestRedis.canStartPrivateServer(), "needs a redis-server binary");
		try (RedisServerProcess redis = TestRedis.startPrivateServer()) {
			runner(redis.springProperties()).withPropertyValues("delay-queue.health.timeout=20s").run((context) -> {
				redis.stop();
				ExecutorService callers = Executors.newFixedThreadPool(2);
				try {
					callers.submit(() -> health(context));
					callers.submit(() -> health(context));
					await().atMost(Duration.ofSeconds(10)).until(() -> threadsWaitingInACheck() == 2);
					Health health = health(context);
					assertThat(health.getStatus()).isEqualTo(Status.DOWN);
					assertThat(health.getDetails()).containsEntry("error",
							"Earlier health checks are still waiting for Redis");
				}
				finally {
					callers.shutdownNow();
					redis.start();
				}
			});
		}
	}

	@Test
	void closingStopsTheCheckThreads() {
		// Other tests' checks may still wait for a Redis they stopped: look only at this
		// one's threads.
		List<Thread> before = healthThreads();
		this.runner.run((context) -> {
			DelayQueueHealthIndicator indicator = context.getBean(DelayQueueHealthIndicator.class);
			assertThat(indicator.health().getStatus()).isEqualTo(Status.UP);
			List<Thread> own = healthThreads().stream().filter((thread) -> !before.contains(thread)).toList();
			assertThat(own).isNotEmpty();
			context.close();
			await().atMost(Duration.ofSeconds(10)).until(() -> own.stream().noneMatch(Thread::isAlive));
		});
	}

	@Test
	void downWhenAListenerHasStoppedOnAnError() {
		this.runner.withBean(FailingClaims.class).run((context) -> {
			context.getBean(FailingClaims.class).failFromNowOn();
			context.getBean(DelayQueueTemplate.class).send("notes", "wakes the listener", Duration.ZERO);
			await().atMost(Duration.ofSeconds(10)).until(() -> health(context).getStatus().equals(Status.DOWN));
			Health health = health(context);
			assertThat(health.getDetails()).containsEntry("stoppedListeners", List.of("notes"));
			assertThat(topics(health).get("notes")).containsEntry("listener", "stopped");
		});
	}

	@Test
	void pausedListenerLeavesTheHealthUp() {
		this.runner.run((context) -> {
			context.getBean(DelayQueueRuntime.class).pause("notes");
			Health health = health(context);
			assertThat(health.getStatus()).isEqualTo(Status.UP);
			assertThat(topics(health).get("notes")).containsEntry("listener", "paused");
		});
	}

	@Test
	void latenessOverTheMaximumIsOutOfServiceByDefault() {
		this.runner.withPropertyValues("delay-queue.health.max-lateness=1h").run((context) -> {
			assertThat(health(context).getStatus()).isEqualTo(Status.UP);
			context.getBean(DelayQueueRuntime.class).pause("notes");
			context.getBean(DelayQueueTemplate.class).sendAt("notes", "overdue", LONG_AGO);
			Health health = health(context);
			assertThat(health.getStatus()).isEqualTo(Status.OUT_OF_SERVICE);
			assertThat(health.getDetails()).containsEntry("late", List.of("notes"))
				.containsEntry("maxLateness", "PT1H");
		});
	}

	@Test
	void latenessOverTheMaximumIsDownWhenConfiguredSo() {
		this.runner.withPropertyValues("delay-queue.health.max-lateness=1h", "delay-queue.health.lateness-status=down")
			.run((context) -> {
				context.getBean(DelayQueueRuntime.class).pause("notes");
				context.getBean(DelayQueueTemplate.class).sendAt("notes", "overdue", LONG_AGO);
				assertThat(health(context).getStatus()).isEqualTo(Status.DOWN);
			});
	}

	@Test
	void latenessChangesNothingWithoutAMaximum() {
		this.runner.run((context) -> {
			context.getBean(DelayQueueRuntime.class).pause("notes");
			context.getBean(DelayQueueTemplate.class).sendAt("notes", "overdue", LONG_AGO);
			Health health = health(context);
			assertThat(health.getStatus()).isEqualTo(Status.UP);
			assertThat(Duration.parse((String) topics(health).get("notes").get("oldestLateness")))
				.isGreaterThan(Duration.ofDays(365));
		});
	}

	private static ApplicationContextRunner runner(String... redisProperties) {
		return QueueContexts.runner(QueueContexts.uniquePrefix(), redisProperties)
			.withConfiguration(AutoConfigurations.of(DelayQueueActuatorAutoConfiguration.class))
			.withBean(NoteListener.class)
			.withPropertyValues("delay-queue.listener.idle-check-interval=500ms",
					"delay-queue.listener.shutdown-timeout=2s");
	}

	private static long threadsWaitingInACheck() {
		return Thread.getAllStackTraces()
			.values()
			.stream()
			.filter((stack) -> Arrays.stream(stack)
				.anyMatch((frame) -> frame.getClassName().equals(DelayQueueHealthCheck.class.getName())
						&& frame.getMethodName().equals("checkNow")))
			.count();
	}

	private static List<Thread> healthThreads() {
		return Thread.getAllStackTraces()
			.keySet()
			.stream()
			.filter((thread) -> thread.getName().startsWith("delay-queue-health-") && thread.isAlive())
			.toList();
	}

	private static Health health(ApplicationContext context) {
		return context.getBean(DelayQueueHealthIndicator.class).health();
	}

	@SuppressWarnings("unchecked")
	private static Map<String, Map<String, Object>> topics(Health health) {
		return (Map<String, Map<String, Object>>) health.getDetails().get("topics");
	}

	static class NoteListener {

		final List<String> received = new CopyOnWriteArrayList<>();

		@DelayListener(topic = "notes")
		void on(String payload) {
			this.received.add(payload);
		}

	}

}

package io.github.delayqueue.listener;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;

import io.github.delayqueue.producer.DelayMessage;
import io.github.delayqueue.producer.DelayQueueTemplate;
import io.github.delayqueue.metrics.DelayQueueMeterNames;
import io.github.delayqueue.runtime.DelayQueueRuntime;
import io.github.delayqueue.runtime.ListenerState;
import io.github.delayqueue.store.TopicInspector;
import io.github.delayqueue.store.TopicStats;
import io.github.delayqueue.store.redis.RedisMessageStore;
import io.github.delayqueue.store.redis.TopicKeys;
import io.github.delayqueue.test.redis.FaultyRedisProxy;
import io.github.delayqueue.test.redis.TestRedis;
import io.github.delayqueue.testsupport.QueueContexts;
import io.github.delayqueue.testsupport.Transitions;
import io.github.delayqueue.time.RetryBackoff;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatNoException;
import static org.awaitility.Awaitility.await;

/**
 * Stopping and pausing listeners within their shutdown timeout, whatever Redis does and
 * however short or long the timeout: with Redis out of reach the messages in hand are not
 * handed back but come again when their leases expire; with Redis near a handler that
 * returns in time is acknowledged, messages not yet started go back at once, and a
 * handler cut off is reported neither as retried nor as dead-lettered; what a claim
 * leased goes back at once whether its reply came after the stop, timed out before it, or
 * never came because the application closed; and a stop while a pause waits for its
 * handlers waits for that pause.
 */
@ExtendWith(OutputCaptureExtension.class)
class GracefulStopTests {

	private static final Duration SHUTDOWN_TIMEOUT = Duration.ofMillis(500);

	/** The generous bound of a stop: it took about 25 s longer before. */
	private static final Duration STOP_BOUND = SHUTDOWN_TIMEOUT.plusSeconds(1);

	private static final Duration WAIT = Duration.ofSeconds(20);

	@ParameterizedTest(name = "Redis {0}")
	@ValueSource(strings = { "not answering", "refusing connections" })
	void stopWithRedisOutOfReachTakesAtMostTheShutdownTimeoutAndTheMessagesComeAgain(String outage,
			CapturedOutput output) {
		String prefix = QueueContexts.uniquePrefix();
		List<String> ids = IntStream.range(0, 8).mapToObj((i) -> "m" + i).toList();
		try (FaultyRedisProxy proxy = startProxy()) {
			BlockingListener blocking = new BlockingListener();
			ApplicationContextRunner runner = QueueContexts.runner(prefix, proxy)
				.withBean(BlockingListener.class, () -> blocking)
				.withPropertyValues("delay-queue.listener.concurrency=8", "delay-queue.listener.visibility-timeout=2s",
						"delay-queue.listener.shutdown-timeout=" + SHUTDOWN_TIMEOUT.toMillis() + "ms",
						"delay-queue.producer.send-timeout=1s", "delay-queue.broker.max-sleep=200ms");
			runner.run((context) -> {
				sendAll(context, ids);
				await().atMost(WAIT).until(() -> blocking.deliveries.size() == ids.size());
				if (outage.equals("not answering")) {
					proxy.pause();
				}
				else {
					proxy.close();
				}
				long started = System.nanoTime();
				context.close();
				assertThat(Duration.ofNanos(System.nanoTime() - started)).as("the whole stop").isLessThan(STOP_BOUND);
			});
			assertThat(output).contains("Stopping the listeners: waiting up to 400ms for 8 handler calls");
			proxy.resume();
			BlockingListener next = new BlockingListener();
			next.release.countDown();
			QueueContexts.runner(prefix)
				.withBean(BlockingListener.class, () -> next)
				.withPropertyValues("delay-queue.broker.max-sleep=200ms")
				.run((context) -> {
					await().atMost(WAIT).until(() -> next.deliveries.size() == ids.size());
					assertThat(next.deliveries).containsExactlyInAnyOrderElementsOf(ids);
				});
		}
	}

	@Test
	void pausingAPartitionedTopicWithRedisOutOfReachTakesOneShutdownTimeoutForAllItsPartitions() {
		List<String> ids = IntStream.range(0, 16).mapToObj((i) -> "m" + i).toList();
		try (FaultyRedisProxy proxy = startProxy()) {
			BlockingListener blocking = new BlockingListener();
			QueueContexts.runner(QueueContexts.uniquePrefix(), proxy)
				.withBean(BlockingListener.class, () -> blocking)
				.withPropertyValues("delay-queue.topics.blocking.partitions=4", "delay-queue.listener.concurrency=16",
						"delay-queue.listener.visibility-timeout=2s",
						"delay-queue.listener.shutdown-timeout=" + SHUTDOWN_TIMEOUT.toMillis() + "ms",
						"delay-queue.producer.send-timeout=1s", "delay-queue.broker.max-sleep=200ms")
				.run((context) -> {
					DelayQueueRuntime runtime = context.getBean(DelayQueueRuntime.class);
					sendAll(context, ids);
					await().atMost(WAIT).until(() -> blocking.deliveries.size() == ids.size());
					proxy.pause();
					long started = System.nanoTime();
					assertThat(runtime.pause("blocking")).isTrue();
					assertThat(Duration.ofNanos(System.nanoTime() - started)).as("the pause of four partitions")
						.isLessThan(STOP_BOUND);
					proxy.resume();
					blocking.release.countDown();
					assertThat(runtime.resume("blocking")).isTrue();
					await().atMost(WAIT).until(() -> blocking.deliveries.size() == 2 * ids.size());
					assertThat(blocking.deliveries.subList(ids.size(), 2 * ids.size()))
						.containsExactlyInAnyOrderElementsOf(ids);
				});
		}
	}

	@Test
	void aHandlerThatReturnsWhileTheListenersStopHasItsMessageAcknowledged() {
		try (FaultyRedisProxy proxy = startProxy()) {
			proxy.latency(Duration.ofMillis(4));
			BlockingListener blocking = new BlockingListener();
			QueueContexts.runner(QueueContexts.uniquePrefix(), proxy)
				.withBean(BlockingListener.class, () -> blocking)
				.withPropertyValues("delay-queue.listener.shutdown-timeout=1s")
				.run((context) -> {
					DelayQueueRuntime runtime = context.getBean(DelayQueueRuntime.class);
					sendAll(context, List.of("m1"));
					await().atMost(WAIT).until(() -> blocking.deliveries.size() == 1);
					CompletableFuture<Void> stopped = CompletableFuture.runAsync(runtime::stop);
					await().pollInterval(Duration.ofMillis(5)).atMost(WAIT).until(() -> !runtime.isRunning());
					blocking.release.countDown();
					stopped.join();
					assertThat(messagesLeft(context)).as("acknowledged, not handed back").isFalse();
				});
		}
	}

	@Test
	void whatAClaimAnsweredAfterTheStopLeasedIsHandedBackAndNotDeadLettered() {
		String prefix = QueueContexts.uniquePrefix();
		try (FaultyRedisProxy proxy = startProxy()) {
			makeReady(prefix, "late");
			FaultyRedisProxy.Fault fault = delayNextClaim(proxy, prefix);
			BlockingListener stopped = new BlockingListener();
			QueueContexts.runner(prefix, proxy)
				.withBean(BlockingListener.class, () -> stopped)
				.withPropertyValues(lastAttemptAndShortStop())
				.run((context) -> {
					assertThat(fault.awaitFired(WAIT)).isTrue();
					context.getBean(DelayQueueRuntime.class).stop();
					assertThat(stopped.deliveries).isEmpty();
					// The claim's reply comes once the scheduler is gone, before the
					// lease
					// ends.
					BlockingListener next = new BlockingListener();
					next.release.countDown();
					QueueContexts.runner(prefix)
						.withBean(BlockingListener.class, () -> next)
						.withPropertyValues(lastAttemptAndShortStop())
						.run((other) -> {
							await().atMost(WAIT).until(() -> next.deliveries.size() == 1);
							assertThat(next.deliveries).containsExactly("late");
							assertThat(next.attempts).containsExactly(1);
						});
				});
		}
	}

	@Test
	void whatAClaimAnsweredAfterAPauseLeasedIsHandedBackAndDeliveredOnResume() {
		String prefix = QueueContexts.uniquePrefix();
		try (FaultyRedisProxy proxy = startProxy()) {
			makeReady(prefix, "late");
			FaultyRedisProxy.Fault fault = delayNextClaim(proxy, prefix);
			BlockingListener listener = new BlockingListener();
			listener.release.countDown();
			QueueContexts.runner(prefix, proxy)
				.withBean(BlockingListener.class, () -> listener)
				.withPropertyValues(lastAttemptAndShortStop())
				.run((context) -> {
					DelayQueueRuntime runtime = context.getBean(DelayQueueRuntime.class);
					assertThat(fault.awaitFired(WAIT)).isTrue();
					assertThat(runtime.pause("blocking")).isTrue();
					// The claim's reply comes after the pause, on the running scheduler.
					assertThat(runtime.resume("blocking")).isTrue();
					await().atMost(WAIT).until(() -> listener.deliveries.size() == 1);
					assertThat(listener.deliveries).containsExactly("late");
					assertThat(listener.attempts).containsExactly(1);
				});
		}
	}

	/**
	 * A claim that Redis ran but whose reply came after the send timeout failed in the
	 * fetcher, which would have sent it again after a backoff; the listener stops in
	 * between. Before, nobody sent it again and nothing handed the message back: it
	 * stayed leased until its lease expired and, on its last attempt, was dead-lettered
	 * without ever being delivered. Now the stop hands back what the claim leased, from
	 * the consumer's claim record.
	 */
	@Test
	void whatAClaimThatTimedOutJustBeforeTheStopLeasedIsHandedBackAndNotDeadLettered() {
		String prefix = QueueContexts.uniquePrefix();
		try (FaultyRedisProxy proxy = startProxy()) {
			makeReady(prefix, "late");
			// The claim runs; its reply comes 1.5 s later, after the 300 ms send timeout.
			FaultyRedisProxy.Fault fault = delayNextClaim(proxy, prefix, Duration.ofMillis(1500));
			BlockingListener stopped = new BlockingListener();
			QueueContexts.runner(prefix, proxy)
				.withBean(BlockingListener.class, () -> stopped)
				.withPropertyValues(lastAttemptAndShortStop("delay-queue.producer.send-timeout=300ms"))
				.run((context) -> {
					DelayQueueRuntime runtime = context.getBean(DelayQueueRuntime.class);
					assertThat(fault.awaitFired(WAIT)).isTrue();
					// Idle once the claim timed out, until it is sent again.
					await().pollInterval(Duration.ofMillis(1)).atMost(WAIT).until(runtime::isIdle);
					runtime.stop();
					assertThat(stopped.deliveries).isEmpty();
				});
			assertDeliveredOnceMoreOnItsFirstAttempt(prefix, "late");
		}
	}

	/**
	 * An application that shuts down closes its context: the Redis connection factory is
	 * destroyed right after the listeners stop, so the reply of a claim on its way never
	 * arrives. Before, nothing handed the message back: it stayed leased until its lease
	 * expired and, on its last attempt, was dead-lettered without ever being delivered.
	 * Now the stop sends the claim's hand-back on the claim's connection, right behind
	 * it, and Redis runs it although neither reply is read.
	 */
	@Test
	void whatAClaimUnansweredWhenTheApplicationClosesLeasedIsHandedBackAndNotDeadLettered() {
		String prefix = QueueContexts.uniquePrefix();
		try (FaultyRedisProxy proxy = startProxy()) {
			makeReady(prefix, "late");
			FaultyRedisProxy.Fault fault = delayNextClaim(proxy, prefix, Duration.ofSeconds(1));
			BlockingListener stopped = new BlockingListener();
			QueueContexts.runner(prefix, proxy)
				.withBean(BlockingListener.class, () -> stopped)
				.withPropertyValues(lastAttemptAndShortStop())
				.run((context) -> {
					assertThat(fault.awaitFired(WAIT)).isTrue();
					// What an application's shutdown does: the listeners stop, then the
					// Redis connection factory is destroyed.
					context.close();
					assertThat(stopped.deliveries).isEmpty();
				});
			assertDeliveredOnceMoreOnItsFirstAttempt(prefix, "late");
		}
	}

	/**
	 * Before, a stop while a pause was still waiting for the topic's handlers found no
	 * consumer to stop and returned at once, so the application closed its Redis
	 * connection under the pause, whose hand-back then failed: the message stayed leased
	 * and, on its last attempt, was dead-lettered without having been handled (its
	 * handler was cut off by the pause's deadline). Now the stop waits for the pause
	 * within its own timeout.
	 */
	@Test
	void aStopWhileAPauseWaitsForItsHandlersWaitsForThePauseToHandBackWhatItHeld() {
		String prefix = QueueContexts.uniquePrefix();
		BlockingListener blocking = new BlockingListener();
		CompletableFuture<Boolean> paused = new CompletableFuture<>();
		QueueContexts.runner(prefix)
			.withBean(BlockingListener.class, () -> blocking)
			.withPropertyValues(lastAttemptAndShortStop("delay-queue.listener.shutdown-timeout=1s"))
			.run((context) -> {
				DelayQueueRuntime runtime = context.getBean(DelayQueueRuntime.class);
				sendAll(context, List.of("m1"));
				await().atMost(WAIT).until(() -> blocking.deliveries.size() == 1);
				CompletableFuture.runAsync(() -> paused.complete(runtime.pause("blocking")));
				await().atMost(WAIT).until(() -> runtime.getListenerStates().get("blocking") == ListenerState.PAUSED);
				// The application shuts down meanwhile.
				context.close();
			});
		assertThat(paused.join()).isTrue();
		assertDeliveredOnceMore(prefix, "m1");
	}

	/**
	 * Before, a handler interrupted at the stop's deadline was counted and logged as
	 * failed ("failed on its last attempt ..., moving it to the dead-letter set",
	 * {@code delay.queue.dead.lettered} one up) although the stop had already handed its
	 * message back, its attempt not even counted. Now an outcome is reported only once
	 * the settlement that makes it true has won.
	 */
	@Test
	void aHandlerCutOffByTheStopIsNeitherCountedNorLoggedAsDeadLettered(CapturedOutput output) {
		BlockingListener blocking = new BlockingListener();
		QueueContexts.runner(QueueContexts.uniquePrefix())
			.withBean(MeterRegistry.class, SimpleMeterRegistry::new)
			.withBean(BlockingListener.class, () -> blocking)
			.withPropertyValues(lastAttemptAndShortStop())
			.run((context) -> {
				sendAll(context, List.of("m1"));
				await().atMost(WAIT).until(() -> blocking.deliveries.size() == 1);
				context.getBean(DelayQueueRuntime.class).stop();
				TopicStats stats = context.getBean(RedisMessageStore.class).inspector("blocking").stats();
				assertThat(stats.ready()).as("handed back").isOne();
				assertThat(stats.dead()).isZero();
				// The interrupted handler settles on its own thread.
				await().atMost(WAIT)
					.until(() -> output.getOut().contains("handler finished after its lease ended (handed back"));
				assertThat(context.getBean(MeterRegistry.class).find(DelayQueueMeterNames.DEAD_LETTERED).counters())
					.as("dead letters counted")
					.allSatisfy((counter) -> assertThat(counter.count()).isZero());
				assertThat(output.getOut()).doesNotContain("moving it to the dead-letter set")
					.doesNotContain("dead-lettered:");
			});
	}

	/**
	 * Before, the reserve for the hand-back was at least 100 ms, and a stop waited for
	 * Redis until its end, and for the signal subscription to close up to a second more:
	 * with a timeout of 10 ms and Redis not answering a stop took 100 ms or more. Now the
	 * reserve is at most half the timeout, and the subscription is waited for only until
	 * the stop's deadline.
	 */
	@Test
	void aStopWithATimeoutShorterThanTheReserveTakesAtMostThatTimeoutWithRedisNotAnswering() {
		try (FaultyRedisProxy proxy = startProxy()) {
			BlockingListener blocking = new BlockingListener();
			QueueContexts.runner(QueueContexts.uniquePrefix(), proxy)
				.withBean(BlockingListener.class, () -> blocking)
				.withPropertyValues("delay-queue.listener.shutdown-timeout=10ms", "delay-queue.broker.max-sleep=200ms")
				.run((context) -> {
					sendAll(context, List.of("m1"));
					await().atMost(WAIT).until(() -> blocking.deliveries.size() == 1);
					proxy.pause();
					long started = System.nanoTime();
					context.getBean(DelayQueueRuntime.class).stop();
					Duration stop = Duration.ofNanos(System.nanoTime() - started);
					proxy.resume();
					// A generous bound, yet below the 100 ms reserve the stop took
					// before.
					assertThat(stop).as("the stop, with shutdown-timeout 10 ms").isLessThan(Duration.ofMillis(90));
				});
		}
	}

	/**
	 * A shutdown timeout of 300,000 days (a valid {@code Duration}, "as long as it
	 * takes") given by a {@link ListenerSettingsProvider} of the application's own, which
	 * the properties' check does not see: before, {@code Duration.toNanos()} overflowed
	 * and every stop and pause threw {@code ArithmeticException} before anything in hand
	 * was handed back. Now the arithmetic saturates.
	 */
	@Test
	void aShutdownTimeoutTooLongForNanosecondsStopsAndPausesTheListenersWithoutAnError() {
		BlockingListener blocking = new BlockingListener();
		blocking.release.countDown();
		ListenerSettingsProvider settings = (topic) -> new ListenerSettings(1, 0, 5, Duration.ofSeconds(30),
				new RetryBackoff(Duration.ofSeconds(1), 2.0, Duration.ofMinutes(1)), Duration.ofSeconds(5),
				Duration.ofDays(300_000), Duration.ofMinutes(10), LatePolicy.DELIVER, Duration.ofHours(1));
		QueueContexts.runner(QueueContexts.uniquePrefix())
			.withBean(ListenerSettingsProvider.class, () -> settings)
			.withBean(BlockingListener.class, () -> blocking)
			.withPropertyValues("delay-queue.broker.max-sleep=200ms")
			.run((context) -> {
				DelayQueueRuntime runtime = context.getBean(DelayQueueRuntime.class);
				sendAll(context, List.of("m1"));
				await().atMost(WAIT).until(() -> blocking.deliveries.size() == 1);
				assertThatNoException().isThrownBy(() -> runtime.pause("blocking"));
				assertThat(runtime.resume("blocking")).isTrue();
				assertThatNoException().isThrownBy(runtime::stop);
				assertThat(runtime.isRunning()).isFalse();
			});
	}

	/**
	 * Before, messages claimed and waiting for a handler (concurrency 1, prefetch 1)
	 * still started their handler after the stop began, once the running one returned,
	 * only to be cut off at the deadline. Now they are handed back as soon as the stop
	 * begins, and delivered elsewhere on their attempt.
	 */
	@Test
	void messagesWaitingForAHandlerAreHandedBackAsSoonAsTheStopBegins() {
		BlockingListener blocking = new BlockingListener();
		QueueContexts.runner(QueueContexts.uniquePrefix())
			.withBean(BlockingListener.class, () -> blocking)
			.withPropertyValues("delay-queue.listener.concurrency=1", "delay-queue.listener.prefetch=1",
					"delay-queue.listener.shutdown-timeout=10s", "delay-queue.broker.max-sleep=200ms")
			.run((context) -> {
				DelayQueueRuntime runtime = context.getBean(DelayQueueRuntime.class);
				RedisMessageStore store = context.getBean(RedisMessageStore.class);
				// A handler that returned at once lets the listener claim one ahead.
				sendAll(context, List.of(BlockingListener.QUICK));
				await().atMost(WAIT).until(() -> {
					TopicStats stats = store.inspector("blocking").stats();
					return stats.scheduled() + stats.ready() + stats.inFlight() == 0;
				});
				sendAll(context, List.of("m1", "m2"));
				await().atMost(WAIT).until(() -> blocking.deliveries.size() == 2);
				await().atMost(WAIT).until(() -> store.inspector("blocking").stats().inFlight() == 2);
				CompletableFuture<Void> stopped = CompletableFuture.runAsync(runtime::stop);
				await().atMost(WAIT).until(() -> store.inspector("blocking").stats().ready() == 1);
				assertThat(stopped).as("the stop waits for the running handler").isNotDone();
				blocking.release.countDown();
				stopped.join();
				assertThat(blocking.deliveries).as("m2 never started here")
					.containsExactly(BlockingListener.QUICK, "m1");
				assertThat(store.inspector("blocking").stats().inFlight()).isZero();
				assertThat(store.inspector("blocking").stats().ready()).isOne();
			});
	}

	private static void assertDeliveredOnceMoreOnItsFirstAttempt(String prefix, String id) {
		BlockingListener next = assertDeliveredOnceMore(prefix, id);
		assertThat(next.attempts).containsExactly(1);
	}

	/**
	 * Starts an application of the same prefix and checks that it gets the message, which
	 * was not dead-lettered meanwhile.
	 * @return its listener
	 */
	private static BlockingListener assertDeliveredOnceMore(String prefix, String id) {
		BlockingListener next = new BlockingListener();
		next.release.countDown();
		QueueContexts.runner(prefix)
			.withBean(BlockingListener.class, () -> next)
			.withPropertyValues(lastAttemptAndShortStop())
			.run((context) -> {
				TopicInspector topic = context.getBean(RedisMessageStore.class).inspector("blocking");
				await().atMost(WAIT).until(() -> next.deliveries.size() == 1 || topic.stats().dead() == 1);
				assertThat(topic.stats().dead()).as("dead-lettered without a delivery").isZero();
				assertThat(next.deliveries).containsExactly(id);
			});
		return next;
	}

	private static FaultyRedisProxy startProxy() {
		TestRedis redis = TestRedis.shared();
		return FaultyRedisProxy.start(redis.host(), redis.port());
	}

	private static void sendAll(ConfigurableApplicationContext context, List<String> ids) {
		context.getBean(DelayQueueTemplate.class)
			.sendAll(ids.stream().map((id) -> DelayMessage.builder("blocking", id).id(id).build()).toList());
	}

	/**
	 * Sends a message and makes it ready, while no listener runs; and loads the claim
	 * script, so that the next claim runs with its first command.
	 */
	private static void makeReady(String prefix, String id) {
		QueueContexts.runner(prefix).run((context) -> {
			sendAll(context, List.of(id));
			RedisMessageStore store = context.getBean(RedisMessageStore.class);
			assertThat(Transitions.promote(store, "blocking", 10).moved()).isOne();
			assertThat(Transitions.claim(store, "other", 1, Duration.ofSeconds(1))).isEmpty();
		});
	}

	/**
	 * Holds the reply to the next claim for a second: the claim runs, its reply is late.
	 */
	private static FaultyRedisProxy.Fault delayNextClaim(FaultyRedisProxy proxy, String prefix) {
		return delayNextClaim(proxy, prefix, Duration.ofSeconds(1));
	}

	/**
	 * Holds the reply to the next claim: the claim runs, its reply is late.
	 */
	private static FaultyRedisProxy.Fault delayNextClaim(FaultyRedisProxy proxy, String prefix, Duration delay) {
		return proxy.delayNextReplyToCommand(
				FaultyRedisProxy.withArgumentContaining("EVALSHA", prefix + ":{blocking}:c:"), delay);
	}

	/**
	 * A lease that ends once the late reply came; one attempt: its expiry dead-letters.
	 * @param more more properties, which win
	 */
	private static String[] lastAttemptAndShortStop(String... more) {
		List<String> properties = new ArrayList<>(
				List.of("delay-queue.listener.max-attempts=1", "delay-queue.listener.visibility-timeout=4s",
						"delay-queue.listener.shutdown-timeout=200ms", "delay-queue.broker.max-sleep=200ms"));
		properties.addAll(List.of(more));
		return properties.toArray(String[]::new);
	}

	private static boolean messagesLeft(ConfigurableApplicationContext context) {
		TopicKeys keys = context.getBean(RedisMessageStore.class).keys("blocking");
		return Boolean.TRUE.equals(context.getBean(StringRedisTemplate.class).hasKey(keys.messages()));
	}

	static class BlockingListener {

		final List<String> deliveries = new CopyOnWriteArrayList<>();

		final List<Integer> attempts = new CopyOnWriteArrayList<>();

		/** The id of a message whose handler returns at once. */
		static final String QUICK = "quick";

		final CountDownLatch release = new CountDownLatch(1);

		@DelayListener(topic = "blocking")
		void on(Delivery<String> delivery) throws InterruptedException {
			this.deliveries.add(delivery.id());
			this.attempts.add(delivery.attempt());
			if (QUICK.equals(delivery.id())) {
				return;
			}
			// Stands for work that goes on until released; interrupted when its listener
			// stops.
			this.release.await(5, TimeUnit.MINUTES);
		}

	}

}

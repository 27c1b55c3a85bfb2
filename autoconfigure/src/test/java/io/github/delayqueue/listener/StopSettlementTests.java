package io.github.delayqueue.listener;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import io.github.delayqueue.producer.DelayMessage;
import io.github.delayqueue.producer.DelayQueueTemplate;
import io.github.delayqueue.metrics.DelayQueueMetrics;
import io.github.delayqueue.metrics.HandlingOutcome;
import io.github.delayqueue.runtime.DelayQueueRuntime;
import io.github.delayqueue.store.TopicInspector;
import io.github.delayqueue.store.TopicStats;
import io.github.delayqueue.store.redis.RedisMessageStore;
import io.github.delayqueue.test.redis.FaultyRedisProxy;
import io.github.delayqueue.test.redis.TestRedis;
import io.github.delayqueue.testsupport.QueueContexts;
import io.github.delayqueue.testsupport.Transitions;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * What a stop does with the messages in hand, at the edges a review found: an
 * acknowledgement queued while the stop flushes is sent, a claim that Redis made the
 * client send again in full (its script was missing) is not sent after the stop handed it
 * back, and a batch still being gathered is handed back, not started.
 */
class StopSettlementTests {

	private static final Duration WAIT = Duration.ofSeconds(20);

	/**
	 * A handler that returns at the stop's handler deadline wins its settlement
	 * ({@code Settlement.acknowledge} marks the message settled, so
	 * {@code handBackUnfinished} leaves it out), but queues its acknowledgement only
	 * after {@code report.run()}; if {@code AckBatcher.flushNow} ran in between, the
	 * acknowledgement goes to a flush scheduled 5 ms later, and the stop, which waits
	 * only for what {@code flushNow} sent, then shuts the scheduler down
	 * ({@code shutdownNow}) and the flush is dropped (or, once it is shut down,
	 * {@code scheduleFlush} is refused, "flushNow sends what is left", which it never
	 * will). The message is neither acknowledged nor handed back: it stays in flight
	 * until its lease expires and is delivered again, attempt + 1, or dead-lettered on
	 * its last attempt, though its handler succeeded. Here a metrics bean that is slow to
	 * record the outcome widens the window between the two (a GC pause or preemption
	 * opens it too).
	 */
	@Test
	void aHandlerThatWinsItsSettlementAtTheDeadlineHasItsMessageAcknowledgedOrHandedBack() {
		SlowSuccessMetrics metrics = new SlowSuccessMetrics();
		QuickListener listener = new QuickListener();
		QueueContexts.runner(QueueContexts.uniquePrefix())
			.withBean(DelayQueueMetrics.class, () -> metrics)
			.withBean(QuickListener.class, () -> listener)
			.withPropertyValues("delay-queue.listener.shutdown-timeout=500ms", "delay-queue.broker.max-sleep=200ms")
			.run((context) -> {
				TopicInspector topic = context.getBean(RedisMessageStore.class).inspector("quick");
				context.getBean(DelayQueueTemplate.class).send(DelayMessage.builder("quick", "m1").id("m1").build());
				// The handler returned and won the settlement; its outcome is being
				// recorded.
				assertThat(metrics.recording.await(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
				context.getBean(DelayQueueRuntime.class).stop();
				metrics.recorded.countDown();
				assertThat(metrics.returned.await(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
				// Acknowledged, or else handed back: not left leased until it expires.
				await().atMost(Duration.ofSeconds(5)).until(() -> topic.stats().inFlight() == 0);
			});
	}

	/**
	 * A claim whose script Redis does not have (after a restart, a failover or a
	 * {@code SCRIPT FLUSH}) gets {@code NOSCRIPT}, and {@code ScriptRunner} sends it
	 * again in full ({@code EVAL}) where that reply arrives. The stop's
	 * {@code release_claim.lua} went out on the connection right behind the first
	 * {@code EVALSHA}, so it runs before the claim's {@code EVAL}: it finds no record and
	 * hands back nothing, and the claim then leases the message. The stop returns once
	 * the hand-back is answered, the application closes its Redis connection, and the
	 * claim's reply is never read: the message stays leased until its lease expires and,
	 * on its last attempt, is dead-lettered without ever being delivered, the very case
	 * {@code GracefulStopTests.whatAClaimUnansweredWhenTheApplicationClosesLeasedIsHandedBackAndNotDeadLettered}
	 * closed for a claim that runs at its first try.
	 */
	@Test
	void aClaimSentAgainInFullAfterNoscriptWhenTheApplicationClosesIsHandedBackAndNotDeadLettered() {
		String prefix = QueueContexts.uniquePrefix();
		TestRedis redis = TestRedis.shared();
		try (FaultyRedisProxy proxy = FaultyRedisProxy.start(redis.host(), redis.port())) {
			makeReadyAndFlushScripts(prefix, "late");
			// The claim's NOSCRIPT reply comes 300 ms late, and the reply to the claim
			// sent again in full 3 s late.
			FaultyRedisProxy.Fault noScript = proxy.delayNextReplyToCommand(
					FaultyRedisProxy.withArgumentContaining("EVALSHA", prefix + ":{blocking}:c:"),
					Duration.ofMillis(300));
			FaultyRedisProxy.Fault inFull = proxy.delayNextReplyToCommand(
					(command) -> FaultyRedisProxy.withArgumentContaining("EVAL", "-- claim: lease ready messages")
						.test(command)
							&& FaultyRedisProxy.withArgumentContaining("EVAL", prefix + ":{blocking}:c:").test(command),
					Duration.ofSeconds(3));
			BlockingListener stopped = new BlockingListener();
			QueueContexts.runner(prefix, proxy)
				.withBean(BlockingListener.class, () -> stopped)
				.withPropertyValues(lastAttempt("delay-queue.listener.shutdown-timeout=1s"))
				.run((context) -> {
					assertThat(noScript.awaitFired(WAIT)).isTrue();
					// What an application's shutdown does: the listeners stop, then the
					// Redis connection factory is destroyed.
					context.close();
					assertThat(inFull.awaitFired(Duration.ofMillis(1500)))
						.as("the claim is not sent again once the stop handed it back")
						.isFalse();
					assertThat(stopped.deliveries).isEmpty();
				});
			BlockingListener next = new BlockingListener();
			next.release.countDown();
			QueueContexts.runner(prefix)
				.withBean(BlockingListener.class, () -> next)
				.withPropertyValues(lastAttempt())
				.run((context) -> {
					TopicInspector topic = context.getBean(RedisMessageStore.class).inspector("blocking");
					await().atMost(WAIT).until(() -> next.deliveries.size() == 1 || topic.stats().dead() == 1);
					assertThat(topic.stats().dead()).as("dead-lettered without a delivery").isZero();
					assertThat(next.deliveries).containsExactly("late");
					assertThat(next.attempts).containsExactly(1);
				});
		}
	}

	/**
	 * README ({@code shutdown-timeout}): "messages not yet handed to a handler go back at
	 * once"; the round-2 fix does so for messages waiting for a handler and for held
	 * ones, but {@code TopicConsumer.stopClaiming()} calls {@code BatchAssembler.stop()},
	 * which hands the batch still being gathered to the handlers: a batch listener's
	 * method starts after the stop began, only to be cut off at the deadline (its
	 * messages then handed back as unfinished, with a WARN, whatever the method did of
	 * its work). With an executor that waits for room, that call even runs on the
	 * stopping thread.
	 */
	@Test
	void aBatchStillBeingGatheredWhenTheStopBeginsIsHandedBackNotStarted() {
		GatheringBatchListener listener = new GatheringBatchListener();
		QueueContexts.runner(QueueContexts.uniquePrefix())
			.withBean(GatheringBatchListener.class, () -> listener)
			.withPropertyValues("delay-queue.listener.shutdown-timeout=500ms", "delay-queue.broker.max-sleep=200ms")
			.run((context) -> {
				TopicInspector topic = context.getBean(RedisMessageStore.class).inspector("gathered");
				DelayQueueTemplate template = context.getBean(DelayQueueTemplate.class);
				template.send(DelayMessage.builder("gathered", "m1").id("m1").build());
				template.send(DelayMessage.builder("gathered", "m2").id("m2").build());
				// Claimed, and gathered for a batch of up to 10 within 30 s.
				await().atMost(WAIT).until(() -> topic.stats().inFlight() == 2);
				context.getBean(DelayQueueRuntime.class).stop();
				assertThat(listener.batches).as("batches started after the stop began").isEmpty();
				TopicStats stats = topic.stats();
				assertThat(stats.ready()).as("handed back").isEqualTo(2);
			});
	}

	/**
	 * Sends a message and makes it ready while no listener runs, then empties Redis'
	 * script cache, so that the next claim gets {@code NOSCRIPT}.
	 */
	private static void makeReadyAndFlushScripts(String prefix, String id) {
		QueueContexts.runner(prefix).run((context) -> {
			context.getBean(DelayQueueTemplate.class).send(DelayMessage.builder("blocking", id).id(id).build());
			RedisMessageStore store = context.getBean(RedisMessageStore.class);
			assertThat(Transitions.promote(store, "blocking", 10).moved()).isOne();
			context.getBean(StringRedisTemplate.class).execute((RedisCallback<Void>) (connection) -> {
				connection.scriptingCommands().scriptFlush();
				return null;
			});
		});
	}

	/**
	 * A lease that ends soon after the test; one attempt: its expiry dead-letters.
	 * @param more more properties, which win
	 */
	private static String[] lastAttempt(String... more) {
		List<String> properties = new ArrayList<>(
				List.of("delay-queue.listener.max-attempts=1", "delay-queue.listener.visibility-timeout=4s",
						"delay-queue.listener.shutdown-timeout=200ms", "delay-queue.broker.max-sleep=200ms"));
		properties.addAll(List.of(more));
		return properties.toArray(String[]::new);
	}

	/**
	 * Records a successful outcome slowly the first time: signals when it begins, and
	 * waits (through interrupts) until told to go on.
	 */
	static final class SlowSuccessMetrics implements DelayQueueMetrics {

		final CountDownLatch recording = new CountDownLatch(1);

		final CountDownLatch recorded = new CountDownLatch(1);

		final CountDownLatch returned = new CountDownLatch(1);

		@Override
		public void handled(String topic, HandlingOutcome outcome, Duration duration, String exception) {
			if (outcome != HandlingOutcome.SUCCESS || this.recording.getCount() == 0) {
				return;
			}
			this.recording.countDown();
			boolean interrupted = false;
			while (true) {
				try {
					if (this.recorded.await(1, TimeUnit.MINUTES)) {
						break;
					}
				}
				catch (InterruptedException ex) {
					interrupted = true;
				}
			}
			if (interrupted) {
				Thread.currentThread().interrupt();
			}
			this.returned.countDown();
		}

	}

	static class QuickListener {

		@DelayListener(topic = "quick")
		void on(Delivery<String> delivery) {
		}

	}

	static class BlockingListener {

		final List<String> deliveries = new CopyOnWriteArrayList<>();

		final List<Integer> attempts = new CopyOnWriteArrayList<>();

		final CountDownLatch release = new CountDownLatch(1);

		@DelayListener(topic = "blocking")
		void on(Delivery<String> delivery) throws InterruptedException {
			this.deliveries.add(delivery.id());
			this.attempts.add(delivery.attempt());
			this.release.await(5, TimeUnit.MINUTES);
		}

	}

	static class GatheringBatchListener {

		final List<List<String>> batches = new CopyOnWriteArrayList<>();

		@DelayListener(topic = "gathered", maxBatchSize = "10", batchTimeout = "30s")
		void on(List<Delivery<String>> batch) throws InterruptedException {
			this.batches.add(batch.stream().map(Delivery::id).toList());
			// Stands for work that goes on until it is interrupted.
			new CountDownLatch(1).await(1, TimeUnit.MINUTES);
		}

	}

}

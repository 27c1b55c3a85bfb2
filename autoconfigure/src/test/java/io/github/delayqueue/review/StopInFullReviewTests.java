package io.github.delayqueue.review;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntFunction;

import io.github.delayqueue.listener.DelayListener;
import io.github.delayqueue.listener.Delivery;
import io.github.delayqueue.producer.DelayMessage;
import io.github.delayqueue.producer.DelayQueueTemplate;
import io.github.delayqueue.store.TopicStats;
import io.github.delayqueue.store.redis.RedisMessageStore;
import io.github.delayqueue.test.redis.FaultyRedisProxy;
import io.github.delayqueue.test.redis.RedisServerProcess;
import io.github.delayqueue.test.redis.TestRedis;
import io.github.delayqueue.testsupport.QueueContexts;
import io.github.delayqueue.testsupport.TestStore;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Disabled;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Adversarial review of the stop's calls sent in full ({@code EVAL}): the hand-backs
 * ({@code release.lua}) and the stop's last acknowledgements ({@code ack.lua}, sent again
 * in full when they were on their way by digest), end to end on real Redis behind a
 * {@link FaultyRedisProxy}. Each stop must end within its shutdown timeout, leave nothing
 * in flight that it could hand back or acknowledge, bury nothing, and say in its log only
 * what happened. Found by this review: an acknowledgement on its way when Redis had lost
 * its scripts was reported as a lost lease (the stop's run in full came first), and a
 * dead-letter call cut off by the stop after {@code NOSCRIPT} left its message in flight
 * (now sent in full); a retry call cut off the same way still does (disabled).
 */
@ExtendWith(OutputCaptureExtension.class)
class StopInFullReviewTests {

	private static final Duration WAIT = Duration.ofSeconds(10);

	/**
	 * Long enough that a message left in flight by a stop is still in flight when
	 * checked.
	 */
	private static final String LONG_LEASE = "delay-queue.listener.visibility-timeout=30s";

	/**
	 * Redis lost its scripts, and a handled message's acknowledgement is on its way by
	 * digest when the stop comes: the stop sends it again in full, which Redis runs
	 * first; the {@code NOSCRIPT} of the first call then has it sent in full too, and
	 * that run finds no lease. The message was acknowledged once, and the log must not
	 * say that it may be delivered again.
	 */
	@Test
	void anAcknowledgementOnItsWayWhenRedisLostItsScriptsIsNotReportedAsALostLease(CapturedOutput output) {
		String prefix = QueueContexts.uniquePrefix();
		String id = "acked-" + prefix;
		Gate gate = new Gate();
		try (FaultyRedisProxy proxy = ReviewFixtures.startProxy()) {
			QueueContexts.runner(prefix, proxy)
				.withBean(Gate.class, () -> gate)
				.withPropertyValues(LONG_LEASE, "delay-queue.listener.shutdown-timeout=2s",
						"delay-queue.broker.max-sleep=200ms")
				.run((context) -> {
					context.getBean(DelayQueueTemplate.class).send(DelayMessage.builder("gated", "g").id(id).build());
					await().atMost(WAIT).until(() -> gate.started.get() == 1);
					flushScripts(context);
					// Only the acknowledgement names the id: the claims do not.
					FaultyRedisProxy.Fault held = proxy.delayNextReplyToCommand(
							FaultyRedisProxy.withArgumentContaining("EVALSHA", id), Duration.ofMillis(400));
					gate.open = true;
					assertThat(held.awaitFired(WAIT)).as("the acknowledgement's NOSCRIPT held").isTrue();
					context.close();
				});
		}
		assertNothingPending(prefix, "gated");
		assertThat(gate.handled).hasValue(1);
		assertThat(output).doesNotContain("message " + id + " handled, but its lease had expired");
	}

	/**
	 * Redis has its scripts: the acknowledgement by digest runs and its reply is held;
	 * the stop sends it again in full, which runs too (finding no lease) and whose reply
	 * is dropped with the connection, so Lettuce sends both again. However many runs, the
	 * message is acknowledged once: nothing is left, nothing is dead, and the stop ends
	 * within its timeout. (Open, low: both replies read are of runs that found no lease,
	 * so the log says "handled, but its lease had expired: it may be delivered again", as
	 * a dead-letter call sent again after a lost reply does.)
	 */
	@Test
	void anAcknowledgementSentAgainInFullWhoseReplyIsDroppedLeavesTheMessageAcknowledgedOnce() {
		String prefix = QueueContexts.uniquePrefix();
		String id = "dropped-" + prefix;
		Gate gate = new Gate();
		try (FaultyRedisProxy proxy = ReviewFixtures.startProxy()) {
			QueueContexts.runner(prefix, proxy)
				.withBean(Gate.class, () -> gate)
				.withPropertyValues(LONG_LEASE, "delay-queue.topics.gated.max-attempts=1",
						"delay-queue.listener.shutdown-timeout=1s", "delay-queue.broker.max-sleep=200ms")
				.run((context) -> {
					// Redis has ack.lua: the acknowledgement by digest runs.
					context.getBean(RedisMessageStore.class)
						.topic("gated")
						.ack(List.of("none"), List.of("none"))
						.join();
					context.getBean(DelayQueueTemplate.class).send(DelayMessage.builder("gated", "g").id(id).build());
					await().atMost(WAIT).until(() -> gate.started.get() == 1);
					FaultyRedisProxy.Fault held = proxy.delayNextReplyToCommand(
							FaultyRedisProxy.withArgumentContaining("EVALSHA", id), Duration.ofMillis(300));
					FaultyRedisProxy.Fault dropped = proxy.dropNextReplyTo(FaultyRedisProxy.named("EVAL"));
					gate.open = true;
					assertThat(held.awaitFired(WAIT)).as("the acknowledgement's reply held").isTrue();
					long started = System.nanoTime();
					context.close();
					assertThat(Duration.ofNanos(System.nanoTime() - started)).as("stop with a shutdown timeout of 1s")
						.isLessThan(Duration.ofMillis(2500));
					assertThat(dropped.hasFired()).as("the reply of the acknowledgement in full dropped").isTrue();
				});
		}
		assertNothingPending(prefix, "gated");
		assertThat(gate.handled).hasValue(1);
	}

	/**
	 * A batch listener handles 200 messages (an acknowledgement batch of the most
	 * messages) just before the stop, Redis having lost its scripts and the reply coming
	 * after the connection closed: the 200 acknowledgements sent again in full run, and
	 * nothing is left in flight.
	 */
	@Test
	void aFullBatchOfAcknowledgementsSentAgainInFullAtTheStopRuns() {
		String prefix = QueueContexts.uniquePrefix();
		List<String> ids = ReviewFixtures.ids("batched-msg-", 200);
		Batches batches = new Batches();
		try (FaultyRedisProxy proxy = ReviewFixtures.startProxy()) {
			QueueContexts.runner(prefix, proxy)
				.withBean(Batches.class, () -> batches)
				.withPropertyValues(LONG_LEASE, "delay-queue.topics.batched.max-batch-size=200",
						"delay-queue.topics.batched.batch-timeout=1s", "delay-queue.listener.shutdown-timeout=500ms",
						"delay-queue.broker.max-sleep=200ms")
				.run((context) -> {
					send(context, ids, (i) -> DelayMessage.builder("batched", "b").id(ids.get(i)).build());
					await().atMost(WAIT).until(() -> batches.started.get() == 1);
					flushScripts(context);
					FaultyRedisProxy.Fault held = proxy.delayNextReplyToCommand(
							FaultyRedisProxy.withArgumentContaining("EVALSHA", ids.get(0)), Duration.ofSeconds(3));
					batches.open = true;
					assertThat(held.awaitFired(WAIT)).as("the acknowledgements' NOSCRIPT held").isTrue();
					context.close();
				});
		}
		assertThat(batches.handled).hasSize(200);
		assertNothingPending(prefix, "batched");
	}

	/**
	 * A thousand messages held until their due time (the most a listener holds) go back
	 * at the stop in one hand-back sent in full, Redis having lost its scripts and the
	 * reply coming after the connection closed.
	 */
	@Test
	void aThousandHeldMessagesGoBackInOneHandBackInFullAtTheStop() {
		String prefix = QueueContexts.uniquePrefix();
		List<String> ids = ReviewFixtures.ids("held-msg-", 1000);
		try (FaultyRedisProxy proxy = ReviewFixtures.startProxy()) {
			QueueContexts.runner(prefix, proxy)
				.withUserConfiguration(Early.class)
				.withPropertyValues(LONG_LEASE, "delay-queue.broker.lookahead=30s",
						"delay-queue.listener.shutdown-timeout=500ms", "delay-queue.broker.max-sleep=200ms")
				.run((context) -> {
					send(context, ids,
							(i) -> DelayMessage.builder("early", "e")
								.id(ids.get(i))
								.delay(Duration.ofSeconds(20))
								.build());
					RedisMessageStore store = context.getBean(RedisMessageStore.class);
					await().atMost(WAIT).until(() -> store.stats("early").inFlight() == ids.size());
					flushScripts(context);
					FaultyRedisProxy.Fault held = proxy.delayNextReplyTo(FaultyRedisProxy.named("EVALSHA", "EVAL"),
							Duration.ofSeconds(3));
					long started = System.nanoTime();
					context.close();
					assertThat(Duration.ofNanos(System.nanoTime() - started))
						.as("stop with a shutdown timeout of 500ms")
						.isLessThan(Duration.ofMillis(1500));
					assertThat(held.hasFired()).isTrue();
				});
		}
		try (TestStore store = TestStore.builder().prefix(prefix).build()) {
			TopicStats stats = store.store().stats("early");
			assertThat(stats.inFlight()).as("in flight after the stop").isZero();
			assertThat(stats.ready()).as("ready after the stop").isEqualTo(ids.size());
		}
	}

	/**
	 * An acknowledgement by digest runs (Redis has its scripts) and its reply is held;
	 * meanwhile the producer sends a new message with the same id, which is stored anew.
	 * The stop sends the first acknowledgement again in full, with the first lease's
	 * token: it must leave the new message alone, whoever holds it then, and the next
	 * application delivers it.
	 */
	@Test
	void anAcknowledgementSentAgainInFullLeavesANewMessageWithTheSameIdAlone() {
		String prefix = QueueContexts.uniquePrefix();
		String id = "twice-" + prefix;
		Twice first = new Twice();
		first.blockSecond = true;
		try (FaultyRedisProxy proxy = ReviewFixtures.startProxy();
				TestStore direct = TestStore.builder().prefix(prefix).build()) {
			QueueContexts.runner(prefix, proxy)
				.withBean(Twice.class, () -> first)
				.withPropertyValues(LONG_LEASE, "delay-queue.listener.shutdown-timeout=1s",
						"delay-queue.broker.max-sleep=200ms")
				.run((context) -> {
					// Redis has ack.lua: the acknowledgement by digest runs.
					context.getBean(RedisMessageStore.class)
						.topic("twice")
						.ack(List.of("none"), List.of("none"))
						.join();
					direct.template().send(DelayMessage.builder("twice", "first").id(id).build());
					await().atMost(WAIT).until(() -> first.started.contains("first"));
					FaultyRedisProxy.Fault held = proxy.delayNextReplyToCommand(
							FaultyRedisProxy.withArgumentContaining("EVALSHA", id), Duration.ofMillis(700));
					first.open = true;
					assertThat(held.awaitFired(WAIT)).as("the acknowledgement's reply held").isTrue();
					// The acknowledgement ran: the id is free again.
					direct.template().send(DelayMessage.builder("twice", "second").id(id).build());
					TopicStats stored = direct.store().stats("twice");
					assertThat(stored.scheduled() + stored.ready() + stored.inFlight()).as("the new message, stored")
						.isOne();
					context.close();
				});
		}
		Twice next = new Twice();
		QueueContexts.runner(prefix)
			.withBean(Twice.class, () -> next)
			.run((context) -> await().atMost(WAIT).until(() -> next.handled.contains("second")));
		assertThat(first.handled).containsExactly("first");
		assertThat(next.handled).containsExactly("second");
		assertNothingPending(prefix, "twice");
	}

	/**
	 * A topic of three partitions: the messages each partition's consumer holds until
	 * their due time go back at the stop in full, Redis having lost its scripts and the
	 * replies coming after the connection closed.
	 */
	@Test
	void heldMessagesOfEveryPartitionGoBackInFullAtTheStop() {
		String prefix = QueueContexts.uniquePrefix();
		List<String> ids = ReviewFixtures.ids("wide-msg-", 30);
		try (FaultyRedisProxy proxy = ReviewFixtures.startProxy()) {
			QueueContexts.runner(prefix, proxy)
				.withUserConfiguration(WideEarly.class)
				.withPropertyValues(LONG_LEASE, "delay-queue.topics.wide.partitions=3",
						"delay-queue.broker.lookahead=30s", "delay-queue.listener.shutdown-timeout=500ms",
						"delay-queue.broker.max-sleep=200ms")
				.run((context) -> {
					send(context, ids,
							(i) -> DelayMessage.builder("wide", "w")
								.id(ids.get(i))
								.delay(Duration.ofSeconds(20))
								.build());
					RedisMessageStore store = context.getBean(RedisMessageStore.class);
					await().atMost(WAIT).until(() -> store.stats("wide").inFlight() == ids.size());
					flushScripts(context);
					FaultyRedisProxy.Fault held = proxy.delayNextReplyTo(FaultyRedisProxy.named("EVALSHA", "EVAL"),
							Duration.ofSeconds(3));
					context.close();
					assertThat(held.hasFired()).isTrue();
				});
		}
		try (TestStore store = TestStore.builder().prefix(prefix).partitions(Map.of("wide", 3)).build()) {
			TopicStats stats = store.store().stats("wide");
			assertThat(stats.inFlight()).as("in flight after the stop").isZero();
			assertThat(stats.ready()).as("ready after the stop").isEqualTo(ids.size());
		}
	}

	/**
	 * Redis restarts (keeping its data, losing its scripts) while the listener stops: the
	 * hand-back in full is written while the connection is down and goes out once Lettuce
	 * has reconnected, within the shutdown timeout, so the held messages are ready again
	 * after the stop.
	 */
	@Test
	void heldMessagesGoBackWhenRedisRestartsDuringTheStop() throws InterruptedException {
		Assumptions.assumeTrue(TestRedis.canStartPrivateServer(), "needs a redis-server binary");
		String prefix = QueueContexts.uniquePrefix();
		List<String> ids = ReviewFixtures.ids("restart-msg-", 10);
		try (RedisServerProcess redis = TestRedis.startPrivateServer("--appendonly", "yes", "--appendfsync",
				"always")) {
			QueueContexts.runner(prefix, redis.springProperties())
				.withUserConfiguration(RestartEarly.class)
				.withPropertyValues(LONG_LEASE, "delay-queue.broker.lookahead=30s",
						"delay-queue.listener.shutdown-timeout=3s", "delay-queue.broker.max-sleep=200ms")
				.run((context) -> {
					send(context, ids,
							(i) -> DelayMessage.builder("restarted", "r")
								.id(ids.get(i))
								.delay(Duration.ofSeconds(20))
								.build());
					RedisMessageStore store = context.getBean(RedisMessageStore.class);
					await().atMost(WAIT).until(() -> store.stats("restarted").inFlight() == ids.size());
					redis.stop();
					Thread stopping = new Thread(context::close);
					stopping.start();
					redis.start();
					stopping.join(WAIT.toMillis());
					assertThat(stopping.isAlive()).as("still stopping").isFalse();
				});
			try (TestStore store = TestStore.builder().prefix(prefix).on(redis.host(), redis.port()).build()) {
				TopicStats stats = store.store().stats("restarted");
				assertThat(stats.inFlight()).as("in flight after the stop").isZero();
				assertThat(stats.ready()).as("ready after the stop").isEqualTo(ids.size());
			}
		}
	}

	/**
	 * Messages of every priority held until their due time go back at the stop in full;
	 * the hand-back runs and its reply is lost with the connection. The stop ends within
	 * its timeout, and each message is ready again in the list of its priority.
	 */
	@Test
	void aHandBackInFullWhoseReplyIsLostPutsEachMessageBackInTheListOfItsPriority() {
		String prefix = QueueContexts.uniquePrefix();
		List<String> ids = ReviewFixtures.ids("ranked-msg-", 10);
		try (FaultyRedisProxy proxy = ReviewFixtures.startProxy()) {
			QueueContexts.runner(prefix, proxy)
				.withUserConfiguration(RankedEarly.class)
				.withPropertyValues(LONG_LEASE, "delay-queue.broker.lookahead=30s",
						"delay-queue.listener.shutdown-timeout=1s", "delay-queue.broker.max-sleep=200ms")
				.run((context) -> {
					send(context, ids,
							(i) -> DelayMessage.builder("ranked", "r")
								.id(ids.get(i))
								.priority(i)
								.delay(Duration.ofSeconds(20))
								.build());
					RedisMessageStore store = context.getBean(RedisMessageStore.class);
					await().atMost(WAIT).until(() -> store.stats("ranked").inFlight() == ids.size());
					FaultyRedisProxy.Fault dropped = proxy.dropNextReplyTo(FaultyRedisProxy.named("EVAL"));
					long started = System.nanoTime();
					context.close();
					assertThat(Duration.ofNanos(System.nanoTime() - started)).as("stop with a shutdown timeout of 1s")
						.isLessThan(Duration.ofMillis(2500));
					assertThat(dropped.hasFired()).as("the hand-back's reply dropped").isTrue();
				});
		}
		try (TestStore store = TestStore.builder().prefix(prefix).build()) {
			TopicStats stats = store.store().stats("ranked");
			assertThat(stats.inFlight()).as("in flight after the stop").isZero();
			assertThat(stats.dead()).as("dead letters").isZero();
			assertThat(stats.readyByPriority()).as("ready by priority")
				.containsExactlyInAnyOrderEntriesOf(
						Map.of(0, 1L, 1, 1L, 2, 1L, 3, 1L, 4, 1L, 5, 1L, 6, 1L, 7, 1L, 8, 1L, 9, 1L));
		}
	}

	/**
	 * Redis answers nothing at all once the stop comes (the network is down): the stop
	 * ends within its shutdown timeout, and its warnings name the topic and the messages.
	 */
	@Test
	void aStopWhileRedisAnswersNothingEndsWithinItsTimeoutAndNamesTheMessages(CapturedOutput output) {
		String prefix = QueueContexts.uniquePrefix();
		List<String> ids = ReviewFixtures.ids("silent-msg-", 5);
		try (FaultyRedisProxy proxy = ReviewFixtures.startProxy()) {
			QueueContexts.runner(prefix, proxy)
				.withUserConfiguration(SilentEarly.class)
				.withPropertyValues(LONG_LEASE, "delay-queue.broker.lookahead=30s",
						"delay-queue.listener.shutdown-timeout=1s", "delay-queue.broker.max-sleep=200ms")
				.run((context) -> {
					send(context, ids,
							(i) -> DelayMessage.builder("silent", "s")
								.id(ids.get(i))
								.delay(Duration.ofSeconds(20))
								.build());
					RedisMessageStore store = context.getBean(RedisMessageStore.class);
					await().atMost(WAIT).until(() -> store.stats("silent").inFlight() == ids.size());
					proxy.pause();
					long started = System.nanoTime();
					context.close();
					assertThat(Duration.ofNanos(System.nanoTime() - started)).as("stop with a shutdown timeout of 1s")
						.isLessThan(Duration.ofMillis(2500));
				});
			await().atMost(WAIT)
				.untilAsserted(() -> assertThat(output).contains("Topic 'silent': Redis did not answer the hand-back",
						"Topic 'silent': no answer to the hand-back of 5 messages", "silent-msg-0"));
			proxy.resume();
		}
	}

	/**
	 * A handler fails on the message's last attempt right as the stop comes, and Redis
	 * lost its scripts: the dead-letter call goes by digest, and its {@code NOSCRIPT}
	 * comes after the connection closed. The message was settled (dead-lettered), so the
	 * stop does not hand it back: it must still be dead after the stop, not in flight
	 * until its lease expires.
	 */
	@Test
	void aMessageFailingOnItsLastAttemptAsTheStopComesIsDeadAfterTheStopWhenRedisLostItsScripts() {
		String prefix = QueueContexts.uniquePrefix();
		String id = "doomed-" + prefix;
		Doomed doomed = new Doomed();
		try (FaultyRedisProxy proxy = ReviewFixtures.startProxy()) {
			QueueContexts.runner(prefix, proxy)
				.withBean(Doomed.class, () -> doomed)
				.withPropertyValues(LONG_LEASE, "delay-queue.listener.shutdown-timeout=500ms",
						"delay-queue.broker.max-sleep=200ms")
				.run((context) -> {
					context.getBean(DelayQueueTemplate.class).send(DelayMessage.builder("doomed", "d").id(id).build());
					await().atMost(WAIT).until(() -> doomed.started.get() == 1);
					flushScripts(context);
					FaultyRedisProxy.Fault held = proxy.delayNextReplyToCommand(
							FaultyRedisProxy.withArgumentContaining("EVALSHA", Doomed.ERROR)
								.or(FaultyRedisProxy.withArgumentContaining("EVAL", Doomed.ERROR)),
							Duration.ofSeconds(3));
					doomed.open = true;
					assertThat(held.awaitFired(WAIT)).as("the dead-letter call's reply held").isTrue();
					context.close();
				});
		}
		try (TestStore store = TestStore.builder().prefix(prefix).build()) {
			TopicStats stats = store.store().stats("doomed");
			assertThat(stats.inFlight()).as("in flight after the stop").isZero();
			assertThat(stats.dead()).as("dead letters").isOne();
		}
	}

	/**
	 * The same with attempts left: the handler fails as the stop comes, and the retry
	 * call (by digest) meets {@code NOSCRIPT} after the connection closed. The message
	 * should be scheduled for its next attempt after the stop; it stays in flight until
	 * its lease expires, and then goes back with "lease expired" as its error instead of
	 * the handler's.
	 */
	@Test
	@Disabled("hole: retry.lua (and postpone) go by digest from the handler's thread; when the stop interrupts it "
			+ "with the NOSCRIPT on its way, the message stays in flight until its lease expires and goes back with "
			+ "'lease expired' for its error (sending them in full, as deadLetter now is, costs ~6 KB a failure)")
	void aMessageFailingAsTheStopComesIsScheduledForItsNextAttemptWhenRedisLostItsScripts() {
		String prefix = QueueContexts.uniquePrefix();
		String id = "failing-" + prefix;
		Failing failing = new Failing();
		try (FaultyRedisProxy proxy = ReviewFixtures.startProxy()) {
			QueueContexts.runner(prefix, proxy)
				.withBean(Failing.class, () -> failing)
				.withPropertyValues(LONG_LEASE, "delay-queue.listener.shutdown-timeout=500ms",
						"delay-queue.broker.max-sleep=200ms")
				.run((context) -> {
					context.getBean(DelayQueueTemplate.class).send(DelayMessage.builder("failing", "f").id(id).build());
					await().atMost(WAIT).until(() -> failing.started.get() == 1);
					flushScripts(context);
					FaultyRedisProxy.Fault held = proxy.delayNextReplyToCommand(
							FaultyRedisProxy.withArgumentContaining("EVALSHA", Failing.ERROR)
								.or(FaultyRedisProxy.withArgumentContaining("EVAL", Failing.ERROR)),
							Duration.ofSeconds(3));
					failing.open = true;
					assertThat(held.awaitFired(WAIT)).as("the retry call's reply held").isTrue();
					context.close();
				});
		}
		try (TestStore store = TestStore.builder().prefix(prefix).build()) {
			TopicStats stats = store.store().stats("failing");
			assertThat(stats.inFlight()).as("in flight after the stop").isZero();
			assertThat(stats.scheduled() + stats.ready()).as("waiting for the next attempt").isOne();
		}
	}

	/**
	 * Four handlers take a stream of messages, Redis 10 ms away, and the stop comes right
	 * after Redis lost its scripts: every acknowledgement on its way and every hand-back
	 * meets {@code NOSCRIPT} or goes in full. Nothing is left in flight or dead, no lease
	 * was lost, and the next application delivers the rest: each message is delivered
	 * once.
	 */
	@Test
	void aStopUnderLoadRightAfterRedisLostItsScriptsAcknowledgesEveryHandledMessageOnce(CapturedOutput output) {
		String prefix = QueueContexts.uniquePrefix();
		List<String> ids = ReviewFixtures.ids("stream-msg-", 100);
		Stream first = new Stream();
		try (FaultyRedisProxy proxy = ReviewFixtures.startProxy()) {
			QueueContexts.runner(prefix, proxy)
				.withBean(Stream.class, () -> first)
				.withPropertyValues(LONG_LEASE, "delay-queue.topics.stream.concurrency=4",
						"delay-queue.listener.shutdown-timeout=1s", "delay-queue.broker.max-sleep=200ms")
				.run((context) -> {
					proxy.latency(Duration.ofMillis(10));
					send(context, ids,
							(i) -> DelayMessage.builder("stream", "s").id(ids.get(i)).priority(i % 3).build());
					await().atMost(WAIT).until(() -> first.handled.size() >= 30);
					flushScripts(context);
					long started = System.nanoTime();
					context.close();
					assertThat(Duration.ofNanos(System.nanoTime() - started)).as("stop with a shutdown timeout of 1s")
						.isLessThan(Duration.ofMillis(2500));
				});
		}
		try (TestStore store = TestStore.builder().prefix(prefix).build()) {
			TopicStats stats = store.store().stats("stream");
			assertThat(stats.inFlight()).as("in flight after the stop").isZero();
			assertThat(stats.dead()).as("dead letters").isZero();
			assertThat(stats.ready() + stats.scheduled()).as("left for the next application")
				.isEqualTo(ids.size() - first.handled.size());
		}
		Stream next = new Stream();
		QueueContexts.runner(prefix)
			.withBean(Stream.class, () -> next)
			.withPropertyValues("delay-queue.topics.stream.concurrency=4")
			.run((context) -> await().atMost(WAIT)
				.until(() -> first.handled.size() + next.handled.size() >= ids.size()));
		Map<String, AtomicInteger> all = new ConcurrentHashMap<>();
		first.handled
			.forEach((id, count) -> all.computeIfAbsent(id, (key) -> new AtomicInteger()).addAndGet(count.get()));
		next.handled
			.forEach((id, count) -> all.computeIfAbsent(id, (key) -> new AtomicInteger()).addAndGet(count.get()));
		assertThat(all.keySet()).containsExactlyInAnyOrderElementsOf(ids);
		assertThat(all).as("deliveries of each message")
			.allSatisfy((id, count) -> assertThat(count).as(id).hasValue(1));
		assertThat(output).doesNotContain("but its lease had expired", "no answer to the acknowledgement");
	}

	/**
	 * A message sent with a deduplication window, held until its due time, goes back at
	 * the stop in full (Redis lost its scripts): the same message sent again meanwhile is
	 * stored once, the next application delivers it once, and its id is remembered
	 * afterwards.
	 */
	@Test
	void aMessageWithADeduplicationWindowHandedBackInFullIsDeliveredOnceAndRememberedAfterwards() {
		String prefix = QueueContexts.uniquePrefix();
		String id = "dedupe-" + prefix;
		DelayMessage message = DelayMessage.builder("deduped", "x")
			.id(id)
			.delay(Duration.ofMillis(1500))
			.deduplicateFor(Duration.ofMinutes(5))
			.build();
		try (FaultyRedisProxy proxy = ReviewFixtures.startProxy()) {
			QueueContexts.runner(prefix, proxy)
				.withUserConfiguration(Deduped.class)
				.withPropertyValues(LONG_LEASE, "delay-queue.broker.lookahead=30s",
						"delay-queue.listener.shutdown-timeout=500ms", "delay-queue.broker.max-sleep=200ms")
				.run((context) -> {
					context.getBean(DelayQueueTemplate.class).send(message);
					RedisMessageStore store = context.getBean(RedisMessageStore.class);
					await().atMost(WAIT).until(() -> store.stats("deduped").inFlight() == 1);
					flushScripts(context);
					FaultyRedisProxy.Fault held = proxy.delayNextReplyTo(FaultyRedisProxy.named("EVALSHA", "EVAL"),
							Duration.ofSeconds(3));
					context.close();
					assertThat(held.hasFired()).isTrue();
				});
		}
		Deduped next = new Deduped();
		try (TestStore direct = TestStore.builder().prefix(prefix).build()) {
			assertThat(direct.store().stats("deduped").inFlight()).as("in flight after the stop").isZero();
			// The same body again: reported as stored, and stored once.
			direct.template().send(message);
			TopicStats pending = direct.store().stats("deduped");
			assertThat(pending.scheduled() + pending.ready() + pending.inFlight()).as("pending").isOne();
			QueueContexts.runner(prefix)
				.withBean(Deduped.class, () -> next)
				.run((context) -> await().atMost(WAIT).untilAsserted(() -> {
					assertThat(next.handled).containsExactly(id);
					assertThat(direct.store().stats("deduped").rememberedIds()).as("remembered ids").isOne();
				}));
			assertThat(direct.template().send(message).duplicate()).as("sent again once handled").isTrue();
			TopicStats stats = direct.store().stats("deduped");
			assertThat(stats.scheduled() + stats.ready() + stats.inFlight() + stats.dead()).as("stored").isZero();
		}
		assertThat(next.handled).containsExactly(id);
	}

	private static void flushScripts(ConfigurableApplicationContext context) {
		context.getBean(StringRedisTemplate.class).execute((RedisCallback<Object>) (connection) -> {
			connection.scriptingCommands().scriptFlush();
			return null;
		});
	}

	private static void send(ConfigurableApplicationContext context, List<String> ids,
			IntFunction<DelayMessage> message) {
		List<DelayMessage> messages = new ArrayList<>();
		for (int i = 0; i < ids.size(); i++) {
			messages.add(message.apply(i));
		}
		context.getBean(DelayQueueTemplate.class).sendAll(messages);
	}

	/**
	 * Nothing scheduled, ready or in flight, and nothing dead: well within the 30 s
	 * lease, what the stop left in flight would still be there.
	 */
	private static void assertNothingPending(String prefix, String topic) {
		try (TestStore store = TestStore.builder().prefix(prefix).build()) {
			TopicStats stats = store.store().stats(topic);
			assertThat(stats.inFlight()).as("in flight after the stop").isZero();
			assertThat(stats.ready() + stats.scheduled()).as("ready or scheduled after the stop").isZero();
			assertThat(stats.dead()).as("dead letters").isZero();
		}
	}

	@Configuration(proxyBeanMethods = false)
	static class Gate {

		final AtomicInteger started = new AtomicInteger();

		final AtomicInteger handled = new AtomicInteger();

		volatile boolean open;

		@DelayListener(topic = "gated")
		void on(String payload) {
			this.started.incrementAndGet();
			await().atMost(WAIT).until(() -> this.open);
			this.handled.incrementAndGet();
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class Batches {

		final AtomicInteger started = new AtomicInteger();

		final Map<String, AtomicInteger> handled = new ConcurrentHashMap<>();

		volatile boolean open;

		@DelayListener(topic = "batched")
		void on(List<Delivery<String>> batch) {
			this.started.incrementAndGet();
			await().atMost(WAIT).until(() -> this.open);
			batch.forEach((delivery) -> this.handled.computeIfAbsent(delivery.id(), (id) -> new AtomicInteger())
				.incrementAndGet());
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class Twice {

		final List<String> started = new CopyOnWriteArrayList<>();

		final List<String> handled = new CopyOnWriteArrayList<>();

		/** Lets the handler of the first message return. */
		volatile boolean open;

		/** Whether the second message's handler runs until the stop interrupts it. */
		volatile boolean blockSecond;

		@DelayListener(topic = "twice")
		void on(String payload) throws InterruptedException {
			this.started.add(payload);
			if (payload.equals("first")) {
				await().atMost(WAIT).until(() -> this.open);
			}
			else if (this.blockSecond) {
				// Until the stop interrupts it: the message goes back unfinished.
				Thread.sleep(WAIT.toMillis());
			}
			this.handled.add(payload);
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class Doomed {

		static final String ERROR = "doomed-for-review-0xd0d0";

		final AtomicInteger started = new AtomicInteger();

		volatile boolean open;

		@DelayListener(topic = "doomed", maxAttempts = 1)
		void on(String payload) {
			this.started.incrementAndGet();
			await().atMost(WAIT).until(() -> this.open);
			throw new IllegalStateException(ERROR);
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class Failing {

		static final String ERROR = "failing-for-review-0xfa11";

		final AtomicInteger started = new AtomicInteger();

		volatile boolean open;

		@DelayListener(topic = "failing", maxAttempts = 3)
		void on(String payload) {
			this.started.incrementAndGet();
			await().atMost(WAIT).until(() -> this.open);
			throw new IllegalStateException(ERROR);
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class Stream {

		final Map<String, AtomicInteger> handled = new ConcurrentHashMap<>();

		@DelayListener(topic = "stream")
		void on(Delivery<String> delivery) throws InterruptedException {
			Thread.sleep(5);
			this.handled.computeIfAbsent(delivery.id(), (id) -> new AtomicInteger()).incrementAndGet();
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class Deduped {

		final List<String> handled = new CopyOnWriteArrayList<>();

		@DelayListener(topic = "deduped")
		void on(Delivery<String> delivery) {
			this.handled.add(delivery.id());
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class WideEarly {

		@DelayListener(topic = "wide")
		void on(String payload) {
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class RestartEarly {

		@DelayListener(topic = "restarted")
		void on(String payload) {
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class RankedEarly {

		@DelayListener(topic = "ranked")
		void on(String payload) {
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class SilentEarly {

		@DelayListener(topic = "silent")
		void on(String payload) {
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class Early {

		@DelayListener(topic = "early")
		void on(String payload) {
		}

	}

}

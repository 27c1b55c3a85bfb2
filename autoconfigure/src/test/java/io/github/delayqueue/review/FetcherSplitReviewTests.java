package io.github.delayqueue.review;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntFunction;

import io.github.delayqueue.listener.DelayListener;
import io.github.delayqueue.listener.Delivery;
import io.github.delayqueue.producer.DelayMessage;
import io.github.delayqueue.producer.DelayQueueTemplate;
import io.github.delayqueue.store.TopicStats;
import io.github.delayqueue.store.redis.RedisMessageStore;
import io.github.delayqueue.test.redis.FaultyRedisProxy;
import io.github.delayqueue.testsupport.QueueContexts;
import org.junit.jupiter.api.Test;

import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Adversarial review of the fetcher's split by job (issue 35: {@code Fetcher},
 * {@code ClaimLoop}, {@code ClaimSlots}, {@code UnansweredClaim}, {@code DispatchQueue},
 * {@code EarlyMessages}), end to end on real Redis behind a {@link FaultyRedisProxy}:
 * stops racing a claim's reply, a claim sent again after it timed out, priorities with
 * batches and the lookahead, a rate-limited topic. Each stop must end within its shutdown
 * timeout and leave nothing in flight (what was leased and not handled goes back at once,
 * not when its lease expires), nothing dead, and every message is delivered by the next
 * application.
 */
class FetcherSplitReviewTests {

	private static final Duration WAIT = Duration.ofSeconds(20);

	/**
	 * Long enough that a message left in flight by a stop is still in flight when
	 * checked.
	 */
	private static final String LONG_LEASE = "delay-queue.listener.visibility-timeout=30s";

	@Test
	void aStopWhileAClaimsReplyIsHeldEndsWithinItsTimeoutAndLeavesNothingInFlight() {
		String prefix = QueueContexts.uniquePrefix();
		List<String> ids = ReviewFixtures.ids("job-", 40);
		send(prefix, "jobs", ids, (i) -> DelayMessage.builder("jobs", "job").id(ids.get(i)).build());
		Jobs first = new Jobs();
		try (FaultyRedisProxy proxy = ReviewFixtures.startProxy()) {
			QueueContexts.runner(prefix, proxy)
				.withBean(Jobs.class, () -> first)
				.withPropertyValues(LONG_LEASE, "delay-queue.topics.jobs.concurrency=2",
						"delay-queue.listener.shutdown-timeout=1s", "delay-queue.broker.max-sleep=200ms")
				.run((context) -> {
					await().atMost(WAIT).until(() -> first.handled.size() >= 4);
					FaultyRedisProxy.Fault held = holdNextClaim(proxy, prefix, "jobs", Duration.ofSeconds(3));
					assertThat(held.awaitFired(WAIT)).isTrue();
					long started = System.nanoTime();
					context.close();
					assertThat(Duration.ofNanos(System.nanoTime() - started)).as("stop with a shutdown timeout of 1s")
						.isLessThan(Duration.ofMillis(2500));
				});
		}
		assertNothingInFlightOrDead(prefix, "jobs");
		assertTheRestIsDeliveredOnce(prefix, first.handled, ids);
	}

	@Test
	void aStopWhileAClaimsReplyIsDroppedLeavesNothingInFlight() {
		String prefix = QueueContexts.uniquePrefix();
		List<String> ids = ReviewFixtures.ids("job-", 40);
		send(prefix, "jobs", ids, (i) -> DelayMessage.builder("jobs", "job").id(ids.get(i)).build());
		Jobs first = new Jobs();
		try (FaultyRedisProxy proxy = ReviewFixtures.startProxy()) {
			QueueContexts.runner(prefix, proxy)
				.withBean(Jobs.class, () -> first)
				.withPropertyValues(LONG_LEASE, "delay-queue.topics.jobs.concurrency=2",
						"delay-queue.listener.shutdown-timeout=1s", "delay-queue.broker.max-sleep=200ms")
				.run((context) -> {
					await().atMost(WAIT).until(() -> first.handled.size() >= 4);
					// The next script call whose reply is lost: a claim, an
					// acknowledgement, a hand-back or the broker's promotion, whichever
					// comes first; Lettuce reconnects and sends it again.
					FaultyRedisProxy.Fault dropped = proxy.dropNextReplyTo(FaultyRedisProxy.named("EVALSHA", "EVAL"));
					long started = System.nanoTime();
					context.close();
					assertThat(Duration.ofNanos(System.nanoTime() - started)).as("stop with a shutdown timeout of 1s")
						.isLessThan(Duration.ofMillis(2500));
					dropped.cancel();
				});
		}
		assertNothingInFlightOrDead(prefix, "jobs");
		assertTheRestIsDeliveredOnce(prefix, first.handled, ids);
	}

	/**
	 * A claim whose reply comes after the send timeout fails, and the claim loop sends
	 * the same request again (same lease token) after a backoff: Redis answers it with
	 * what the first run leased. Nothing is delivered twice (the leases never expire
	 * here) and nothing is lost.
	 */
	@Test
	void aClaimSentAgainAfterItsReplyTimedOutDeliversEachMessageOnce() {
		String prefix = QueueContexts.uniquePrefix();
		List<String> ids = ReviewFixtures.ids("job-", 30);
		send(prefix, "jobs", ids, (i) -> DelayMessage.builder("jobs", "job").id(ids.get(i)).build());
		Jobs jobs = new Jobs();
		try (FaultyRedisProxy proxy = ReviewFixtures.startProxy()) {
			QueueContexts.runner(prefix, proxy)
				.withBean(Jobs.class, () -> jobs)
				.withPropertyValues(LONG_LEASE, "delay-queue.topics.jobs.concurrency=2",
						"delay-queue.producer.send-timeout=300ms", "delay-queue.broker.max-sleep=200ms")
				.run((context) -> {
					await().atMost(WAIT).until(() -> jobs.handled.size() >= 4);
					for (int i = 0; i < 3; i++) {
						FaultyRedisProxy.Fault held = holdNextClaim(proxy, prefix, "jobs", Duration.ofMillis(800));
						assertThat(held.awaitFired(WAIT)).isTrue();
					}
					await().atMost(WAIT).until(() -> jobs.handled.size() == ids.size());
					assertThat(jobs.handled.keySet()).containsExactlyInAnyOrderElementsOf(ids);
					assertThat(jobs.handled).as("deliveries of each message")
						.allSatisfy((id, count) -> assertThat(count).as(id).hasValue(1));
					assertThat(jobs.overlaps).hasValue(0);
				});
		}
		assertNothingInFlightOrDead(prefix, "jobs");
	}

	/**
	 * A batch listener of a topic with priorities and a one-second lookahead: claimed
	 * messages wait in a batch or are held until due when the stop comes with a claim's
	 * reply held back. Everything goes back at once, and the next application delivers
	 * each message, none before it is due.
	 */
	@Test
	void aStopOfABatchListenerWithPrioritiesAndLookaheadWhileAClaimsReplyIsHeldLeavesNothingInFlight() {
		String prefix = QueueContexts.uniquePrefix();
		List<String> ids = ReviewFixtures.ids("p-", 60);
		send(prefix, "prio", ids,
				(i) -> DelayMessage.builder("prio", "p")
					.id(ids.get(i))
					.priority(i % 10)
					.delay(Duration.ofMillis(100L * (i % 20)))
					.build());
		Batches first = new Batches();
		try (FaultyRedisProxy proxy = ReviewFixtures.startProxy()) {
			QueueContexts.runner(prefix, proxy)
				.withBean(Batches.class, () -> first)
				.withPropertyValues(LONG_LEASE, "delay-queue.topics.prio.concurrency=2",
						"delay-queue.topics.prio.max-batch-size=5", "delay-queue.topics.prio.batch-timeout=200ms",
						"delay-queue.broker.lookahead=1s", "delay-queue.listener.shutdown-timeout=1s",
						"delay-queue.broker.max-sleep=200ms")
				.run((context) -> {
					await().atMost(WAIT).until(() -> first.handled.size() >= 5);
					// Redis has the hand-back's script, whatever another test flushed
					// (see
					// messagesHeldUntilDueGoBackAtTheStopWhenRedisLostItsScriptsAndTheConnectionClosesFirst).
					context.getBean(RedisMessageStore.class)
						.topic("prio")
						.release(List.of("none"), List.of("none"))
						.join();
					FaultyRedisProxy.Fault held = holdNextClaim(proxy, prefix, "prio", Duration.ofSeconds(3));
					assertThat(held.awaitFired(WAIT)).isTrue();
					long started = System.nanoTime();
					context.close();
					assertThat(Duration.ofNanos(System.nanoTime() - started)).as("stop with a shutdown timeout of 1s")
						.isLessThan(Duration.ofMillis(2500));
				});
		}
		assertNothingInFlightOrDead(prefix, "prio");
		assertThat(first.early).as("deliveries before their due time").hasValue(0);
		Batches next = new Batches();
		QueueContexts.runner(prefix)
			.withBean(Batches.class, () -> next)
			.withPropertyValues("delay-queue.topics.prio.max-batch-size=5", "delay-queue.broker.lookahead=1s")
			.run((context) -> await().atMost(WAIT).untilAsserted(() -> {
				Set<String> all = ConcurrentHashMap.newKeySet();
				all.addAll(first.handled.keySet());
				all.addAll(next.handled.keySet());
				assertThat(all).containsExactlyInAnyOrderElementsOf(ids);
			}));
		assertThat(next.early).as("deliveries before their due time").hasValue(0);
	}

	/**
	 * At the stop, the messages held until their due time (and those claimed and waiting
	 * for a handler, and the unfinished ones) are handed back. When Redis lost its
	 * scripts (a restart, a failover, {@code SCRIPT FLUSH}) and the reply comes after the
	 * connection closed (here a reply held for 3 s, longer than the 500 ms shutdown
	 * timeout), they still go back: the hand-back is sent in full. Found by this review:
	 * it was sent by its digest, the {@code NOSCRIPT} came too late to send the script,
	 * and the messages stayed in flight until their lease expired, an attempt lost.
	 */
	@Test
	void messagesHeldUntilDueGoBackAtTheStopWhenRedisLostItsScriptsAndTheConnectionClosesFirst() {
		assertHeldMessagesGoBackAtTheStop(true);
	}

	/**
	 * The same stop with Redis holding its scripts: the held messages go back at once
	 * although the replies are held past the shutdown timeout.
	 */
	@Test
	void messagesHeldUntilDueGoBackAtTheStopWhileRepliesAreHeldPastTheShutdownTimeout() {
		assertHeldMessagesGoBackAtTheStop(false);
	}

	private static void assertHeldMessagesGoBackAtTheStop(boolean flushScripts) {
		String prefix = QueueContexts.uniquePrefix();
		List<String> ids = ReviewFixtures.ids("e-", 5);
		send(prefix, "early", ids,
				(i) -> DelayMessage.builder("early", "e").id(ids.get(i)).delay(Duration.ofSeconds(20)).build());
		try (FaultyRedisProxy proxy = ReviewFixtures.startProxy()) {
			QueueContexts.runner(prefix, proxy)
				.withUserConfiguration(Early.class)
				.withPropertyValues(LONG_LEASE, "delay-queue.broker.lookahead=30s",
						"delay-queue.listener.shutdown-timeout=500ms", "delay-queue.broker.max-sleep=200ms")
				.run((context) -> {
					RedisMessageStore store = context.getBean(RedisMessageStore.class);
					await().atMost(WAIT).until(() -> store.stats("early").inFlight() == ids.size());
					if (flushScripts) {
						context.getBean(StringRedisTemplate.class).execute((RedisCallback<Object>) (connection) -> {
							connection.scriptingCommands().scriptFlush();
							return null;
						});
					}
					else {
						// Redis has the hand-back's script, whatever another test
						// flushed.
						store.topic("early").release(List.of("none"), List.of("none")).join();
					}
					FaultyRedisProxy.Fault held = proxy.delayNextReplyTo(FaultyRedisProxy.named("EVALSHA", "EVAL"),
							Duration.ofSeconds(3));
					context.close();
					assertThat(held.hasFired()).isTrue();
				});
		}
		assertNothingInFlightOrDead(prefix, "early");
	}

	/**
	 * The same for the acknowledgement of a message handled just before the stop: the
	 * stop sends again in full the acknowledgements still on their way by digest. Found
	 * by this review: the {@code NOSCRIPT} came after the connection closed, the lease
	 * expired on the message's last attempt (max attempts 1 here) and a message its
	 * listener handled was dead-lettered.
	 */
	@Test
	void aMessageHandledJustBeforeTheStopIsNotDeadLetteredWhenRedisLostItsScriptsAndTheConnectionClosesFirst() {
		String prefix = QueueContexts.uniquePrefix();
		send(prefix, "acked", List.of("a-1"), (i) -> DelayMessage.builder("acked", "a").id("a-1").build());
		Gate gate = new Gate();
		String[] lastAttempt = { "delay-queue.listener.max-attempts=1", "delay-queue.listener.visibility-timeout=3s",
				"delay-queue.listener.shutdown-timeout=500ms", "delay-queue.broker.max-sleep=200ms" };
		try (FaultyRedisProxy proxy = ReviewFixtures.startProxy()) {
			QueueContexts.runner(prefix, proxy)
				.withBean(Gate.class, () -> gate)
				.withPropertyValues(lastAttempt)
				.run((context) -> {
					await().atMost(WAIT).until(() -> gate.started.get() == 1);
					context.getBean(StringRedisTemplate.class).execute((RedisCallback<Object>) (connection) -> {
						connection.scriptingCommands().scriptFlush();
						return null;
					});
					FaultyRedisProxy.Fault held = proxy.delayNextReplyTo(FaultyRedisProxy.named("EVALSHA", "EVAL"),
							Duration.ofSeconds(3));
					gate.open = true;
					await().atMost(WAIT).until(() -> gate.handled.get() == 1);
					context.close();
					assertThat(held.hasFired()).isTrue();
				});
		}
		Gate next = new Gate();
		next.open = true;
		QueueContexts.runner(prefix).withBean(Gate.class, () -> next).withPropertyValues(lastAttempt).run((context) -> {
			RedisMessageStore store = context.getBean(RedisMessageStore.class);
			await().atMost(WAIT).untilAsserted(() -> {
				TopicStats stats = store.stats("acked");
				assertThat(stats.inFlight() + stats.ready() + stats.scheduled()).as("pending").isZero();
			});
			assertThat(store.stats("acked").dead()).as("dead letters of a handled message").isZero();
		});
	}

	/**
	 * A rate-limited topic (4 a second) stopped while a claim's reply is held: the stop
	 * ends within its timeout, nothing stays in flight, and the next application delivers
	 * the rest.
	 */
	@Test
	void aStopOfARateLimitedTopicWhileAClaimsReplyIsHeldLeavesNothingInFlight() {
		String prefix = QueueContexts.uniquePrefix();
		List<String> ids = ReviewFixtures.ids("r-", 20);
		send(prefix, "limited", ids, (i) -> DelayMessage.builder("limited", "r").id(ids.get(i)).build());
		Limited first = new Limited();
		try (FaultyRedisProxy proxy = ReviewFixtures.startProxy()) {
			QueueContexts.runner(prefix, proxy)
				.withBean(Limited.class, () -> first)
				.withPropertyValues(LONG_LEASE, "delay-queue.topics.limited.concurrency=2",
						"delay-queue.topics.limited.rate-limit.limit=4",
						"delay-queue.topics.limited.rate-limit.period=1s", "delay-queue.listener.shutdown-timeout=1s",
						"delay-queue.broker.max-sleep=200ms")
				.run((context) -> {
					await().atMost(WAIT).until(() -> first.handled.size() >= 5);
					FaultyRedisProxy.Fault held = holdNextClaim(proxy, prefix, "limited", Duration.ofSeconds(3));
					assertThat(held.awaitFired(WAIT)).isTrue();
					long started = System.nanoTime();
					context.close();
					assertThat(Duration.ofNanos(System.nanoTime() - started)).as("stop with a shutdown timeout of 1s")
						.isLessThan(Duration.ofMillis(2500));
				});
		}
		assertNothingInFlightOrDead(prefix, "limited");
		Limited next = new Limited();
		QueueContexts.runner(prefix)
			.withBean(Limited.class, () -> next)
			.withPropertyValues("delay-queue.topics.limited.rate-limit.limit=20",
					"delay-queue.topics.limited.rate-limit.period=1s")
			.run((context) -> await().atMost(WAIT).untilAsserted(() -> {
				Set<String> all = ConcurrentHashMap.newKeySet();
				all.addAll(first.handled.keySet());
				all.addAll(next.handled.keySet());
				assertThat(all).containsExactlyInAnyOrderElementsOf(ids);
			}));
	}

	/**
	 * Holds the reply to the next claim of a topic (it names the consumer's claim
	 * record).
	 */
	private static FaultyRedisProxy.Fault holdNextClaim(FaultyRedisProxy proxy, String prefix, String topic,
			Duration delay) {
		return proxy.delayNextReplyToCommand(
				FaultyRedisProxy.withArgumentContaining("EVALSHA", prefix + ":{" + topic + "}:c:"), delay);
	}

	private static void send(String prefix, String topic, List<String> ids, IntFunction<DelayMessage> message) {
		List<DelayMessage> messages = new ArrayList<>();
		for (int i = 0; i < ids.size(); i++) {
			messages.add(message.apply(i));
		}
		QueueContexts.runner(prefix).run((context) -> context.getBean(DelayQueueTemplate.class).sendAll(messages));
	}

	/**
	 * Well within the 30 s lease: what the stop left in flight would still be there.
	 */
	private static void assertNothingInFlightOrDead(String prefix, String topic) {
		QueueContexts.runner(prefix).run((context) -> {
			RedisMessageStore store = context.getBean(RedisMessageStore.class);
			await().atMost(Duration.ofSeconds(5))
				.untilAsserted(() -> assertThat(store.stats(topic).inFlight()).as("in flight after the stop").isZero());
			TopicStats stats = store.stats(topic);
			assertThat(stats.dead()).as("dead letters").isZero();
		});
	}

	private static void assertTheRestIsDeliveredOnce(String prefix, Map<String, AtomicInteger> before,
			List<String> ids) {
		Jobs next = new Jobs();
		QueueContexts.runner(prefix).withBean(Jobs.class, () -> next).run((context) -> {
			await().atMost(WAIT).untilAsserted(() -> {
				Set<String> all = ConcurrentHashMap.newKeySet();
				all.addAll(before.keySet());
				all.addAll(next.handled.keySet());
				assertThat(all).containsExactlyInAnyOrderElementsOf(ids);
			});
		});
		assertThat(before).allSatisfy((id, count) -> assertThat(count).as(id).hasValue(1));
		assertThat(next.handled).allSatisfy((id, count) -> assertThat(count).as(id).hasValue(1));
	}

	@Configuration(proxyBeanMethods = false)
	static class Jobs {

		final Map<String, AtomicInteger> handled = new ConcurrentHashMap<>();

		final Set<String> inHand = ConcurrentHashMap.newKeySet();

		final AtomicInteger overlaps = new AtomicInteger();

		@DelayListener(topic = "jobs")
		void on(Delivery<String> delivery) throws InterruptedException {
			if (!this.inHand.add(delivery.id())) {
				this.overlaps.incrementAndGet();
			}
			try {
				Thread.sleep(40);
				this.handled.computeIfAbsent(delivery.id(), (id) -> new AtomicInteger()).incrementAndGet();
			}
			finally {
				this.inHand.remove(delivery.id());
			}
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class Batches {

		final Map<String, AtomicInteger> handled = new ConcurrentHashMap<>();

		final AtomicInteger early = new AtomicInteger();

		@DelayListener(topic = "prio")
		void on(List<Delivery<String>> batch) throws InterruptedException {
			Thread.sleep(40);
			for (Delivery<String> delivery : batch) {
				// The test Redis runs on this machine: its clock is this JVM's.
				if (System.currentTimeMillis() < delivery.dueAt().toEpochMilli()) {
					this.early.incrementAndGet();
				}
				this.handled.computeIfAbsent(delivery.id(), (id) -> new AtomicInteger()).incrementAndGet();
			}
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class Gate {

		final AtomicInteger started = new AtomicInteger();

		final AtomicInteger handled = new AtomicInteger();

		volatile boolean open;

		@DelayListener(topic = "acked")
		void on(String payload) {
			this.started.incrementAndGet();
			await().atMost(WAIT).until(() -> this.open);
			this.handled.incrementAndGet();
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class Early {

		@DelayListener(topic = "early")
		void on(String payload) {
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class Limited {

		final Map<String, AtomicInteger> handled = new ConcurrentHashMap<>();

		@DelayListener(topic = "limited")
		void on(Delivery<String> delivery) {
			this.handled.computeIfAbsent(delivery.id(), (id) -> new AtomicInteger()).incrementAndGet();
		}

	}

}

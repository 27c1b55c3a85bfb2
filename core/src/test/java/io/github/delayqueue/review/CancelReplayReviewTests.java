package io.github.delayqueue.review;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.delayqueue.producer.DelayMessage;
import io.github.delayqueue.producer.DelayQueueTemplate;
import io.github.delayqueue.store.MessageSnapshot;
import io.github.delayqueue.store.NewMessage;
import io.github.delayqueue.store.TopicPartitions;
import io.github.delayqueue.store.redis.RedisMessageStore;
import io.github.delayqueue.store.redis.ScriptClock;
import io.github.delayqueue.store.redis.TopicKeys;
import io.github.delayqueue.test.redis.FaultyRedisProxy;
import io.github.delayqueue.test.redis.TestRedis;
import io.github.delayqueue.testsupport.Interruptibly;
import io.github.delayqueue.testsupport.NoResourceTransactionManager;
import io.github.delayqueue.testsupport.OnOneServerVersion;
import io.github.delayqueue.testsupport.PartitionApps;
import io.github.delayqueue.testsupport.TestStore;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.script.DefaultRedisScript;
import org.springframework.transaction.support.TransactionTemplate;

import static io.github.delayqueue.testsupport.PartitionApps.TOPIC;
import static io.github.delayqueue.testsupport.PartitionApps.idIn;
import static io.github.delayqueue.testsupport.PartitionApps.message;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * Adversarial review of idempotent cancels (cancel.lua's request token and the {@code kc}
 * ZSET) and of four send calls of a partition on their way at once (SendCoalescer).
 */
@OnOneServerVersion
class CancelReplayReviewTests {

	private static final Duration TIMEOUT = Duration.ofSeconds(5);

	private static final Duration WAIT = Duration.ofSeconds(10);

	private static final Duration LATER = Duration.ofHours(1);

	/** Matches the cancel script's calls: the only ones naming the kc key. */
	private static final java.util.function.Predicate<List<String>> CANCEL_CALL = FaultyRedisProxy
		.withArgumentContaining("EVALSHA", ":kc");

	// ---- 1. A cancel sent again after its reply was lost
	// -------------------------------

	/**
	 * App A cancels m through a proxy that drops the reply; while Lettuce reconnects (the
	 * proxy held), app B sends m again and another message n: A's cancel, run again,
	 * reports true and leaves B's m and n alone.
	 */
	@Test
	void aCancelSentAgainReportsTrueAndLeavesAMessageSentAgainMeanwhileByAnotherApplication() {
		for (int partitions : new int[] { 1, 3 }) {
			TestRedis redis = TestRedis.shared();
			try (PartitionApps apps = new PartitionApps();
					FaultyRedisProxy proxy = FaultyRedisProxy.start(redis.host(), redis.port())) {
				RedisMessageStore a = apps.storeVia(proxy, partitions, TIMEOUT);
				RedisMessageStore b = apps.store(partitions, TIMEOUT);
				for (int p = 0; p < partitions; p++) {
					String m = idIn(p, partitions, "m-");
					String n = idIn(p, partitions, "n-" + m + "-");
					b.send(TOPIC, List.of(message(m, LATER), message(n, LATER)));
					a.cancel(TOPIC, "warm-up"); // loads the script
					assertThat(replayed(proxy, a, m, () -> b.send(TOPIC, List.of(message(m, LATER)))))
						.as("what the cancel sent twice returned, %d partitions", partitions)
						.isTrue();
					assertThat(b.inspect(TOPIC, m, 10)).as("%s sent again by B", m).isNotNull();
					assertThat(b.inspect(TOPIC, n, 10)).as("%s", n).isNotNull();
					String partition = b.partitions().nameFor(TOPIC, m);
					assertThat(apps.redis().opsForZSet().size(b.keys(partition).cancels())).isOne();
					assertThat(apps.redis().getExpire(b.keys(partition).cancels())).isBetween(1L, 60L);
					apps.redis().delete(b.keys(partition).cancels());
				}
			}
		}
	}

	/**
	 * As above, with the scripts flushed while the reply is lost: the cancel sent again
	 * finds no script, the store sends it in full with the same token.
	 */
	@Test
	void aCancelSentAgainAfterScriptFlushKeepsItsToken() {
		TestRedis redis = TestRedis.shared();
		try (PartitionApps apps = new PartitionApps();
				FaultyRedisProxy proxy = FaultyRedisProxy.start(redis.host(), redis.port())) {
			RedisMessageStore a = apps.storeVia(proxy, 1, TIMEOUT);
			RedisMessageStore b = apps.store(1, TIMEOUT);
			b.send(TOPIC, List.of(message("m", LATER)));
			a.cancel(TOPIC, "warm-up");
			boolean cancelled = replayed(proxy, a, "m", () -> {
				apps.redis().execute((RedisCallback<Void>) (connection) -> {
					connection.scriptingCommands().scriptFlush();
					return null;
				});
				b.send(TOPIC, List.of(message("m", LATER)));
			});
			assertThat(cancelled).isTrue();
			assertThat(b.inspect(TOPIC, "m", 10)).as("m sent again by B").isNotNull();
			assertThat(proxy.forwardedCommands()).as("the script sent in full").contains("EVAL");
		}
	}

	/**
	 * Runs A's cancel of id with the reply to its first run dropped and the proxy held
	 * while {@code meanwhile} runs, so that it most likely runs between the two runs.
	 */
	private static boolean replayed(FaultyRedisProxy proxy, RedisMessageStore a, String id, Runnable meanwhile) {
		FaultyRedisProxy.Fault fault = proxy.dropNextReplyToCommand(CANCEL_CALL);
		CompletableFuture<Boolean> cancel = CompletableFuture.supplyAsync(() -> a.cancel(TOPIC, id));
		assertThat(fault.awaitFired(WAIT)).isTrue();
		proxy.pause();
		try {
			meanwhile.run();
		}
		finally {
			proxy.resume();
		}
		return cancel.join();
	}

	// ---- 2. Refused by a partition's count, then run again ----------------------------

	/**
	 * Partition 2's marker is left behind by a change that never took effect: the cancel
	 * is refused, the store settles the count and sends it again, and the reply to that
	 * run is lost too. It reports true, once, with one token kept.
	 */
	@Test
	void aCancelRefusedByAPartitionThenRunTwiceReportsTrueWithOneToken() {
		TestRedis redis = TestRedis.shared();
		try (PartitionApps apps = new PartitionApps();
				FaultyRedisProxy proxy = FaultyRedisProxy.start(redis.host(), redis.port())) {
			RedisMessageStore a = apps.storeVia(proxy, 3, TIMEOUT);
			a.agreePartitions(TOPIC);
			String m = idIn(2, 3, "m-");
			a.send(TOPIC, List.of(message(m, LATER)));
			apps.redis().opsForValue().set(apps.markerOf(a, 2, 3), "1:a0b1c2d3");
			AtomicInteger cancels = new AtomicInteger();
			List<String> tokens = Collections.synchronizedList(new ArrayList<>());
			// The first call is refused; the reply to the second (after the settle) is
			// lost.
			FaultyRedisProxy.Fault fault = proxy.dropNextReplyToCommand((command) -> {
				if (!CANCEL_CALL.test(command)) {
					return false;
				}
				tokens.add(command.get(command.size() - 1));
				return cancels.incrementAndGet() == 2;
			});
			assertThat(a.cancel(TOPIC, m)).isTrue();
			assertThat(fault.hasFired()).isTrue();
			assertThat(a.inspect(TOPIC, m, 10)).isNull();
			String partition = a.partitions().nameFor(TOPIC, m);
			assertThat(apps.redis().opsForZSet().size(a.keys(partition).cancels())).isOne();
			assertThat(tokens).as("tokens of the runs of the one cancel").hasSize(2);
			assertThat(Set.copyOf(tokens)).hasSize(1);
		}
	}

	// ---- 3. Dead-letter queue topic
	// ----------------------------------------------------

	@Test
	void aCancelOfADeadLetterLeavesItDead() {
		try (PartitionApps apps = new PartitionApps()) {
			RedisMessageStore store = apps.store(3, TIMEOUT);
			store.agreePartitions(TOPIC);
			String id = idIn(1, 3, "d-");
			PartitionApps.deadLetter(store, id);
			String queue = TOPIC + TopicPartitions.DEAD_LETTERS;
			Object outcome;
			try {
				outcome = store.cancel(queue, id);
			}
			catch (RuntimeException ex) {
				outcome = ex;
			}
			System.out.println("cancel on " + queue + ": " + outcome);
			assertThat(outcome).as("cancel of a dead letter").isNotEqualTo(Boolean.TRUE);
			assertThat(store.inspect(TOPIC, id, 10)).as("the dead letter").isNotNull();
		}
	}

	/**
	 * A copy of a dead letter in the topic's dead-letter queue (3 partitions), cancelled
	 * with the reply lost: true, the copy gone, the queue's own kc holds the token.
	 */
	@Test
	void aCancelInADeadLetterQueueSentAgainReportsTrue() {
		TestRedis redis = TestRedis.shared();
		try (PartitionApps apps = new PartitionApps();
				FaultyRedisProxy proxy = FaultyRedisProxy.start(redis.host(), redis.port())) {
			RedisMessageStore store = apps.storeVia(proxy, 3, TIMEOUT);
			store.agreePartitions(TOPIC);
			store.watchDeadLetters(TOPIC);
			String queue = TopicPartitions.deadLettersOf(TOPIC);
			store.cancel(queue, "warm-up");
			for (int p = 0; p < 3; p++) {
				String id = idIn(p, 3, "q-");
				String partition = PartitionApps.deadLetter(store, id);
				assertThat(store.inspect(queue, id, 10)).as("the copy of %s in the queue", id).isNotNull();
				FaultyRedisProxy.Fault fault = proxy.dropNextReplyToCommand(CANCEL_CALL);
				assertThat(store.cancel(queue, id)).as("cancel of the copy of %s", id).isTrue();
				assertThat(fault.hasFired()).isTrue();
				assertThat(store.inspect(queue, id, 10)).isNull();
				assertThat(store.inspect(TOPIC, id, 10)).as("the dead letter itself").isNotNull();
				String queuePartition = store.partitions().nameFor(queue, id);
				assertThat(apps.redis().opsForZSet().size(store.keys(queuePartition).cancels())).isOne();
				assertThat(apps.redis().hasKey(store.keys(partition).cancels())).isFalse();
			}
		}
	}

	// ---- 4. kc of the wrong type
	// -------------------------------------------------------

	@Test
	void aCancelsKeyOfTheWrongTypeFailsEveryCancelBeforeWritingAndIsMovedAsideByTheRepair() {
		try (TestStore fixture = TestStore.create()) {
			RedisMessageStore store = fixture.store();
			StringRedisTemplate redis = fixture.redis();
			TopicKeys keys = store.keys("jobs");
			store.send("jobs", List.of(NewMessage.afterDelay("m", LATER, body("m"))));
			redis.opsForValue().set(keys.cancels(), "not a zset");
			RuntimeException failure = null;
			for (String id : List.of("m", "absent")) {
				Throwable thrown = catchThrowable(() -> store.cancel("jobs", id));
				assertThat(thrown).as("cancel of %s", id).isInstanceOf(RuntimeException.class);
				failure = (RuntimeException) thrown;
			}
			assertThat(store.inspect("jobs", "m", 10)).as("m, after cancels that failed").isNotNull();
			assertThat(redis.opsForZSet().score(keys.scheduled(), "m")).isNotNull();
			List<String> moved = store.topic("jobs").repairAfter(failure);
			assertThat(moved).anyMatch((key) -> key.startsWith(keys.cancels() + " "));
			assertThat(store.cancel("jobs", "m")).isTrue();
			assertThat(redis.type(keys.cancels()).code()).isEqualTo("zset");
		}
	}

	// ---- 5. UnansweredSends
	// ------------------------------------------------------------

	@Test
	void aCancelRightAfterSendAsyncWaitsForItAndCancelsIt() {
		try (TestStore fixture = TestStore.builder().behindProxy().sendTimeout(TIMEOUT).build()) {
			RedisMessageStore store = fixture.store();
			store.agreePartitions("jobs");
			store.cancel("jobs", "warm-up");
			for (int i = 0; i < 5; i++) {
				String id = "m" + i;
				fixture.proxy()
					.delayNextReplyToCommand(FaultyRedisProxy.withArgumentContaining("EVALSHA", "body of " + id),
							Duration.ofMillis(200));
				CompletableFuture<?> sent = store
					.sendAsync(Map.of("jobs", List.of(NewMessage.afterDelay(id, LATER, body(id)))));
				assertThat(store.cancel("jobs", id)).as("cancel of %s", id).isTrue();
				assertThat(sent).isCompleted();
				assertThat(store.inspect("jobs", id, 10)).isNull();
			}
		}
	}

	/**
	 * Inside a transaction, a replacing send of m is held until the commit; the cancel
	 * drops it and cancels the m stored before, its reply lost: true, and nothing of m is
	 * left after the commit.
	 */
	@Test
	void aCancelInsideATransactionWithItsReplyLostReportsTrueAndNothingIsLeftAfterTheCommit() {
		try (TestStore fixture = TestStore.builder().behindProxy().sendTimeout(TIMEOUT).build()) {
			DelayQueueTemplate template = fixture.template();
			template.send(DelayMessage.builder("jobs", "before").id("m").delay(LATER).build());
			template.cancel("jobs", "warm-up");
			Boolean[] cancelled = new Boolean[1];
			new TransactionTemplate(new NoResourceTransactionManager()).executeWithoutResult((status) -> {
				template.send(DelayMessage.builder("jobs", "held").id("m").delay(LATER).replaceIfPending().build());
				FaultyRedisProxy.Fault fault = fixture.proxy().dropNextReplyToCommand(CANCEL_CALL);
				cancelled[0] = template.cancel("jobs", "m");
				assertThat(fault.hasFired()).isTrue();
				assertThat(fixture.store().inspect("jobs", "m", 10)).as("m inside the transaction").isNull();
			});
			assertThat(cancelled[0]).isTrue();
			assertThat(fixture.store().inspect("jobs", "m", 10)).as("m after the commit").isNull();
		}
	}

	// ---- 6. Many cancels, the clock moved
	// ----------------------------------------------

	/**
	 * 10,000 cancels within a minute keep 10,000 tokens; a minute later (offset clock)
	 * the next cancel trims them, and the key expires with the last.
	 */
	@Test
	void tenThousandCancelsKeepTenThousandTokensForAMinuteOnly() {
		try (TestStore fixture = TestStore.create()) {
			StringRedisTemplate redis = fixture.redis();
			String clock = fixture.prefix() + ":clock";
			RedisMessageStore store = new RedisMessageStore(fixture.connectionFactory(), fixture.prefix(), TIMEOUT,
					ScriptClock.offsetBy(clock));
			TopicKeys keys = store.keys("many");
			int count = 10_000;
			for (int from = 0; from < count; from += 500) {
				List<NewMessage> batch = new ArrayList<>();
				for (int i = from; i < from + 500; i++) {
					batch.add(NewMessage.afterDelay("m" + i, LATER, body("m" + i)));
				}
				store.send("many", batch);
			}
			long started = System.nanoTime();
			List<CompletableFuture<Boolean>> cancels = new ArrayList<>();
			for (int t = 0; t < 4; t++) {
				int thread = t;
				cancels.add(CompletableFuture.supplyAsync(() -> {
					boolean all = true;
					for (int i = thread; i < count; i += 4) {
						all &= store.cancel("many", "m" + i);
					}
					return all;
				}));
			}
			assertThat(cancels).allSatisfy((all) -> assertThat(all.join()).isTrue());
			long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
			Long size = redis.opsForZSet().size(keys.cancels());
			Long memory = redis.execute(
					new DefaultRedisScript<>("return redis.call('MEMORY', 'USAGE', KEYS[1])", Long.class),
					List.of(keys.cancels()));
			System.out.println("10,000 cancels in " + millis + " ms; kc holds " + size + " tokens in " + memory
					+ " bytes, expires in " + redis.getExpire(keys.cancels()) + " s");
			assertThat(size).isEqualTo(count);
			assertThat(redis.getExpire(keys.cancels())).isBetween(1L, 60L);

			store.send("many", List.of(NewMessage.afterDelay("last", LATER, body("last"))));
			redis.opsForValue().set(clock, String.valueOf(Duration.ofSeconds(61).toNanos() / 1000));
			assertThat(store.cancel("many", "last")).isTrue();
			assertThat(redis.opsForZSet().size(keys.cancels())).as("after a minute").isOne();

			// Hours forward, then back to the server's clock: under 100 tokens none is
			// forgotten by the clock, so all stay until the key expires, harmless.
			store.send("many", List.of(NewMessage.afterDelay("later", LATER, body("later"))));
			redis.opsForValue().set(clock, String.valueOf(Duration.ofHours(5).toNanos() / 1000));
			assertThat(store.cancel("many", "later")).isTrue();
			redis.delete(clock);
			store.send("many", List.of(NewMessage.afterDelay("back", LATER, body("back"))));
			assertThat(store.cancel("many", "back")).isTrue();
			assertThat(redis.opsForZSet().size(keys.cancels())).isEqualTo(3);
			assertThat(redis.getExpire(keys.cancels())).isBetween(1L, 60L);
		}
	}

	/**
	 * The clock jumps forward by an hour between a cancel's run and its run again (the
	 * reply lost), and another cancel comes meanwhile: the token is kept (fewer than 100
	 * tokens are never forgotten by the clock), so the run again reports the cancel and
	 * leaves the message B sent again under the id.
	 */
	@Test
	void aClockJumpBetweenTheTwoRunsOfACancelDoesNotLetTheSecondCancelAMessageSentAgain() {
		TestRedis redis = TestRedis.shared();
		try (TestStore fixture = TestStore.create();
				FaultyRedisProxy proxy = FaultyRedisProxy.start(redis.host(), redis.port())) {
			String clock = fixture.prefix() + ":clock";
			LettuceConnectionFactory viaProxy = TestStore.connect(proxy.host(), proxy.port());
			RedisMessageStore a = new RedisMessageStore(viaProxy, fixture.prefix(), TIMEOUT,
					ScriptClock.offsetBy(clock));
			RedisMessageStore b = new RedisMessageStore(fixture.connectionFactory(), fixture.prefix(), TIMEOUT,
					ScriptClock.offsetBy(clock));
			try {
				b.send("jobs", List.of(NewMessage.afterDelay("m", LATER, body("m")),
						NewMessage.afterDelay("other", LATER, body("other"))));
				a.cancel("jobs", "warm-up");
				FaultyRedisProxy.Fault fault = proxy.dropNextReplyToCommand(CANCEL_CALL);
				CompletableFuture<Boolean> cancel = CompletableFuture.supplyAsync(() -> a.cancel("jobs", "m"));
				assertThat(fault.awaitFired(WAIT)).isTrue();
				proxy.pause();
				try {
					fixture.redis().opsForValue().set(clock, String.valueOf(LATER.toNanos() / 1000));
					assertThat(b.cancel("jobs", "other")).isTrue();
					b.send("jobs", List.of(NewMessage.afterDelay("m", LATER, body("m"))));
				}
				finally {
					proxy.resume();
				}
				assertThat(cancel.join()).isTrue();
				assertThat(b.inspect("jobs", "m", 10)).as("m, sent again by B while A's reply was lost").isNotNull();
			}
			finally {
				a.close();
				b.close();
				viaProxy.destroy();
			}
		}
	}

	// ---- 7. Four calls on their way: bursts of one id
	// ----------------------------------

	@Test
	void burstsOfReplacingSendsThenCallsByIdKeepTheirOrderWithRepliesFiveToTwentyMsAway() throws Exception {
		for (int threads : new int[] { 4, 16 }) {
			List<String> wrong = burstWithJitter(threads, false);
			assertThat(wrong).as("%d threads", threads).isEmpty();
		}
	}

	/**
	 * As above, with the scripts flushed every 40 ms: calls that find no script are sent
	 * again in full behind up to three later calls on their way. A send may fail then
	 * (overtaken by a later send of its id), but every outcome must agree with Redis.
	 */
	@Test
	void burstsOfReplacingSendsThenCallsByIdAgreeWithRedisWhileTheScriptsAreFlushed() throws Exception {
		for (int threads : new int[] { 4, 16 }) {
			List<String> wrong = burstWithJitter(threads, true);
			assertThat(wrong).as("%d threads", threads).isEmpty();
		}
	}

	private static List<String> burstWithJitter(int threads, boolean flush) throws Exception {
		try (TestStore fixture = TestStore.builder().behindProxy().sendTimeout(TIMEOUT).build()) {
			RedisMessageStore store = fixture.store();
			store.agreePartitions("burst");
			AtomicBoolean done = new AtomicBoolean();
			AtomicInteger flushes = new AtomicInteger();
			Thread jitter = new Thread(() -> {
				long lastFlush = System.nanoTime();
				while (!done.get()) {
					fixture.proxy().latency(Duration.ofMillis(ThreadLocalRandom.current().nextInt(5, 21)));
					if (flush && System.nanoTime() - lastFlush > TimeUnit.MILLISECONDS.toNanos(40)) {
						fixture.redis().execute((RedisCallback<Void>) (connection) -> {
							connection.scriptingCommands().scriptFlush();
							return null;
						});
						flushes.incrementAndGet();
						lastFlush = System.nanoTime();
					}
					Interruptibly.sleep(3);
				}
			});
			jitter.start();
			Outcomes outcomes;
			long started = System.nanoTime();
			try {
				outcomes = burst(store, threads, (flush ? 64 : 128) / threads, "t" + threads + (flush ? "f-" : "-"));
			}
			finally {
				done.set(true);
				jitter.join();
			}
			System.out.println(threads + " threads" + (flush ? ", " + flushes + " flushes" : "") + ": "
					+ TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started) + " ms, " + outcomes.failedSends
					+ " sends failed: " + outcomes.failures.stream().distinct().limit(3).toList());
			long resentInFull = fixture.proxy().forwardedCommands().stream().filter("EVAL"::equals).count();
			System.out.println(threads + " threads: " + resentInFull + " calls sent in full (EVAL)");
			if (flush && resentInFull == 0) {
				outcomes.wrong.add("no call found the scripts flushed");
			}
			if (!flush && outcomes.failedSends.get() > 0) {
				outcomes.wrong.add(outcomes.failedSends + " sends failed without a fault");
			}
			return outcomes.wrong;
		}
	}

	private record Outcomes(List<String> wrong, AtomicInteger failedSends, List<String> failures) {
	}

	private static Outcomes burst(RedisMessageStore store, int threads, int ids, String prefix)
			throws InterruptedException {
		Outcomes outcomes = new Outcomes(Collections.synchronizedList(new ArrayList<>()), new AtomicInteger(),
				Collections.synchronizedList(new ArrayList<>()));
		List<String> wrong = outcomes.wrong;
		List<Runnable> checks = Collections.synchronizedList(new ArrayList<>());
		CountDownLatch start = new CountDownLatch(1);
		List<Thread> senders = new ArrayList<>();
		for (int t = 0; t < threads; t++) {
			int thread = t;
			senders.add(new Thread(() -> {
				Interruptibly.await(start);
				for (int i = 0; i < ids; i++) {
					String id = prefix + thread + "-" + i;
					// Each send in order, with whether it stored (null: failed).
					List<CompletableFuture<?>> sends = new ArrayList<>();
					List<String> versions = new ArrayList<>();
					for (String version : List.of("A", "B", "C")) {
						sends.add(store.sendAsync(Map.of("burst", List.of(replacing(id, version)))));
						versions.add(version);
					}
					try {
						switch (i % 3) {
							case 0 -> {
								Boolean cancelled = byId(() -> store.cancel("burst", id));
								List<CompletableFuture<?>> before = List.copyOf(sends);
								checks.add(() -> {
									if (cancelled == null) {
										return;
									}
									if (!cancelled && before.stream().anyMatch(CancelReplayReviewTests::succeeded)) {
										wrong.add(id + ": the cancel after sends that stored found nothing");
									}
									if (store.inspect("burst", id, 10) != null) {
										wrong.add(id + ": stored after the cancel that followed its sends");
									}
								});
							}
							case 1 -> {
								Boolean sentD = byId(() -> {
									store.send("burst", List.of(replacing(id, "D")));
									return true;
								});
								sends.add(store.sendAsync(Map.of("burst", List.of(replacing(id, "E")))));
								versions.add("E");
								Boolean cancelled = byId(() -> store.cancel("burst", id));
								List<CompletableFuture<?>> before = List.copyOf(sends);
								CompletableFuture<?> f = store.sendAsync(Map.of("burst", List.of(replacing(id, "F"))));
								sends.add(f);
								checks.add(() -> {
									if (cancelled != null && !cancelled && (sentD != null
											|| before.stream().anyMatch(CancelReplayReviewTests::succeeded))) {
										wrong.add(id + ": the cancel after sends that stored found nothing");
									}
									if (cancelled != null) {
										expectBody(store, id, succeeded(f) ? "F" : null, wrong);
									}
								});
							}
							default -> {
								List<CompletableFuture<?>> all = List.copyOf(sends);
								checks.add(() -> {
									String last = null;
									for (int k = 0; k < all.size(); k++) {
										if (succeeded(all.get(k))) {
											last = versions.get(k);
										}
									}
									expectBody(store, id, last, wrong);
								});
							}
						}
					}
					catch (RuntimeException ex) {
						wrong.add(id + ": " + ex);
					}
					for (CompletableFuture<?> sent : sends) {
						try {
							sent.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
						}
						catch (java.util.concurrent.TimeoutException ex) {
							wrong.add(id + ": a send did not complete in " + WAIT);
						}
						catch (Exception ex) {
							outcomes.failedSends.incrementAndGet();
							outcomes.failures.add(String.valueOf(ex.getCause()));
						}
					}
				}
			}, "burst-" + t));
		}
		senders.forEach(Thread::start);
		start.countDown();
		for (Thread sender : senders) {
			sender.join();
		}
		checks.forEach(Runnable::run);
		return outcomes;
	}

	private static boolean succeeded(CompletableFuture<?> future) {
		return future.isDone() && !future.isCompletedExceptionally();
	}

	/** A call by id, or {@code null} if it failed. */
	private static <T> T byId(java.util.function.Supplier<T> call) {
		try {
			return call.get();
		}
		catch (RuntimeException ex) {
			return null;
		}
	}

	private static void expectBody(RedisMessageStore store, String id, String version, List<String> wrong) {
		MessageSnapshot snapshot = store.inspect("burst", id, 100);
		String stored = (snapshot != null) ? new String(snapshot.storedPrefix(), StandardCharsets.UTF_8) : null;
		if ((version == null) ? stored != null : (stored == null || !stored.endsWith("version " + version))) {
			wrong.add(id + ": holds " + stored + ", expected version " + version);
		}
	}

	private static NewMessage replacing(String id, String version) {
		return new NewMessage(id, true, LATER.toMillis(), ("version " + version).getBytes(StandardCharsets.UTF_8), true,
				0, false);
	}

	private static byte[] body(String id) {
		return ("body of " + id).getBytes(StandardCharsets.UTF_8);
	}

}

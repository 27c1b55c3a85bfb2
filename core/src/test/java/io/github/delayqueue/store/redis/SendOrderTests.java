package io.github.delayqueue.store.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

import io.github.delayqueue.store.MessageSnapshot;
import io.github.delayqueue.store.NewMessage;
import io.github.delayqueue.store.Sent;
import io.github.delayqueue.test.redis.FaultyRedisProxy;
import io.github.delayqueue.test.redis.TestRedis;
import io.github.delayqueue.testsupport.OnOneServerVersion;
import io.github.delayqueue.testsupport.PartitionApps;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.core.RedisCallback;

import static io.github.delayqueue.testsupport.PartitionApps.TOPIC;
import static io.github.delayqueue.testsupport.PartitionApps.idIn;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Sends of one id are stored in the order they were made, whatever happens on the way. A
 * send call that stored nothing and is sent again (Redis had lost the script, or a
 * partition refused the count) never overtakes a later send of the same id that was
 * already on its way: the later send is the one stored (before, the first was sent again
 * after it and replaced it), and when the later one stored nothing either, both are sent
 * again, in order. Several of these come from an adversarial review.
 */
@OnOneServerVersion
class SendOrderTests {

	private static final Duration TIMEOUT = Duration.ofSeconds(5);

	/**
	 * Long enough for the second send to run on Redis while the first's reply is held.
	 */
	private static final Duration HELD = Duration.ofMillis(500);

	/**
	 * The first store of a test JVM through a proxy pays for loading the client and the
	 * proxy (seconds on a busy machine, where two test JVMs start together): paid here,
	 * not out of a test's five-second timeout.
	 */
	@BeforeAll
	static void warmUp() {
		TestRedis redis = TestRedis.shared();
		try (PartitionApps apps = new PartitionApps();
				FaultyRedisProxy proxy = FaultyRedisProxy.start(redis.host(), redis.port())) {
			RedisMessageStore sender = apps.storeVia(proxy, 3, Duration.ofSeconds(30));
			sender.agreePartitions(TOPIC);
			sender.send(TOPIC, List.of(PartitionApps.message(idIn(0, 3, "warm-up-"), Duration.ofHours(1))));
		}
	}

	@Test
	void aSendSentAgainAfterRedisLostTheScriptDoesNotReplaceALaterSendOfTheSameId() {
		TestRedis redis = TestRedis.shared();
		try (PartitionApps apps = new PartitionApps();
				FaultyRedisProxy proxy = FaultyRedisProxy.start(redis.host(), redis.port())) {
			RedisMessageStore sender = apps.storeVia(proxy, 3, TIMEOUT);
			String id = idIn(1, 3, "order-");
			sender.send(TOPIC, List.of(PartitionApps.message(idIn(1, 3, "warm-up-"), Duration.ofHours(1))));
			byte[] sendScript = sender.clock()
				.call(ScriptCodecs.Send.SIGNATURE.script(), (key) -> key.name(), List.of(), sender.shardedSignals())
				.script()
				.getScriptAsString()
				.getBytes(StandardCharsets.UTF_8);
			flushScripts(apps);
			FaultyRedisProxy.Fault held = proxy
				.delayNextReplyToCommand(FaultyRedisProxy.withArgumentContaining("EVALSHA", "first"), HELD);

			CompletableFuture<?> first = sender.sendAsync(Map.of(TOPIC, List.of(replacing(id, "first"))));
			assertThat(held.awaitFired(TIMEOUT)).isTrue();
			// Another instance loads the script before the second send runs.
			apps.redis()
				.execute((RedisCallback<String>) (connection) -> connection.scriptingCommands().scriptLoad(sendScript));
			// Not a replacing send: one would wait for the first's outcome.
			CompletableFuture<Map<String, List<Sent>>> second = sender
				.sendAsync(Map.of(TOPIC, List.of(plain(id, "second"))));

			assertThat(second.join().get(TOPIC)).extracting(Sent::id).containsExactly(id);
			assertThat(first).failsWithin(TIMEOUT);
			assertThat(storedBody(sender, id)).endsWith(":second");
		}
	}

	@Test
	void aSendSentAgainAfterAPartitionRefusedItDoesNotReplaceALaterSendOfTheSameId() {
		TestRedis redis = TestRedis.shared();
		try (PartitionApps apps = new PartitionApps();
				FaultyRedisProxy proxy = FaultyRedisProxy.start(redis.host(), redis.port())) {
			RedisMessageStore sender = apps.storeVia(proxy, 3, TIMEOUT);
			sender.agreePartitions(TOPIC);
			String id = idIn(2, 3, "order-");
			sender.send(TOPIC, List.of(PartitionApps.message(idIn(2, 3, "warm-up-"), Duration.ofHours(1))));
			String marker = apps.markerOf(sender, 2, 3);
			String agreed = apps.redis().opsForValue().get(marker);
			// A change that never took effect left its marker behind.
			apps.redis().opsForValue().set(marker, "1:a0b1c2d3");
			FaultyRedisProxy.Fault held = proxy
				.delayNextReplyToCommand(FaultyRedisProxy.withArgumentContaining("EVALSHA", "first"), HELD);

			CompletableFuture<?> first = sender.sendAsync(Map.of(TOPIC, List.of(replacing(id, "first"))));
			assertThat(held.awaitFired(TIMEOUT)).isTrue();
			// The marker is repaired before the second send runs.
			apps.redis().opsForValue().set(marker, agreed);
			// Not a replacing send: one would wait for the first's outcome.
			CompletableFuture<Map<String, List<Sent>>> second = sender
				.sendAsync(Map.of(TOPIC, List.of(plain(id, "second"))));

			assertThat(second.join().get(TOPIC)).extracting(Sent::id).containsExactly(id);
			assertThat(first).failsWithin(TIMEOUT);
			assertThat(storedBody(sender, id)).endsWith(":second");
		}
	}

	@Test
	void twoSendsOfAnIdThatBothFoundTheScriptLostAreBothSentAgainInOrder() {
		TestRedis redis = TestRedis.shared();
		try (PartitionApps apps = new PartitionApps();
				FaultyRedisProxy proxy = FaultyRedisProxy.start(redis.host(), redis.port())) {
			RedisMessageStore sender = apps.storeVia(proxy, 3, TIMEOUT);
			String id = idIn(1, 3, "order-");
			sender.send(TOPIC, List.of(PartitionApps.message(idIn(1, 3, "warm-up-"), Duration.ofHours(1))));
			flushScripts(apps);
			// Both are on their way before the first's NOSCRIPT comes back.
			FaultyRedisProxy.Fault held = proxy
				.delayNextReplyToCommand(FaultyRedisProxy.withArgumentContaining("EVALSHA", "first"), HELD);

			CompletableFuture<Map<String, List<Sent>>> first = sender
				.sendAsync(Map.of(TOPIC, List.of(replacing(id, "first"))));
			assertThat(held.awaitFired(TIMEOUT)).isTrue();
			CompletableFuture<Map<String, List<Sent>>> second = sender
				.sendAsync(Map.of(TOPIC, List.of(replacing(id, "second"))));

			assertThat(first.join().get(TOPIC)).extracting(Sent::id).containsExactly(id);
			assertThat(second.join().get(TOPIC)).extracting(Sent::id).containsExactly(id);
			assertThat(storedBody(sender, id)).endsWith(":second");
		}
	}

	@Test
	void scriptFlushesUnderLoadFromSeveralThreadsLeaveEachIdWithItsLastSuccessfulSend() throws Exception {
		TestRedis redis = TestRedis.shared();
		try (PartitionApps apps = new PartitionApps();
				FaultyRedisProxy proxy = FaultyRedisProxy.start(redis.host(), redis.port())) {
			RedisMessageStore store = apps.storeVia(proxy, 3, TIMEOUT);
			store.agreePartitions(TOPIC);
			proxy.latency(Duration.ofMillis(2));
			AtomicBoolean sending = new AtomicBoolean(true);
			Thread flusher = new Thread(() -> {
				while (sending.get()) {
					flushScripts(apps);
					LockSupport.parkNanos(ThreadLocalRandom.current().nextLong(2_000_000));
				}
			});
			flusher.start();
			int threads = 4;
			int ids = 10;
			int rounds = 40;
			// sent[thread][id][round]
			List<List<List<CompletableFuture<?>>>> sent = new ArrayList<>();
			List<Thread> senders = new ArrayList<>();
			for (int t = 0; t < threads; t++) {
				List<List<CompletableFuture<?>>> ofThread = new ArrayList<>();
				for (int i = 0; i < ids; i++) {
					ofThread.add(new ArrayList<>());
				}
				sent.add(ofThread);
				int thread = t;
				senders.add(new Thread(() -> {
					for (int round = 0; round < rounds; round++) {
						for (int i = 0; i < ids; i++) {
							NewMessage message = replacing("t" + thread + "-" + i, "r" + round);
							ofThread.get(i)
								.add((round % 5 == 4) ? sendNow(store, message)
										: store.sendAsync(Map.of(TOPIC, List.of(message))));
						}
					}
				}));
			}
			senders.forEach(Thread::start);
			for (Thread sender : senders) {
				sender.join();
			}
			sending.set(false);
			flusher.join();
			// A send may fail (a later one of its id went first); none may hang, and each
			// id holds the last of its sends that succeeded.
			List<String> wrong = new ArrayList<>();
			for (int t = 0; t < threads; t++) {
				for (int i = 0; i < ids; i++) {
					int lastStored = -1;
					for (int round = 0; round < rounds; round++) {
						if (stored(sent.get(t).get(i).get(round))) {
							lastStored = round;
						}
					}
					String id = "t" + t + "-" + i;
					if (lastStored >= 0 && !storedBody(store, id).endsWith(":r" + lastStored)) {
						wrong.add(id + " holds " + storedBody(store, id) + ", last stored r" + lastStored);
					}
				}
			}
			assertThat(wrong).isEmpty();
		}
	}

	@Test
	void twoSendsOfAnIdFromAReplysCallbackKeepTheirOrderWhileOtherThreadsSend() throws Exception {
		TestRedis redis = TestRedis.shared();
		try (PartitionApps apps = new PartitionApps();
				FaultyRedisProxy proxy = FaultyRedisProxy.start(redis.host(), redis.port())) {
			RedisMessageStore sender = apps.storeVia(proxy, 3, TIMEOUT);
			sender.agreePartitions(TOPIC);
			sender.send(TOPIC, List.of(PartitionApps.message("warm-up", Duration.ofHours(1))));
			proxy.latency(Duration.ofMillis(1));
			List<Thread> load = new ArrayList<>();
			List<CompletableFuture<?>> loadSent = new ArrayList<>();
			for (int t = 0; t < 4; t++) {
				int thread = t;
				load.add(new Thread(() -> {
					List<CompletableFuture<?>> ofThread = new ArrayList<>();
					for (int i = 0; i < 2000; i++) {
						ofThread.add(sender.sendAsync(Map.of(TOPIC,
								List.of(PartitionApps.message("load-" + thread + "-" + i, Duration.ofHours(1))))));
					}
					synchronized (loadSent) {
						loadSent.addAll(ofThread);
					}
				}));
			}
			load.forEach(Thread::start);
			int ids = 300;
			List<CompletableFuture<?>> pairs = new ArrayList<>();
			for (int i = 0; i < ids; i++) {
				String id = "pair-" + i;
				CompletableFuture<Object> bothSent = new CompletableFuture<>();
				sender.sendAsync(Map.of(TOPIC, List.of(PartitionApps.message("trigger-" + i, Duration.ofHours(1)))))
					.whenComplete((result, failure) -> {
						// On the Redis client's I/O thread, as a user's callback runs.
						CompletableFuture<?> a = sender.sendAsync(Map.of(TOPIC, List.of(replacing(id, "A"))));
						CompletableFuture<?> b = sender.sendAsync(Map.of(TOPIC, List.of(replacing(id, "B"))));
						CompletableFuture.allOf(a, b).whenComplete((both, bothFailure) -> bothSent.complete(null));
					});
				pairs.add(bothSent);
			}
			await().atMost(Duration.ofSeconds(30)).until(() -> pairs.stream().allMatch(CompletableFuture::isDone));
			for (Thread thread : load) {
				thread.join();
			}
			assertThat(CompletableFuture.allOf(loadSent.toArray(CompletableFuture[]::new)))
				.succeedsWithin(Duration.ofSeconds(30));
			List<String> wrong = new ArrayList<>();
			for (int i = 0; i < ids; i++) {
				if (!storedBody(sender, "pair-" + i).endsWith(":B")) {
					wrong.add("pair-" + i + " holds " + storedBody(sender, "pair-" + i));
				}
			}
			assertThat(wrong).isEmpty();
		}
	}

	@Test
	void sendsRefusedWhileTheSettlingTimesOutFailInTimeAndThePartitionStoresSendsAfterwards() {
		TestRedis redis = TestRedis.shared();
		Duration timeout = Duration.ofMillis(800);
		try (PartitionApps apps = new PartitionApps();
				FaultyRedisProxy proxy = FaultyRedisProxy.start(redis.host(), redis.port())) {
			RedisMessageStore sender = apps.storeVia(proxy, 3, timeout);
			sender.agreePartitions(TOPIC);
			sender.send(TOPIC, List.of(PartitionApps.message(idIn(2, 3, "warm-up-"), Duration.ofHours(1))));
			apps.redis().opsForValue().set(apps.markerOf(sender, 2, 3), "1:a0b1c2d3");
			// Reply 1: the send, refused; reply 2: the settling's first read, held past
			// the
			// send timeout.
			AtomicInteger replies = new AtomicInteger();
			proxy.delayNextReplyTo((name) -> name.equals("EVALSHA") && replies.incrementAndGet() == 2,
					Duration.ofMillis(1500));
			List<CompletableFuture<?>> refused = new ArrayList<>();
			for (int i = 0; i < 200; i++) {
				refused.add(sender.sendAsync(Map.of(TOPIC,
						List.of(PartitionApps.message(idIn(2, 3, "refused-" + i + "-"), Duration.ofHours(1))))));
			}
			for (CompletableFuture<?> send : refused) {
				assertThat(send).failsWithin(timeout.plusMillis(400));
			}
			// Once the held reply went by, the partition settles and stores again.
			await().atMost(Duration.ofSeconds(10))
				.until(() -> !sendNow(sender, PartitionApps.message(idIn(2, 3, "probe-"), Duration.ofHours(1)))
					.isCompletedExceptionally());
			List<CompletableFuture<?>> after = new ArrayList<>();
			for (int i = 0; i < 20; i++) {
				after.add(sender.sendAsync(Map.of(TOPIC,
						List.of(PartitionApps.message(idIn(2, 3, "after-" + i + "-"), Duration.ofHours(1))))));
			}
			assertThat(CompletableFuture.allOf(after.toArray(CompletableFuture[]::new)))
				.succeedsWithin(Duration.ofSeconds(5));
		}
	}

	@Test
	void aSendWaitingToBeSentAgainBehindALaterCallFailsAtItsOwnDeadline() {
		TestRedis redis = TestRedis.shared();
		Duration timeout = Duration.ofSeconds(2);
		try (PartitionApps apps = new PartitionApps();
				FaultyRedisProxy proxy = FaultyRedisProxy.start(redis.host(), redis.port())) {
			RedisMessageStore sender = apps.storeVia(proxy, 3, timeout);
			sender.send(TOPIC, List.of(PartitionApps.message(idIn(1, 3, "warm-up-"), Duration.ofHours(1))));
			flushScripts(apps);
			FaultyRedisProxy.Fault held = proxy.delayNextReplyToCommand(
					FaultyRedisProxy.withArgumentContaining("EVALSHA", "first"), Duration.ofMillis(1200));
			proxy.delayNextReplyToCommand(FaultyRedisProxy.withArgumentContaining("EVALSHA", "second"),
					Duration.ofSeconds(6));
			CompletableFuture<Map<String, List<Sent>>> first = sender
				.sendAsync(Map.of(TOPIC, List.of(replacing(idIn(1, 3, "first-"), "first"))));
			assertThat(held.awaitFired(TIMEOUT)).isTrue();
			// A later call, taken half a timeout after the first, whose reply the first's
			// resend waits for, and which Redis does not answer in time.
			await().pollDelay(Duration.ofSeconds(1)).until(() -> true);
			sender.sendAsync(Map.of(TOPIC, List.of(replacing(idIn(1, 3, "second-"), "second"))));

			// Its own deadline is about a second away; before, it failed with the later
			// call, another second later.
			assertThat(first).failsWithin(Duration.ofMillis(1500));
		}
	}

	/** Whether a send succeeded; fails the test if it did not complete in time. */
	private static boolean stored(CompletableFuture<?> send) throws InterruptedException {
		try {
			send.get(TIMEOUT.toMillis() + 1000, TimeUnit.MILLISECONDS);
			return true;
		}
		catch (ExecutionException ex) {
			return false;
		}
		catch (TimeoutException ex) {
			throw new AssertionError("A send did not complete within its timeout", ex);
		}
	}

	private static CompletableFuture<Object> sendNow(RedisMessageStore store, NewMessage message) {
		try {
			return CompletableFuture.completedFuture(store.send(TOPIC, List.of(message)));
		}
		catch (RuntimeException ex) {
			return CompletableFuture.failedFuture(ex);
		}
	}

	private static void flushScripts(PartitionApps apps) {
		apps.redis().execute((RedisCallback<Void>) (connection) -> {
			connection.scriptingCommands().scriptFlush();
			return null;
		});
	}

	private static NewMessage plain(String id, String body) {
		return new NewMessage(id, true, Duration.ofHours(1).toMillis(), body.getBytes(StandardCharsets.UTF_8));
	}

	private static NewMessage replacing(String id, String body) {
		return new NewMessage(id, true, Duration.ofHours(1).toMillis(), body.getBytes(StandardCharsets.UTF_8), true, 0,
				false);
	}

	private static String storedBody(RedisMessageStore store, String id) {
		MessageSnapshot snapshot = store.inspect(TOPIC, id, 100);
		assertThat(snapshot).as("message %s", id).isNotNull();
		return new String(snapshot.storedPrefix(), StandardCharsets.UTF_8);
	}

}

package io.github.delayqueue.producer;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import io.github.delayqueue.store.redis.RedisMessageStore;
import io.github.delayqueue.test.redis.FaultyRedisProxy;
import io.github.delayqueue.test.redis.RedisServerProcess;
import io.github.delayqueue.test.redis.TestRedis;
import io.github.delayqueue.testsupport.TestStore;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationRegistry;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Asynchronous sends when things go wrong: replies lost, scripts flushed, Redis
 * restarted, partitions refusing, confirmed replication, a closed store, and a send
 * chained from another's completion (on the Redis client's I/O thread). From adversarial
 * review 22b.
 */
class AsyncSendFailuresTests {

	private final String prefix = TestStore.uniquePrefix();

	private static DelayMessage message(String topic, String id) {
		return DelayMessage.builder(topic, "payload " + id).id(id).delay(Duration.ofHours(1)).build();
	}

	private static long threads(String namePrefix) {
		return Thread.getAllStackTraces().keySet().stream().filter((t) -> t.getName().startsWith(namePrefix)).count();
	}

	/**
	 * A natural chain: the second send goes to a topic not used before, from the
	 * completion of the first (the Lettuce I/O thread). The partition-count agreement
	 * then blocks the I/O thread on Redis replies that only that thread can read.
	 */
	@Test
	void aSendAsyncChainedFromACompletionToANewTopicDoesNotStallTheConnection() throws Exception {
		try (TestStore fixture = TestStore.builder()
			.prefix(this.prefix)
			.behindProxy()
			.sendTimeout(Duration.ofSeconds(2))
			.build()) {
			FaultyRedisProxy proxy = fixture.proxy();
			DelayQueueTemplate template = fixture.template();
			template.send(message("first", "warm"));
			// so that the continuation is registered before the reply comes
			proxy.latency(Duration.ofMillis(50));
			long start = System.nanoTime();
			AtomicReference<String> thread = new AtomicReference<>();
			CompletableFuture<SendResult> chained = template.sendAsync(message("first", "a-1")).thenCompose((r) -> {
				thread.set(Thread.currentThread().getName());
				return template.sendAsync(message("fresh-topic", "b-1"));
			});
			Throwable failure = null;
			try {
				chained.get(10, TimeUnit.SECONDS);
			}
			catch (ExecutionException ex) {
				failure = ex.getCause();
			}
			long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
			assertThat(failure).as("the chained send").isNull();
			assertThat(millis).as("one round trip or two, not a send timeout").isLessThan(1000);
		}
	}

	/**
	 * With confirmed replication each sendAsync on its way holds a thread of the cached
	 * pool (and a dedicated Redis connection) for the whole send and WAIT.
	 */
	@Test
	void sendAsyncWithConfirmedReplicationDoesNotTakeAThreadAndAConnectionPerSend() throws Exception {
		assumeTrue(TestRedis.canStartPrivateServer(), "no redis-server binary here");
		try (RedisServerProcess primary = TestRedis.startPrivateServer();
				RedisServerProcess replica = TestRedis.startPrivateServer("--replicaof", primary.host(),
						String.valueOf(primary.port()))) {
			replica.awaitReplicaOf(primary, Duration.ofSeconds(10));
			try (TestStore fixture = TestStore.builder()
				.prefix(this.prefix)
				.on(primary.host(), primary.port())
				.confirmReplication(1, Duration.ofSeconds(1))
				.sendTimeout(Duration.ofSeconds(5))
				.build()) {
				DelayQueueTemplate template = fixture.template();
				template.send(message("jobs", "warm"));
				// Other tests' stores may still have idle threads of this name.
				long threadsBefore = threads("delay-queue-send-");
				List<CompletableFuture<SendResult>> sent = new ArrayList<>();
				AtomicInteger maxThreads = new AtomicInteger();
				for (int i = 0; i < 1000; i++) {
					sent.add(template.sendAsync(message("jobs", "r-" + i)));
					if (i % 50 == 0) {
						maxThreads.accumulateAndGet((int) threads("delay-queue-send-"), Math::max);
					}
				}
				maxThreads.accumulateAndGet((int) threads("delay-queue-send-"), Math::max);
				int failed = 0;
				for (CompletableFuture<SendResult> one : sent) {
					try {
						one.get(30, TimeUnit.SECONDS);
					}
					catch (ExecutionException ex) {
						failed++;
					}
				}
				assertThat(failed).isZero();
				assertThat(maxThreads.get() - threadsBefore).as("threads for 1000 sends on their way").isLessThan(64);
			}
		}
	}

	/**
	 * Lettuce replays the commands whose replies it lost when it reconnects: many sends
	 * on their way when a reply is dropped must all complete, each stored once.
	 */
	@Test
	void manySendsOnTheirWayWhenAReplyIsDroppedAllCompleteAndAreStoredOnce() throws Exception {
		try (TestStore fixture = TestStore.builder().prefix(this.prefix).behindProxy().build()) {
			FaultyRedisProxy proxy = fixture.proxy();
			DelayQueueTemplate template = fixture.template();
			RedisMessageStore store = fixture.store();
			template.send(message("orders", "warm"));
			FaultyRedisProxy.Fault fault = proxy.dropNextReplyTo(FaultyRedisProxy.named("EVALSHA", "EVAL"));
			List<CompletableFuture<SendResult>> sent = new ArrayList<>();
			for (int i = 0; i < 2000; i++) {
				sent.add(template.sendAsync(message("orders", "d-" + i)));
			}
			int failed = 0;
			int duplicates = 0;
			for (int i = 0; i < sent.size(); i++) {
				try {
					SendResult result = sent.get(i).get(20, TimeUnit.SECONDS);
					assertThat(result.id()).isEqualTo("d-" + i);
					if (result.duplicate()) {
						duplicates++;
					}
				}
				catch (ExecutionException ex) {
					failed++;
					assertThat(ex.getCause()).isInstanceOf(SendFailedException.class);
					assertThat(((SendFailedException) ex.getCause()).messageIds()).containsExactly("d-" + i);
				}
			}
			assertThat(duplicates).isZero();
			assertThat(store.stats("orders").scheduled()).isEqualTo(2001);
		}
	}

	/** SCRIPT FLUSH while thousands of sends are on their way. */
	@Test
	void scriptFlushWhileSendsAreOnTheirWayLosesNothing() throws Exception {
		try (RedisServerProcess server = TestRedis.startPrivateServer()) {
			try (TestStore fixture = TestStore.builder()
				.prefix(this.prefix)
				.on(server.host(), server.port())
				.partitions(Map.of("clicks", 4))
				.build()) {
				DelayQueueTemplate template = fixture.template();
				RedisMessageStore store = fixture.store();
				template.send(message("clicks", "warm"));
				List<CompletableFuture<SendResult>> sent = new ArrayList<>();
				for (int i = 0; i < 5000; i++) {
					sent.add(template.sendAsync(message("clicks", "f-" + i)));
					if (i % 1000 == 500) {
						server.command("SCRIPT", "FLUSH");
					}
				}
				for (int i = 0; i < sent.size(); i++) {
					assertThat(sent.get(i).get(20, TimeUnit.SECONDS).id()).isEqualTo("f-" + i);
				}
				assertThat(store.stats("clicks").scheduled()).isEqualTo(5001);
			}
		}
	}

	/** Redis restarted with sends on their way: every future completes, in time. */
	@Test
	void redisRestartMidStreamCompletesEveryFutureWithinTheTimeout() throws Exception {
		try (RedisServerProcess server = TestRedis.startPrivateServer()) {
			try (TestStore fixture = TestStore.builder()
				.prefix(this.prefix)
				.on(server.host(), server.port())
				.sendTimeout(Duration.ofSeconds(1))
				.build()) {
				DelayQueueTemplate template = fixture.template();
				template.send(message("orders", "warm"));
				List<CompletableFuture<SendResult>> sent = new ArrayList<>();
				for (int i = 0; i < 3000; i++) {
					sent.add(template.sendAsync(message("orders", "x-" + i)));
					if (i == 1500) {
						server.stop();
						server.start();
					}
				}
				long start = System.nanoTime();
				int failed = 0;
				for (int i = 0; i < sent.size(); i++) {
					try {
						sent.get(i).get(5, TimeUnit.SECONDS);
					}
					catch (ExecutionException ex) {
						failed++;
						assertThat(ex.getCause()).isInstanceOf(SendFailedException.class);
						assertThat(((SendFailedException) ex.getCause()).messageIds()).containsExactly("x-" + i);
					}
				}
			}
		}
	}

	/**
	 * After the store is closed, a failure is clear (not a bare
	 * RejectedExecutionException).
	 */
	@Test
	void sendAsyncAfterTheStoreClosedFailsClearly() throws Exception {
		try (TestStore fixture = TestStore.builder()
			.prefix(this.prefix)
			.confirmReplication(1, Duration.ofMillis(100))
			.build()) {
			DelayQueueTemplate template = fixture.template();
			fixture.store().close();
			Throwable syncFailure = null;
			try {
				template.send(message("jobs", "sync-after-close"));
			}
			catch (RuntimeException ex) {
				syncFailure = ex;
			}
			CompletableFuture<SendResult> sent = template.sendAsync(message("jobs", "after-close"));
			Throwable failure = null;
			try {
				sent.get(5, TimeUnit.SECONDS);
			}
			catch (ExecutionException ex) {
				failure = ex.getCause();
			}
			assertThat(failure).isInstanceOf(SendFailedException.class);
		}
	}

	/**
	 * Many sends refused by a partition (count changed elsewhere): each takes a thread of
	 * the waiting pool that settles the count.
	 */
	@Test
	void manyRefusedSendsDoNotTakeAThreadEach() throws Exception {
		try (TestStore fixture = TestStore.builder().prefix(this.prefix).partitions(Map.of("clicks", 3)).build()) {
			DelayQueueTemplate template = fixture.template();
			RedisMessageStore store = fixture.store();
			store.agreePartitions("clicks");
			RedisMessageStore other = new RedisMessageStore(fixture.connectionFactory(), this.prefix);
			other.usePartitions(io.github.delayqueue.store.TopicPartitions.of(Map.of("clicks", 1)));
			other.agreePartitions("clicks");
			// Other tests' stores may still have idle threads of this name.
			long threadsBefore = threads("delay-queue-send-");
			List<CompletableFuture<SendResult>> sent = new ArrayList<>();
			int max = 0;
			for (int i = 0; i < 1000; i++) {
				sent.add(template.sendAsync(message("clicks", "c-" + i)));
				if (i % 50 == 0) {
					max = Math.max(max, (int) threads("delay-queue-send-"));
				}
			}
			int failed = 0;
			for (int i = 0; i < sent.size(); i++) {
				try {
					sent.get(i).get(20, TimeUnit.SECONDS);
				}
				catch (ExecutionException ex) {
					failed++;
					assertThat(((SendFailedException) ex.getCause()).messageIds()).containsExactly("c-" + i);
				}
			}
			max = Math.max(max, (int) threads("delay-queue-send-"));
			assertThat(max - threadsBefore).isLessThan(64);
		}
	}

	/** Each observation is stopped exactly once, with the error when the send failed. */
	@Test
	void everyObservationStopsOnceWithTheErrorOnFailure() throws Exception {
		Map<String, AtomicInteger> stops = new ConcurrentHashMap<>();
		Map<String, AtomicInteger> errors = new ConcurrentHashMap<>();
		ObservationRegistry observations = ObservationRegistry.create();
		observations.observationConfig().observationHandler(new ObservationHandler<Observation.Context>() {
			@Override
			public void onStop(Observation.Context context) {
				stops.computeIfAbsent(String.valueOf(System.identityHashCode(context)), (k) -> new AtomicInteger())
					.incrementAndGet();
			}

			@Override
			public void onError(Observation.Context context) {
				errors.computeIfAbsent(String.valueOf(System.identityHashCode(context)), (k) -> new AtomicInteger())
					.incrementAndGet();
			}

			@Override
			public boolean supportsContext(Observation.Context context) {
				return true;
			}
		});
		try (RedisServerProcess server = TestRedis.startPrivateServer()) {
			try (TestStore fixture = TestStore.builder()
				.prefix(this.prefix)
				.on(server.host(), server.port())
				.sendTimeout(Duration.ofMillis(300))
				.build()) {
				DelayQueueTemplate template = fixture.template();
				template.setObservationRegistry(observations);
				template.sendAllAsync(List.of(message("orders", "ok-1"), message("orders", "ok-2"))).get();
				server.command("CLIENT", "PAUSE", "1000", "ALL");
				CompletableFuture<List<SendResult>> failing = template
					.sendAllAsync(List.of(message("orders", "ko-1"), message("orders", "ko-2")));
				assertThat(failing).failsWithin(Duration.ofSeconds(3));
			}
		}
		assertThat(stops.values()).allSatisfy((n) -> assertThat(n.get()).isOne());
		assertThat(errors.values()).allSatisfy((n) -> assertThat(n.get()).isOne());
	}

}

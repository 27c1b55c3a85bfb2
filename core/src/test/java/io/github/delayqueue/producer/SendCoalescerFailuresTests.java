package io.github.delayqueue.producer;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import io.github.delayqueue.store.NewMessage;
import io.github.delayqueue.store.Sent;
import io.github.delayqueue.store.TopicPartitions;
import io.github.delayqueue.store.redis.RedisMessageStore;
import io.github.delayqueue.test.redis.FaultyRedisProxy;
import io.github.delayqueue.test.redis.RedisServerProcess;
import io.github.delayqueue.test.redis.TestRedis;
import io.github.delayqueue.testsupport.TestStore;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Sends that share script calls when things go wrong: calls that fail before they go out,
 * sends with different deadlines in one call, a burst with confirmed replication, a
 * partition count changing under sends of one id.
 */
class SendCoalescerFailuresTests {

	private final String prefix = TestStore.uniquePrefix();

	private static DelayMessage message(String topic, String id, String body) {
		return DelayMessage.builder(topic, body).id(id).delay(Duration.ofHours(1)).build();
	}

	/**
	 * When a coalesced call fails synchronously (here: the connection factory is gone, so
	 * getConnection throws and write() gets a failedFuture), whenComplete runs on the
	 * same stack and next() writes the next batch, which fails synchronously too: one
	 * stack frame group per waiting batch. With many batches waiting, this overflows the
	 * stack; the StackOverflowError is swallowed by CompletableFuture inside
	 * whenComplete, answer() is never called for that batch, and its futures never
	 * complete (a sync send on them would join forever).
	 */
	@Test
	void aSynchronousFailureWithManyBatchesWaitingCompletesEveryFuture() throws Exception {
		try (TestStore fixture = TestStore.builder()
			.prefix(this.prefix)
			.behindProxy()
			.sendTimeout(Duration.ofSeconds(60))
			.build()) {
			FaultyRedisProxy proxy = fixture.proxy();
			RedisMessageStore store = fixture.store();
			DelayQueueTemplate template = fixture.template();
			template.send(message("big", "warm", "warm"));
			// A body over half the byte limit of a call: every send is a batch of
			// its own.
			byte[] body = new byte[300 * 1024];
			proxy.pause();
			List<CompletableFuture<Map<String, List<Sent>>>> sent = new ArrayList<>();
			int sends = 20_000;
			for (int i = 0; i < sends; i++) {
				sent.add(store.sendAsync(Map.of("big", List.of(new NewMessage("m-" + i, true, 3_600_000, body)))));
			}
			// The factory goes away (an application shutting down): the calls on
			// their way fail, and every later write fails at once.
			((LettuceConnectionFactory) fixture.connectionFactory()).destroy();
			proxy.resume();
			int hanging = 0;
			long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
			for (CompletableFuture<Map<String, List<Sent>>> one : sent) {
				try {
					one.get(Math.max(1, until - System.nanoTime()), TimeUnit.NANOSECONDS);
				}
				catch (ExecutionException ex) {
					// failed: fine
				}
				catch (TimeoutException ex) {
					hanging++;
				}
			}
			assertThat(hanging).as("sends whose future never completed").isZero();
		}
	}

	/**
	 * A send waiting in the coalescer behind a nearly expired send is written in the same
	 * call, whose timeout is the earliest remaining deadline (1 ms): a fresh send fails
	 * with "Redis did not answer within 1 ms" long before its own send timeout, though
	 * Redis answers in time for it (and the call ran: it is stored).
	 */
	@Test
	void aFreshSendCoalescedWithANearlyExpiredOneIsNotFailedBeforeItsOwnTimeout() throws Exception {
		try (TestStore fixture = TestStore.builder()
			.prefix(this.prefix)
			.behindProxy()
			.sendTimeout(Duration.ofSeconds(1))
			.build()) {
			FaultyRedisProxy proxy = fixture.proxy();
			DelayQueueTemplate template = fixture.template();
			RedisMessageStore store = fixture.store();
			template.send(message("orders", "warm", "warm"));
			// The next script reply, and every later one on the connection, comes
			// 1.1 s late: the four calls on their way (as many as a partition may have)
			// time out at 1 s.
			proxy.delayNextReplyTo(FaultyRedisProxy.named("EVALSHA", "EVAL"), Duration.ofMillis(1100));
			for (int i = 1; i <= 4; i++) {
				template.sendAsync(message("orders", "a-" + i, "a"));
			}
			// Waits for room: its deadline is about when those four time out.
			CompletableFuture<SendResult> old = template.sendAsync(message("orders", "old", "old"));
			// Made 600 ms later (a step of the scenario, not a wait for a
			// condition).
			Thread.sleep(600);
			// Fresh: its deadline is 1.6 s; Redis answers it by about 1.1 s.
			long start = System.nanoTime();
			CompletableFuture<SendResult> fresh = template.sendAsync(message("orders", "fresh", "fresh"));
			Throwable failure = null;
			try {
				fresh.get(5, TimeUnit.SECONDS);
			}
			catch (ExecutionException ex) {
				failure = ex.getCause();
			}
			long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
			await().atMost(Duration.ofSeconds(5))
				.untilAsserted(
						() -> assertThat(store.inspect("orders", "fresh", 100)).as("stored by Redis").isNotNull());
			assertThat(failure).as("the fresh send, after %d ms of its 1000 ms", millis).isNull();
		}
	}

	/**
	 * With confirmed replication every sendAsync runs alone on the one lane thread (a
	 * connection borrow, the script call, a WAIT): a burst of them is serialised, two
	 * round trips each, and those queued longer than the send timeout start with 1 ms
	 * left and fail. Before the change they ran on four threads. Redis is half a second
	 * away, so that the machine's load is nothing next to the round trips: on four lanes
	 * eight sends take two rounds, 2 s; serialised, the sixth would start after 5 s, its
	 * timeout.
	 */
	@Test
	void withConfirmedReplicationABurstOfAsyncSendsIsNotSerialisedIntoTimeouts() throws Exception {
		assumeTrue(TestRedis.canStartPrivateServer(), "no redis-server binary here");
		try (RedisServerProcess primary = TestRedis.startPrivateServer();
				RedisServerProcess replica = TestRedis.startPrivateServer("--replicaof", primary.host(),
						String.valueOf(primary.port()));
				FaultyRedisProxy proxy = FaultyRedisProxy.start(primary.host(), primary.port())) {
			replica.awaitReplicaOf(primary, Duration.ofSeconds(10));
			try (TestStore fixture = TestStore.builder()
				.prefix(this.prefix)
				.on(proxy.host(), proxy.port())
				.confirmReplication(1, Duration.ofSeconds(3))
				.sendTimeout(Duration.ofSeconds(5))
				.build()) {
				DelayQueueTemplate template = fixture.template();
				template.send(message("jobs", "warm", "warm"));
				proxy.latency(Duration.ofMillis(500));
				long start = System.nanoTime();
				List<CompletableFuture<SendResult>> sent = new ArrayList<>();
				for (int i = 0; i < 8; i++) {
					sent.add(template.sendAsync(message("jobs", "r-" + i, "body")));
				}
				int failed = 0;
				for (CompletableFuture<SendResult> one : sent) {
					try {
						one.get(30, TimeUnit.SECONDS);
					}
					catch (ExecutionException ex) {
						failed++;
					}
				}
				long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
				assertThat(failed).as("failed of 8 async sends, all done after %d ms", millis).isZero();
			}
		}
	}

	/**
	 * Finding 5 (not new in 35e1f75, but against its "calls are written in the order of
	 * the sends"). Sends a partition refused are sent again on the four waiting threads
	 * after the count is settled, while later sends of the same thread go directly: a
	 * later send of the same id is stored first and the earlier one is reported a
	 * duplicate.
	 */
	@Test
	void sendsOfOneIdAcrossAPartitionRefusalKeepTheFirst() throws Exception {
		try (TestStore fixture = TestStore.builder().prefix(this.prefix).partitions(Map.of("clicks", 3)).build()) {
			DelayQueueTemplate template = fixture.template();
			RedisMessageStore store = fixture.store();
			store.agreePartitions("clicks");
			RedisMessageStore other = new RedisMessageStore(fixture.connectionFactory(), this.prefix);
			other.usePartitions(TopicPartitions.of(Map.of("clicks", 1)));
			other.agreePartitions("clicks");
			List<CompletableFuture<SendResult>> first = new ArrayList<>();
			List<CompletableFuture<SendResult>> second = new ArrayList<>();
			for (int i = 0; i < 500; i++) {
				first.add(template.sendAsync(message("clicks", "c-" + i, "first")));
			}
			for (int i = 0; i < 500; i++) {
				second.add(template.sendAsync(message("clicks", "c-" + i, "second")));
			}
			List<String> laterWon = new ArrayList<>();
			for (int i = 0; i < 500; i++) {
				try {
					SendResult later = second.get(i).get(20, TimeUnit.SECONDS);
					if (!later.duplicate()) {
						laterWon.add("c-" + i);
					}
				}
				catch (ExecutionException ex) {
					// refused again: not an order question
				}
				try {
					first.get(i).get(20, TimeUnit.SECONDS);
				}
				catch (ExecutionException ex) {
					// idem
				}
			}
			assertThat(laterWon).as("ids whose second send was stored instead of the first").isEmpty();
		}
	}

}

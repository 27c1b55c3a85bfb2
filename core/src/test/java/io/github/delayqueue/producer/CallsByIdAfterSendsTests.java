package io.github.delayqueue.producer;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;

import io.github.delayqueue.store.redis.RedisMessageStore;
import io.github.delayqueue.test.redis.FaultyRedisProxy;
import io.github.delayqueue.testsupport.TestStore;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A call by id (cancel, reschedule, inspect) made after a send of that id by the same
 * application sees that send, however long it waited among the sends of its partition
 * before it went out.
 */
class CallsByIdAfterSendsTests {

	private static final int ROUNDS = 300;

	private final String prefix = TestStore.uniquePrefix();

	@Test
	void aCancelRightAfterAnAsynchronousSendOfItsIdCancelsItWhileOtherThreadsLoadThePartition() throws Exception {
		try (TestStore fixture = TestStore.builder().prefix(this.prefix).build()) {
			DelayQueueTemplate template = fixture.template();
			template.send("orders", "warm up", Duration.ofHours(1));
			List<CompletableFuture<SendResult>> sends = new ArrayList<>();
			List<Boolean> cancelled = new ArrayList<>();
			underLoad(template, () -> {
				for (int i = 0; i < ROUNDS; i++) {
					String id = "pay-" + i;
					sends.add(template.sendAsync(message(id)));
					cancelled.add(template.cancel("orders", id));
				}
			});
			CompletableFuture.allOf(sends.toArray(CompletableFuture[]::new)).join();
			assertThat(cancelled).hasSize(ROUNDS).containsOnly(true);
			RedisMessageStore store = fixture.store();
			for (int i = 0; i < ROUNDS; i++) {
				assertThat(store.inspect("orders", "pay-" + i, 16)).as("pay-%d", i).isNull();
			}
		}
	}

	@Test
	void aRescheduleRightAfterAnAsynchronousSendOfItsIdReschedulesItWhileOtherThreadsLoadThePartition()
			throws Exception {
		try (TestStore fixture = TestStore.builder().prefix(this.prefix).build()) {
			DelayQueueTemplate template = fixture.template();
			template.send("orders", "warm up", Duration.ofHours(1));
			List<CompletableFuture<SendResult>> sends = new ArrayList<>();
			List<Boolean> rescheduled = new ArrayList<>();
			underLoad(template, () -> {
				for (int i = 0; i < ROUNDS; i++) {
					String id = "pay-" + i;
					sends.add(template.sendAsync(message(id)));
					rescheduled.add(template.reschedule("orders", id, Duration.ofDays(2)));
				}
			});
			CompletableFuture.allOf(sends.toArray(CompletableFuture[]::new)).join();
			assertThat(rescheduled).hasSize(ROUNDS).containsOnly(true);
			RedisMessageStore store = fixture.store();
			// Sent due in an hour, rescheduled to two days (the Redis of the tests is
			// local).
			long inADay = System.currentTimeMillis() + Duration.ofDays(1).toMillis();
			for (int i = 0; i < ROUNDS; i++) {
				assertThat(store.inspect("orders", "pay-" + i, 16).score()).as("pay-%d", i).isGreaterThan(inADay);
			}
		}
	}

	@Test
	void aCancelAndAnInspectRightAfterAnAsynchronousSendQueuedBehindOthersOnARedisAFewMillisecondsAwaySeeIt()
			throws Exception {
		try (TestStore fixture = TestStore.builder().prefix(this.prefix).behindProxy().build()) {
			FaultyRedisProxy proxy = fixture.proxy();
			DelayQueueTemplate template = fixture.template();
			RedisMessageStore store = fixture.store();
			template.send("orders", "warm up", Duration.ofHours(1));
			proxy.latency(Duration.ofMillis(5));
			for (int i = 0; i < 30; i++) {
				// Two sends take the partition's calls on their way: the third waits.
				template.sendAsync(message("a-" + i));
				template.sendAsync(message("b-" + i));
				template.sendAsync(message("c-" + i));
				assertThat(store.inspect("orders", "c-" + i, 16)).as("c-%d", i).isNotNull();
				template.sendAsync(message("a2-" + i));
				template.sendAsync(message("b2-" + i));
				CompletableFuture<SendResult> sent = template.sendAsync(message("pay-" + i));
				assertThat(template.cancel("orders", "pay-" + i)).as("pay-%d", i).isTrue();
				sent.join();
				assertThat(store.inspect("orders", "pay-" + i, 16)).as("pay-%d", i).isNull();
			}
		}
	}

	private static DelayMessage message(String id) {
		return DelayMessage.builder("orders", "order " + id).id(id).delay(Duration.ofHours(1)).build();
	}

	/** Runs the rounds while four other threads keep sending to the same topic. */
	private static void underLoad(DelayQueueTemplate template, Runnable rounds) throws Exception {
		AtomicBoolean done = new AtomicBoolean();
		ExecutorService loaders = Executors.newFixedThreadPool(4);
		try {
			List<Future<?>> load = new ArrayList<>();
			for (int t = 0; t < 4; t++) {
				int thread = t;
				load.add(loaders.submit(() -> {
					List<CompletableFuture<SendResult>> sent = new ArrayList<>();
					for (int i = 0; !done.get(); i++) {
						sent.add(template.sendAsync(message("load-" + thread + "-" + i)));
						if (sent.size() == 50) {
							CompletableFuture.allOf(sent.toArray(CompletableFuture[]::new)).join();
							sent.clear();
						}
					}
					CompletableFuture.allOf(sent.toArray(CompletableFuture[]::new)).join();
				}));
			}
			rounds.run();
			done.set(true);
			for (Future<?> loader : load) {
				loader.get();
			}
		}
		finally {
			done.set(true);
			loaders.shutdownNow();
		}
	}

}

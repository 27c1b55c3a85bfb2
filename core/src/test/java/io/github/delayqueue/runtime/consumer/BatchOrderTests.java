package io.github.delayqueue.runtime.consumer;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

import io.github.delayqueue.store.ClaimedMessage;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Batches of one partition reach the handlers in the order their messages came, also when
 * one is sent by its batch timeout while the next fills up.
 */
class BatchOrderTests {

	private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();

	@AfterEach
	void stopScheduler() {
		this.scheduler.shutdownNow();
	}

	/**
	 * The batch timeout takes the batch under the assembler's monitor and hands it on
	 * outside it; the thread that fills the next batch meanwhile hands that one on first.
	 * The dispatcher here stands for a timeout thread that loses the CPU between the two.
	 */
	@Test
	void aBatchSentByItsTimeoutReachesTheHandlersBeforeTheNextOne() {
		List<List<String>> dispatched = new CopyOnWriteArrayList<>();
		AtomicInteger calls = new AtomicInteger();
		BatchAssembler assembler = new BatchAssembler("batched", 2, Duration.ofMillis(50), this.scheduler,
				(batch, slots) -> {
					if (calls.incrementAndGet() == 1) {
						// Preempted on its way to the handler executor.
						LockSupport.parkNanos(Duration.ofMillis(300).toNanos());
					}
					dispatched.add(batch.stream().map(InFlightMessage::id).toList());
				});
		assembler.dispatch(message("m1"), true);
		await().atMost(Duration.ofSeconds(5)).until(() -> calls.get() == 1);
		assembler.dispatch(message("m2"), true);
		assembler.dispatch(message("m3"), true);
		await().atMost(Duration.ofSeconds(5)).until(() -> dispatched.size() == 2);
		assertThat(dispatched).containsExactly(List.of("m1"), List.of("m2", "m3"));
	}

	private static InFlightMessage message(String id) {
		byte[] stored = ("0:" + Instant.now().toEpochMilli() + ":x").getBytes(StandardCharsets.UTF_8);
		return new InFlightMessage(new ClaimedMessage(id, "token", 0, Instant.now(), stored));
	}

}

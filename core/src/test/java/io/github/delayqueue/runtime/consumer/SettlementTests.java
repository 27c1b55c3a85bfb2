package io.github.delayqueue.runtime.consumer;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.delayqueue.runtime.consumer.Settlement.HandBack;
import io.github.delayqueue.store.ClaimedMessage;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import org.springframework.dao.DataAccessResourceFailureException;
import org.springframework.data.redis.RedisSystemException;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The settlement's hand-back against a fake of the topic store that fails as a Redis does
 * that just restarted.
 */
class SettlementTests {

	private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();

	@AfterEach
	void stopScheduler() {
		this.scheduler.shutdownNow();
	}

	/**
	 * A Redis that just restarted answers {@code LOADING} while it reads its data back:
	 * the hand-back at a stop tries again rather than leaving the messages in flight
	 * until their leases expire.
	 */
	@Test
	void aHandBackThatFailsIsTriedAgainAndTheMessagesGoBack() {
		FailingReleases store = new FailingReleases(2);
		Settlement settlement = new Settlement("orders", store, new AckBatcher("orders", store, this.scheduler));
		CompletableFuture<Void> handedBack = settlement.handBack(List.of(message("m1"), message("m2")),
				HandBack.NOT_STARTED);
		handedBack.orTimeout(5, TimeUnit.SECONDS).join();
		assertThat(store.releases.get()).isEqualTo(3);
		assertThat(store.calls).containsExactly("release m1 token", "release m2 token");
	}

	/**
	 * The retries end: a Redis gone for good costs the stop no more than about 300 ms.
	 */
	@Test
	void aHandBackGivesUpAfterTwoRetries() {
		FailingReleases store = new FailingReleases(Integer.MAX_VALUE);
		Settlement settlement = new Settlement("orders", store, new AckBatcher("orders", store, this.scheduler));
		long start = System.nanoTime();
		settlement.handBack(List.of(message("m1")), HandBack.NOT_STARTED).orTimeout(5, TimeUnit.SECONDS).join();
		assertThat(store.releases.get()).isEqualTo(3);
		assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(3));
		assertThat(store.calls).isEmpty();
	}

	private static InFlightMessage message(String id) {
		Instant now = Instant.now();
		byte[] stored = ("0:" + now.toEpochMilli() + ":x").getBytes(StandardCharsets.US_ASCII);
		return new InFlightMessage(new ClaimedMessage(id, "token", 0, now, stored));
	}

	/** Fails the first releases, as Redis does while it loads its data. */
	static class FailingReleases extends DeliveryPoliciesTests.RecordingTopicStore {

		final AtomicInteger releases = new AtomicInteger();

		private final int failures;

		FailingReleases(int failures) {
			this.failures = failures;
		}

		@Override
		public CompletableFuture<List<Boolean>> release(List<String> ids, List<String> leaseTokens) {
			if (this.releases.incrementAndGet() <= this.failures) {
				return CompletableFuture.failedFuture(new RedisSystemException("Error in execution",
						new DataAccessResourceFailureException("LOADING Redis is loading the dataset in memory")));
			}
			return super.release(ids, leaseTokens);
		}

	}

}

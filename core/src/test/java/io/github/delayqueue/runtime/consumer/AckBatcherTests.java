package io.github.delayqueue.runtime.consumer;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.AppenderBase;
import io.github.delayqueue.store.ClaimedMessage;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

import org.springframework.dao.QueryTimeoutException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The stop's acknowledgements sent again in full, against a fake store whose replies come
 * when a test says: a message is acknowledged if either run acknowledged it, and only a
 * lease that both runs found lost is reported as such.
 */
class AckBatcherTests {

	private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();

	private final TwoReplies store = new TwoReplies();

	private final AckBatcher acks = new AckBatcher("orders", this.store, this.scheduler);

	private final Logger logger = (Logger) LoggerFactory.getLogger(AckBatcher.class);

	private final Warnings warnings = new Warnings();

	@BeforeEach
	void captureWarnings() {
		this.warnings.start();
		this.logger.addAppender(this.warnings);
	}

	@AfterEach
	void stop() {
		this.logger.detachAppender(this.warnings);
		this.scheduler.shutdownNow();
	}

	/**
	 * The first call met {@code NOSCRIPT} and was sent in full after the stop's run,
	 * which acknowledged the message: the first call's run finds no lease.
	 */
	@Test
	void aMessageTheStopsRunAcknowledgedIsNotReportedAsALostLeaseWhenTheFirstCallFindsNone() {
		CompletableFuture<Void> stopped = acknowledgeAndStop(Duration.ofSeconds(5));
		this.store.again.complete(List.of(true));
		this.store.first.complete(List.of(false));

		await().atMost(Duration.ofSeconds(5)).until(stopped::isDone);
		assertThat(this.acks.isDone()).isTrue();
		assertThat(this.warnings.all).isEmpty();
	}

	/**
	 * The first call's reply is lost with the connection, too close to the stop's
	 * deadline to send it again; the stop's run answered.
	 */
	@Test
	void aMessageTheStopsRunAcknowledgedIsNotReportedUnansweredWhenTheFirstCallFails() {
		CompletableFuture<Void> stopped = acknowledgeAndStop(Duration.ofMillis(50));
		this.store.again.complete(List.of(true));
		this.store.first.completeExceptionally(new QueryTimeoutException("connection closed"));

		await().atMost(Duration.ofSeconds(5)).until(stopped::isDone);
		assertThat(this.warnings.all).isEmpty();
	}

	/** Both runs found no lease: it had expired, and the message may come again. */
	@Test
	void aLeaseBothRunsFoundLostIsReported() {
		CompletableFuture<Void> stopped = acknowledgeAndStop(Duration.ofSeconds(5));
		this.store.again.complete(List.of(false));
		this.store.first.complete(List.of(false));

		await().atMost(Duration.ofSeconds(5)).until(stopped::isDone);
		assertThat(this.warnings.all).singleElement()
			.asString()
			.contains("message m1 handled, but its lease had expired");
	}

	/** The stop's run waits for the first call's answer, which it does not replace. */
	@Test
	void theStopWaitsForTheFirstCallsAnswer() {
		CompletableFuture<Void> stopped = acknowledgeAndStop(Duration.ofSeconds(5));
		this.store.again.complete(List.of(true));

		await().during(Duration.ofMillis(200)).atMost(Duration.ofSeconds(1)).until(() -> !stopped.isDone());
		this.store.first.complete(List.of(false));
		await().atMost(Duration.ofSeconds(5)).until(stopped::isDone);
	}

	/**
	 * A handler that outlived the stop (its message kept its lease) returns once the stop
	 * has flushed and the scheduler is shut down: its acknowledgement is sent at once, in
	 * full, not dropped with the flush the scheduler refused.
	 */
	@Test
	void anAcknowledgementMadeAfterTheStopIsSentAtOnce() {
		this.acks.flushNow(System.nanoTime() + Duration.ofSeconds(5).toNanos());
		this.scheduler.shutdownNow();
		this.acks.acknowledge(message("m2"));
		assertThat(this.store.calls).containsExactly("ackAtStop m2 token");
		this.store.again.complete(List.of(true));
		assertThat(this.acks.isDone()).isTrue();
		assertThat(this.warnings.all).isEmpty();
	}

	/**
	 * Queues a message for acknowledgement, waits until its call is on its way, and
	 * starts the stop.
	 * @param deadline the time left until the stop's deadline
	 */
	private CompletableFuture<Void> acknowledgeAndStop(Duration deadline) {
		this.acks.acknowledge(message("m1"));
		await().atMost(Duration.ofSeconds(5)).until(() -> this.store.calls.contains("ack m1 token"));
		CompletableFuture<Void> stopped = this.acks.flushNow(System.nanoTime() + deadline.toNanos());
		assertThat(this.store.calls).containsExactly("ack m1 token", "ackAtStop m1 token");
		return stopped;
	}

	private static InFlightMessage message(String id) {
		Instant now = Instant.now();
		byte[] stored = ("0:" + now.toEpochMilli() + ":x").getBytes(StandardCharsets.US_ASCII);
		return new InFlightMessage(new ClaimedMessage(id, "token", 0, now, stored));
	}

	/** Answers the first acknowledgement and the stop's with the futures of the test. */
	static class TwoReplies extends DeliveryPoliciesTests.RecordingTopicStore {

		final CompletableFuture<List<Boolean>> first = new CompletableFuture<>();

		final CompletableFuture<List<Boolean>> again = new CompletableFuture<>();

		@Override
		public CompletableFuture<List<Boolean>> ack(List<String> ids, List<String> leaseTokens) {
			this.calls.add("ack " + ids.get(0) + " " + leaseTokens.get(0));
			return this.first;
		}

		@Override
		public CompletableFuture<List<Boolean>> ackAtStop(List<String> ids, List<String> leaseTokens) {
			this.calls.add("ackAtStop " + ids.get(0) + " " + leaseTokens.get(0));
			return this.again;
		}

	}

	/** The warnings logged while it is attached. */
	static class Warnings extends AppenderBase<ILoggingEvent> {

		final List<String> all = new CopyOnWriteArrayList<>();

		@Override
		protected void append(ILoggingEvent event) {
			if (event.getLevel().isGreaterOrEqual(Level.WARN)) {
				this.all.add(event.getFormattedMessage());
			}
		}

	}

}

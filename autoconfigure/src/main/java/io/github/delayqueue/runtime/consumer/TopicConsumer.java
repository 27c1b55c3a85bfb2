package io.github.delayqueue.runtime.consumer;

import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import io.github.delayqueue.convert.PayloadConverter;
import io.github.delayqueue.listener.DelayListenerEndpoint;
import io.github.delayqueue.listener.ListenerSettings;
import io.github.delayqueue.metrics.DelayQueueMetrics;
import io.github.delayqueue.observation.DelayQueueReceiverObservationConvention;
import io.github.delayqueue.runtime.support.OutageLog;
import io.github.delayqueue.store.RateLimit;
import io.github.delayqueue.store.TopicStore;
import io.micrometer.observation.ObservationRegistry;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * Consumes one topic for one {@link DelayListenerEndpoint}, and wires the parts that do
 * it: the {@link Fetcher} claims on the shared scheduler, handler threads run the
 * {@link DeliveryHandler} (or, for a batch listener, the {@link BatchDeliveryHandler} on
 * the batches of the {@link BatchAssembler}, a batch taking one handler),
 * {@link Settlement} ends each lease once, the {@link LeaseKeeper} extends leases and
 * hands unfinished messages back, and the {@link AckBatcher} acknowledges in batches. Its
 * only threads are its handlers', started when messages come and gone again after a
 * minute idle.
 */
public final class TopicConsumer {

	private static final Log logger = LogFactory.getLog(TopicConsumer.class);

	/**
	 * Time left to send queued acknowledgements when stopping, even past the shutdown
	 * timeout.
	 */
	private static final long ACK_GRACE_NANOS = TimeUnit.SECONDS.toNanos(2);

	private final DelayListenerEndpoint endpoint;

	private final ListenerSettings settings;

	private final ExecutorService handlers;

	private final AckBatcher acks;

	private final LeaseKeeper leases;

	private final DeliveryHandler deliveries;

	private final @Nullable BatchDeliveryHandler batchDeliveries;

	private final @Nullable BatchAssembler batches;

	private final Fetcher fetcher;

	private final ScheduledExecutorService scheduler;

	/**
	 * Creates a consumer.
	 * @param endpoint the listener method and its settings
	 * @param store the topic's store
	 * @param converter the payload converter
	 * @param scheduler the shared scheduler, for claims, held messages, lease extension
	 * and acknowledgements
	 * @param metrics where deliveries and outcomes are reported
	 * @param observationRegistry the registry of the receiver observations
	 * @param observationConvention a convention for the receiver observations, or
	 * {@code null} for the default one
	 * @param handlerExecutor the executor shared by every topic's handlers, on which at
	 * most the topic's concurrency run at once
	 * @param partitions the number of partitions of the topic, which share its rate limit
	 * equally
	 */
	public TopicConsumer(DelayListenerEndpoint endpoint, TopicStore store, PayloadConverter converter,
			ScheduledExecutorService scheduler, DelayQueueMetrics metrics, ObservationRegistry observationRegistry,
			@Nullable DelayQueueReceiverObservationConvention observationConvention, Executor handlerExecutor,
			int partitions) {
		String topic = endpoint.topic();
		this.endpoint = endpoint;
		this.settings = endpoint.settings();
		this.scheduler = scheduler;
		this.handlers = new ConcurrencyLimitedExecutor(handlerExecutor, this.settings.concurrency());
		OutageLog outageLog = new OutageLog("listener of topic '" + topic + "'");
		this.acks = new AckBatcher(topic, store, scheduler);
		Settlement settlement = new Settlement(topic, store, this.acks);
		this.leases = new LeaseKeeper(topic, store, this.settings.visibilityTimeout(), this.settings.maxHandlingTime(),
				settlement, outageLog);
		this.deliveries = new DeliveryHandler(endpoint, converter, settlement, metrics, observationRegistry,
				observationConvention, this::slowDown);
		RateLimit configured = this.settings.rateLimit();
		RateLimit rateLimit = (configured != null) ? configured.share(partitions) : null;
		// A rate-limited topic claims no prefetch: a delivery must start when it is
		// claimed.
		int prefetch = (rateLimit != null) ? 0 : this.settings.prefetch();
		int slots = this.settings.concurrency() + prefetch;
		Fetcher.Dispatcher dispatcher = this::dispatch;
		if (endpoint.isBatch()) {
			this.batchDeliveries = new BatchDeliveryHandler(endpoint, this.deliveries, this::slowDown);
			this.batches = new BatchAssembler(topic, this.settings.maxBatchSize(), this.settings.batchTimeout(),
					scheduler, this::dispatchBatch);
			slots = this.settings.concurrency() * this.settings.maxBatchSize() + prefetch;
			dispatcher = this.batches;
		}
		else {
			this.batchDeliveries = null;
			this.batches = null;
		}
		this.fetcher = new Fetcher(topic, store, this.settings, slots, rateLimit, metrics, scheduler, dispatcher,
				this.leases, outageLog);
	}

	/**
	 * @return the topic
	 */
	public String topic() {
		return this.endpoint.topic();
	}

	/** Starts claiming. */
	public void start() {
		this.leases.start(this.scheduler);
		this.fetcher.start();
		String batch = (this.batches != null)
				? ", batches of up to " + this.settings.maxBatchSize() + " within " + this.settings.batchTimeout() : "";
		RateLimit rateLimit = this.settings.rateLimit();
		String rate = (rateLimit != null) ? ", rate limit " + rateLimit.limit() + " per " + rateLimit.period() : "";
		logger.info("Listening to topic '" + topic() + "' with " + this.endpoint.describe() + " (concurrency "
				+ this.settings.concurrency() + ", max attempts " + this.settings.maxAttempts() + batch + rate + ")");
	}

	/**
	 * Stops claiming new messages; handlers already running go on, and a batch being
	 * gathered goes to the handlers as it is.
	 */
	public void stopClaiming() {
		this.fetcher.stop();
		if (this.batches != null) {
			this.batches.stop();
		}
	}

	/**
	 * Lets running handlers finish until the deadline, then hands every message still
	 * unfinished back to the ready list at once and sends the acknowledgements still
	 * queued. Call {@link #stopClaiming()} first.
	 * @param deadlineNanos the {@link System#nanoTime()} by which to be done
	 */
	public void finishStopping(long deadlineNanos) {
		this.fetcher.awaitClaimInProgress(deadlineNanos);
		this.handlers.shutdown();
		try {
			this.handlers.awaitTermination(Math.max(0, deadlineNanos - System.nanoTime()), TimeUnit.NANOSECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
		this.leases.handBackUnfinished();
		this.handlers.shutdownNow();
		this.acks.flushNow(Math.max(deadlineNanos, System.nanoTime() + ACK_GRACE_NANOS));
	}

	/**
	 * @return how long stopping waits for running handlers
	 */
	public Duration shutdownTimeout() {
		return this.settings.shutdownTimeout();
	}

	/**
	 * @return whether it is claiming: started, not stopped, and not stopped by an error
	 */
	public boolean isAlive() {
		return this.fetcher.isAlive();
	}

	/**
	 * Tells whether this consumer has nothing in hand: no claim awaiting its reply, no
	 * message claimed and not yet settled (held until due, or being handled), and no
	 * acknowledgement waiting to be sent or answered.
	 * @return whether it is idle
	 */
	public boolean isIdle() {
		return !this.fetcher.isClaiming() && this.leases.holdsNone() && this.acks.isDone();
	}

	/** A handler asked to slow down: nothing new is claimed for the pause. */
	private void slowDown(Duration pause) {
		this.fetcher.pauseFor(pause);
	}

	/** Claims at once, e.g. because a broker made messages ready. */
	public void wake() {
		this.fetcher.wake();
	}

	private void dispatch(InFlightMessage message, boolean holdsSlot) {
		try {
			this.handlers.execute(() -> {
				try {
					this.deliveries.handle(message);
				}
				finally {
					this.leases.release(message);
					if (holdsSlot) {
						this.fetcher.slotsFreed(1);
					}
				}
			});
		}
		catch (RejectedExecutionException ex) {
			// Stopping: the message stays with the lease keeper, which hands it back.
		}
	}

	private void dispatchBatch(List<InFlightMessage> batch, int slots) {
		BatchDeliveryHandler handler = Objects.requireNonNull(this.batchDeliveries);
		try {
			this.handlers.execute(() -> {
				try {
					handler.handle(batch);
				}
				finally {
					batch.forEach(this.leases::release);
					if (slots > 0) {
						this.fetcher.slotsFreed(slots);
					}
				}
			});
		}
		catch (RejectedExecutionException ex) {
			// Stopping: the messages stay with the lease keeper, which hands them back.
		}
	}

}

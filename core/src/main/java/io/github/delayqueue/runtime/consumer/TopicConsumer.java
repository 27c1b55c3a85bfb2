package io.github.delayqueue.runtime.consumer;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import io.github.delayqueue.convert.PayloadConverter;
import io.github.delayqueue.listener.DelayListenerEndpoint;
import io.github.delayqueue.listener.DelayListenerErrorHandler;
import io.github.delayqueue.listener.ListenerSettings;
import io.github.delayqueue.metrics.DelayQueueMetrics;
import io.github.delayqueue.observation.DelayQueueReceiverObservationConvention;
import io.github.delayqueue.runtime.consumer.Settlement.HandBack;
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

	/** How long claims pause after the handler executor refused a handler call. */
	static final Duration REFUSAL_PAUSE = Duration.ofSeconds(1);

	private final DelayListenerEndpoint endpoint;

	private final ListenerSettings settings;

	private final ConcurrencyLimitedExecutor<HandlerCall> handlers;

	private final AckBatcher acks;

	private final LeaseKeeper leases;

	private final DeliveryHandler deliveries;

	private final @Nullable BatchDeliveryHandler batchDeliveries;

	private final @Nullable BatchAssembler batches;

	private final Fetcher fetcher;

	private final ClaimPause claimPause;

	private final AdaptivePrefetch prefetch;

	/** Sets the group slots right, for a listener with a group concurrency. */
	private final @Nullable GroupSlotsRecount slotsRecount;

	private final ScheduledExecutorService scheduler;

	/** Completes once stopping it has ended: see {@link #endStop()}. */
	private final CompletableFuture<Void> stopEnded = new CompletableFuture<>();

	/** The hand-back of the messages not started when it stopped claiming. */
	private volatile CompletableFuture<Void> notStartedHandedBack = CompletableFuture.completedFuture(null);

	private volatile boolean stopping;

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
	 * @param partition the index of the partition it consumes, which gets its share of
	 * the topic's rate limit
	 * @param partitions the number of partitions of the topic, which share its rate limit
	 * (see {@link RateLimit#share(int, int)})
	 * @param slowDown the topic's pause of claims asked by its handlers, shared by the
	 * consumers of all its partitions
	 * @param errorHandler decides what happens to a message whose handler failed
	 */
	public TopicConsumer(DelayListenerEndpoint endpoint, TopicStore store, PayloadConverter converter,
			ScheduledExecutorService scheduler, DelayQueueMetrics metrics, ObservationRegistry observationRegistry,
			@Nullable DelayQueueReceiverObservationConvention observationConvention, Executor handlerExecutor,
			int partition, int partitions, ClaimPause slowDown, DelayListenerErrorHandler errorHandler) {
		String topic = endpoint.topic();
		this.endpoint = endpoint;
		this.settings = endpoint.settings();
		this.scheduler = scheduler;
		this.handlers = new ConcurrencyLimitedExecutor<>(handlerExecutor, this.settings.concurrency(), this::refused);
		OutageLog outageLog = new OutageLog(topic, "listener", store);
		// With a group concurrency, an acknowledgement goes at once: it frees its group's
		// slot for the claim that follows it on the connection.
		this.acks = new AckBatcher(topic, store, scheduler,
				(this.settings.groupConcurrency() > 0) ? Duration.ZERO : AckBatcher.LINGER);
		Settlement settlement = new Settlement(topic, store, this.acks);
		this.leases = new LeaseKeeper(topic, store, this.settings.visibilityTimeout(), this.settings.maxHandlingTime(),
				settlement, scheduler, outageLog);
		this.deliveries = new DeliveryHandler(endpoint, converter, settlement, metrics, observationRegistry,
				observationConvention, this::slowDown, errorHandler);
		RateLimit configured = this.settings.rateLimit();
		RateLimit rateLimit = (configured != null) ? configured.share(partition, partitions) : null;
		// A rate-limited topic claims no prefetch: a delivery must start when it is
		// claimed; nor does one with a group concurrency: a message waiting for a handler
		// would hold its group's slot.
		boolean claimsForHandlersOnly = rateLimit != null || this.settings.groupConcurrency() > 0;
		this.prefetch = new AdaptivePrefetch(claimsForHandlersOnly ? 0 : this.settings.prefetch(),
				this.settings.concurrency(), this.settings.visibilityTimeout());
		int handlerSlots = this.settings.concurrency();
		Fetcher.Dispatcher dispatcher = this::dispatch;
		if (endpoint.isBatch()) {
			this.batchDeliveries = new BatchDeliveryHandler(endpoint, this.deliveries);
			this.batches = new BatchAssembler(topic, this.settings.maxBatchSize(), this.settings.batchTimeout(),
					scheduler, this::dispatchBatch);
			handlerSlots = this.settings.concurrency() * this.settings.maxBatchSize();
			dispatcher = this.batches;
		}
		else {
			this.batchDeliveries = null;
			this.batches = null;
		}
		this.claimPause = slowDown;
		this.fetcher = new Fetcher(topic, store, this.settings, handlerSlots, this.prefetch, rateLimit, slowDown,
				metrics, scheduler, dispatcher, this.leases, outageLog);
		this.slotsRecount = (this.settings.groupConcurrency() > 0) ? new GroupSlotsRecount(topic, store, scheduler)
				: null;
	}

	/**
	 * @return the topic
	 */
	public String topic() {
		return this.endpoint.topic();
	}

	/** Starts claiming. */
	public void start() {
		this.leases.start();
		this.fetcher.start();
		if (this.slotsRecount != null) {
			this.slotsRecount.start();
		}
		String batch = (this.batches != null)
				? ", batches of up to " + this.settings.maxBatchSize() + " within " + this.settings.batchTimeout() : "";
		RateLimit rateLimit = this.settings.rateLimit();
		String rate = (rateLimit != null) ? ", rate limit " + rateLimit.limit() + " per " + rateLimit.period() : "";
		if (this.settings.groupConcurrency() > 0) {
			rate += ", group concurrency " + this.settings.groupConcurrency();
		}
		logger.info("Listening to topic '" + topic() + "' with " + this.endpoint.describe() + " (concurrency "
				+ this.settings.concurrency() + ", max attempts " + this.settings.maxAttempts() + batch + rate + ")");
	}

	/**
	 * Stops claiming new messages; handlers already running go on. What is in hand and
	 * not started yet (claimed messages waiting for a handler, held until their due time,
	 * or gathered into a batch not yet sent) is handed back at once, and so is what a
	 * claim on its way, or one that failed, may have leased (see {@link Fetcher#stop()});
	 * none of these calls is waited for.
	 */
	public void stopClaiming() {
		this.stopping = true;
		if (this.slotsRecount != null) {
			this.slotsRecount.stop();
		}
		List<InFlightMessage> notStarted = new ArrayList<>(this.fetcher.stop());
		if (this.batches != null) {
			notStarted.addAll(this.batches.stop());
		}
		this.handlers.shutdown().forEach((call) -> notStarted.addAll(call.messages));
		this.notStartedHandedBack = this.leases.handBack(notStarted, HandBack.NOT_STARTED);
	}

	/**
	 * Lets running handlers finish until a deadline, then hands every message still
	 * unfinished back to the ready list and sends the acknowledgements still queued,
	 * without waiting for Redis. Call {@link #stopClaiming()} first.
	 * @param handlersDeadlineNanos the {@link System#nanoTime()} until which running
	 * handlers are waited for
	 * @param deadlineNanos the {@link System#nanoTime()} of the stop's deadline, past
	 * which no call is sent again
	 * @return completes once Redis has answered every hand-back (those sent when it
	 * stopped claiming too) and the acknowledgements, or they failed
	 */
	public CompletableFuture<Void> finishStopping(long handlersDeadlineNanos, long deadlineNanos) {
		try {
			this.handlers.awaitTermination(Math.max(0, handlersDeadlineNanos - System.nanoTime()),
					TimeUnit.NANOSECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
		CompletableFuture<Void> handedBack = handBackOrKeepUnfinished();
		this.handlers.shutdownNow();
		awaitInterruptedHandlers(deadlineNanos);
		return CompletableFuture.allOf(this.fetcher.claimHandedBack(), this.notStartedHandedBack, handedBack,
				this.acks.flushNow(deadlineNanos));
	}

	/**
	 * Hands the messages whose handlers still run back, so that another application takes
	 * them at once; but with a group concurrency, whose slot a hand-back would free while
	 * the handler may still run, leaves them leased until their leases end (a handler
	 * that ends meanwhile settles its message).
	 */
	private CompletableFuture<Void> handBackOrKeepUnfinished() {
		if (this.settings.groupConcurrency() == 0) {
			return this.leases.handBackUnfinished();
		}
		List<InFlightMessage> kept = this.leases.keepUnfinished();
		if (!kept.isEmpty()) {
			logger.warn("Topic '" + topic() + "': " + kept.size() + " message(s) whose handlers still run at the stop"
					+ " keep their leases, and their groups' slots, until the leases end (within "
					+ this.settings.visibilityTimeout() + "), when another application takes them again: "
					+ kept.stream().map(InFlightMessage::id).limit(10).toList());
		}
		return CompletableFuture.completedFuture(null);
	}

	/**
	 * Gives handlers just interrupted half the time left before the stop's deadline to
	 * return, so a stop whose handlers obey interrupts ends with none running; their
	 * messages were handed back already.
	 * @param deadlineNanos the {@link System#nanoTime()} of the stop's deadline
	 */
	private void awaitInterruptedHandlers(long deadlineNanos) {
		try {
			if (!this.handlers.awaitTermination(Math.max(0, (deadlineNanos - System.nanoTime()) / 2),
					TimeUnit.NANOSECONDS)) {
				logger.warn("Handlers of topic '" + topic() + "' still run after being interrupted at stop");
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	/**
	 * Marks the end of its stop: whoever finished stopping it is done waiting (see
	 * {@link #stopEnded()}).
	 */
	public void endStop() {
		this.stopEnded.complete(null);
	}

	/**
	 * @return completes once its stop has ended ({@link #endStop()}); the future may be
	 * completed on the thread that ends it
	 */
	public CompletableFuture<Void> stopEnded() {
		return this.stopEnded.thenApply((ended) -> ended);
	}

	/**
	 * @return how many handler calls are running or queued (a batch listener's call takes
	 * a batch)
	 */
	public int handlerCalls() {
		return this.handlers.tasks();
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

	/**
	 * A handler asked to slow down: nothing new is claimed for the pause, in any
	 * partition of the topic.
	 */
	private void slowDown(Duration pause) {
		this.claimPause.pauseFor(pause);
	}

	/** Claims at once, e.g. because a broker made messages ready. */
	public void wake() {
		this.fetcher.wake();
	}

	/**
	 * What a promote call of the partition's broker here read of its ready lists: while
	 * these reports say they are empty, the consumer's idle check claims nothing.
	 * @param sentNanos when the call was sent ({@link System#nanoTime()})
	 * @param waiting whether a ready list held an id after the call
	 */
	public void readyListsRead(long sentNanos, boolean waiting) {
		this.fetcher.readyListsRead(sentNanos, waiting);
	}

	private void dispatch(InFlightMessage message, boolean holdsSlot) {
		execute(new HandlerCall(List.of(message), holdsSlot ? 1 : 0, () -> this.deliveries.handle(message)));
	}

	private void dispatchBatch(List<InFlightMessage> batch, int slots) {
		BatchDeliveryHandler handler = Objects.requireNonNull(this.batchDeliveries);
		int taken = slots;
		if (this.settings.groupConcurrency() > 0 && slots > 0 && slots < this.settings.maxBatchSize()) {
			// With a group concurrency, a batch takes its handler whole: the room it
			// leaves is no free handler, and a message claimed for it would wait in
			// memory
			// for the handler, holding its group's slot.
			this.fetcher.slotsReserved(this.settings.maxBatchSize() - slots);
			taken = this.settings.maxBatchSize();
		}
		execute(new HandlerCall(batch, taken, () -> handler.handle(batch)));
	}

	private void execute(HandlerCall call) {
		try {
			this.handlers.execute(call);
		}
		catch (RejectedExecutionException ex) {
			// Stopping: not started, so handed back at once.
			this.leases.handBack(call.messages, HandBack.NOT_STARTED);
		}
	}

	/**
	 * The handler executor refused (or failed) to run a handler call: its messages go
	 * back at once, attempts unchanged, their slots are freed, and claims pause briefly,
	 * so that a full executor does not make the listener claim and hand back in a loop.
	 */
	private void refused(HandlerCall call, Throwable ex) {
		if (!this.stopping) {
			logger.warn("Topic '" + topic() + "' message" + ((call.messages.size() == 1) ? " " : "s ")
					+ new LeaseBatch(call.messages).describeIds() + ": the handler executor refused to run "
					+ "the listener (" + ex + "); handed back to be delivered again, attempts unchanged, and no "
					+ "new claim here for " + REFUSAL_PAUSE);
			this.claimPause.pauseFor(REFUSAL_PAUSE);
		}
		this.leases.handBack(call.messages, HandBack.REFUSED);
		if (call.slots > 0) {
			this.fetcher.slotsFreed(call.slots);
		}
	}

	/**
	 * One call of the listener, on the handler executor: a message, or a batch of them,
	 * and the handler slots they took.
	 */
	private final class HandlerCall implements Runnable {

		private final List<InFlightMessage> messages;

		private final int slots;

		private final Runnable handler;

		HandlerCall(List<InFlightMessage> messages, int slots, Runnable handler) {
			this.messages = messages;
			this.slots = slots;
			this.handler = handler;
		}

		@Override
		public void run() {
			long started = System.nanoTime();
			try {
				this.handler.run();
			}
			finally {
				TopicConsumer.this.prefetch.handled(this.messages.size(), System.nanoTime() - started);
				this.messages.forEach(TopicConsumer.this.leases::release);
				if (this.slots > 0) {
					TopicConsumer.this.fetcher.slotsFreed(this.slots);
				}
			}
		}

	}

}

package io.github.delayqueue.listener;

import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;

import io.github.delayqueue.convert.PayloadConversionException;
import io.github.delayqueue.convert.PayloadConverter;
import io.github.delayqueue.metrics.DelayQueueMetrics;
import io.github.delayqueue.metrics.HandlingOutcome;
import io.github.delayqueue.observation.DefaultDelayQueueReceiverObservationConvention;
import io.github.delayqueue.observation.DelayQueueObservation;
import io.github.delayqueue.observation.DelayQueueReceiverContext;
import io.github.delayqueue.store.ClaimResult;
import io.github.delayqueue.store.ClaimedMessage;
import io.github.delayqueue.store.CorruptMessageException;
import io.github.delayqueue.store.MessageFormat;
import io.github.delayqueue.store.OutageLog;
import io.github.delayqueue.store.RedisMessageStore;
import io.github.delayqueue.store.StoredMessage;
import io.github.delayqueue.store.TopicRepair;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.scheduling.concurrent.CustomizableThreadFactory;

/**
 * Consumes one topic for one {@link DelayListenerEndpoint}: a fetch thread claims as many ready
 * messages as there are idle handler threads plus the prefetch, waiting for a wake-up signal when
 * the topic has nothing ready. Messages the broker made ready ahead of their due time are held and
 * handed to a handler at their due time, by the Redis clock. Each handler thread invokes the
 * listener method and then acknowledges, retries or dead-letters the message. While a message is
 * held or handled, its lease is extended in the background (up to the maximum handling time), so a
 * long handler is never delivered twice at once.
 */
final class DelayListenerContainer {

	private static final Log logger = LogFactory.getLog(DelayListenerContainer.class);

	private static final long MAX_OUTAGE_BACKOFF_MILLIS = 5_000;

	private static final int STORE_CALL_TRIES = 3;

	/** Most messages held here until their due time. */
	private static final int MAX_HELD = 1000;

	/** Time left to send queued acknowledgements when stopping, even past the shutdown timeout. */
	private static final long ACK_GRACE_NANOS = TimeUnit.SECONDS.toNanos(2);

	private final DelayListenerEndpoint endpoint;

	private final RedisMessageStore store;

	private final PayloadConverter converter;

	private final ListenerSettings settings;

	private final String topic;

	private final Semaphore idleHandlers;

	private final OutageLog outageLog;

	private final Object signal = new Object();

	private boolean signalled;

	private volatile boolean running;

	private volatile @Nullable Thread fetchThread;

	private @Nullable ExecutorService handlers;

	private final ScheduledExecutorService scheduler;

	/** Messages claimed here and not settled; one id may be here twice after its lease expired. */
	private final Set<InFlightMessage> inFlight = ConcurrentHashMap.newKeySet();

	private final ReentrantLock claiming = new ReentrantLock();

	private final DelayQueueMetrics metrics;

	private final ObservationRegistry observationRegistry;

	private @Nullable ScheduledFuture<?> leaseExtension;

	private @Nullable AckBatcher acks;

	/** Runs the delivery of messages held until their due time. */
	private @Nullable ScheduledExecutorService holdTimer;

	/** Messages held until their due time. */
	private final AtomicInteger held = new AtomicInteger();

	/** Identifies this consumer in its claim requests. */
	private final String consumerId = RedisMessageStore.newToken();

	/** Claim requests sent so far; numbers the lease tokens. */
	private long claims;

	DelayListenerContainer(DelayListenerEndpoint endpoint, RedisMessageStore store, PayloadConverter converter,
			ScheduledExecutorService scheduler, DelayQueueMetrics metrics, ObservationRegistry observationRegistry) {
		this.endpoint = endpoint;
		this.metrics = metrics;
		this.observationRegistry = observationRegistry;
		this.scheduler = scheduler;
		this.store = store;
		this.converter = converter;
		this.settings = endpoint.settings();
		this.topic = endpoint.topic();
		this.idleHandlers = new Semaphore(this.settings.concurrency() + this.settings.prefetch());
		this.outageLog = new OutageLog("listener of topic '" + this.topic + "'");
	}

	void start() {
		this.running = true;
		this.acks = new AckBatcher(this.topic, this.store);
		this.holdTimer = Executors.newSingleThreadScheduledExecutor(daemonThreads("delay-queue-" + this.topic + "-timer-"));
		this.handlers = new ThreadPoolExecutor(this.settings.concurrency(), this.settings.concurrency(), 0,
				TimeUnit.MILLISECONDS, new LinkedBlockingQueue<>(),
				daemonThreads("delay-queue-" + this.topic + "-"));
		Thread thread = new Thread(this::fetchLoop, "delay-queue-" + this.topic + "-fetch");
		thread.setDaemon(true);
		this.fetchThread = thread;
		thread.start();
		long period = Math.max(1, this.settings.visibilityTimeout().toMillis() / 3);
		this.leaseExtension = this.scheduler.scheduleWithFixedDelay(this::extendLeases, period, period,
				TimeUnit.MILLISECONDS);
		logger.info("Listening to topic '" + this.topic + "' with " + this.endpoint.describe() + " (concurrency "
				+ this.settings.concurrency() + ", max attempts " + this.settings.maxAttempts() + ")");
	}

	/** Stops claiming new messages; handlers already running go on. */
	void stopClaiming() {
		this.running = false;
		wake();
	}

	/**
	 * Lets running handlers finish until the deadline, then hands every message still unfinished
	 * back to the ready list at once. Call {@link #stopClaiming()} first.
	 * @param deadlineNanos the {@link System#nanoTime()} by which to be done
	 */
	void finishStopping(long deadlineNanos) {
		try {
			// Wait for a claim in progress, so that what it claims is handed back below.
			if (this.claiming.tryLock(Math.max(0, deadlineNanos - System.nanoTime()), TimeUnit.NANOSECONDS)) {
				this.claiming.unlock();
			}
			if (this.holdTimer != null) {
				this.holdTimer.shutdownNow();
			}
			if (this.handlers != null) {
				this.handlers.shutdown();
				this.handlers.awaitTermination(Math.max(0, deadlineNanos - System.nanoTime()), TimeUnit.NANOSECONDS);
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
		if (this.leaseExtension != null) {
			this.leaseExtension.cancel(false);
		}
		handBackUnfinished();
		if (this.handlers != null) {
			this.handlers.shutdownNow();
		}
		if (this.acks != null) {
			this.acks.stop(Math.max(deadlineNanos, System.nanoTime() + ACK_GRACE_NANOS));
		}
	}

	/** @return how long stopping waits for running handlers */
	Duration shutdownTimeout() {
		return this.settings.shutdownTimeout();
	}

	private void handBackUnfinished() {
		for (InFlightMessage message : this.inFlight) {
			synchronized (message) {
				if (message.isSettled()) {
					continue;
				}
				message.settle();
				Boolean released = callStore(message, "hand back",
						() -> this.store.release(this.topic, message.id(), message.leaseToken()));
				if (Boolean.TRUE.equals(released)) {
					logger.warn("Topic '" + this.topic + "' message " + message.id()
							+ " unfinished at shutdown: handed back to be delivered again");
				}
			}
		}
	}

	private void extendLeases() {
		long maxHandlingNanos = this.settings.maxHandlingTime().toNanos();
		for (InFlightMessage message : this.inFlight) {
			synchronized (message) {
				if (message.isSettled()) {
					continue;
				}
				if (message.handlingNanos() > maxHandlingNanos) {
					if (message.reportOverdue()) {
						logger.warn("Topic '" + this.topic + "' message " + message.id() + " has been handled for more than "
								+ "delay-queue.listener.max-handling-time (" + this.settings.maxHandlingTime()
								+ "): its lease is no longer extended and it will be delivered again");
					}
					continue;
				}
				try {
					long extended = this.store.extendLease(this.topic, message.id(), message.leaseToken(),
							this.settings.visibilityTimeout());
					if (extended < 0) {
						message.settle();
						logger.warn("Topic '" + this.topic + "' message " + message.id()
								+ " lost its lease while being handled: it may be delivered again");
					}
				}
				catch (RuntimeException ex) {
					this.outageLog.failed(ex);
				}
			}
		}
	}

	boolean isRunning() {
		return this.running;
	}

	/** @return whether it is claiming: started, not stopped, and its fetch thread alive */
	boolean isAlive() {
		Thread thread = this.fetchThread;
		return this.running && thread != null && thread.isAlive();
	}

	/** Ends the current wait for ready messages, e.g. because a broker made some ready. */
	void wake() {
		synchronized (this.signal) {
			this.signalled = true;
			this.signal.notifyAll();
		}
	}

	private void fetchLoop() {
		long outageBackoff = 0;
		ClaimRequest request = null;
		while (this.running) {
			if (request == null) {
				int wanted = acquireIdleHandlers();
				if (wanted == 0) {
					continue;
				}
				request = new ClaimRequest(this.consumerId + "." + (++this.claims), wanted,
						Math.max(0, MAX_HELD - this.held.get()));
			}
			ClaimResult result;
			List<InFlightMessage> claimed;
			this.claiming.lock();
			try {
				if (!this.running) {
					this.idleHandlers.release(request.wanted());
					return;
				}
				result = this.store.claim(this.topic, this.consumerId, request.token(), request.wanted(),
						request.earlyLimit(), this.settings.visibilityTimeout());
				claimed = result.messages().stream().map(InFlightMessage::new).toList();
				this.inFlight.addAll(claimed);
				this.outageLog.succeeded();
				outageBackoff = 0;
			}
			catch (RuntimeException ex) {
				// The claim may have run and lost its reply: the same request (same token) is sent
				// again, and returns what it leased then. Its handler permits stay taken meanwhile.
				TopicRepair.failed(this.store, this.topic, ex, this.outageLog);
				outageBackoff = Math.min(MAX_OUTAGE_BACKOFF_MILLIS, Math.max(100, outageBackoff * 2));
				awaitSignal(outageBackoff);
				continue;
			}
			finally {
				this.claiming.unlock();
			}
			int wanted = request.wanted();
			request = null;
			int due = 0;
			for (InFlightMessage message : claimed) {
				long dueInMicros = message.claimed().dueInMicros();
				if (dueInMicros > 0) {
					hold(message, dueInMicros);
				}
				else {
					due++;
					dispatch(message, true);
				}
			}
			this.idleHandlers.release(wanted - due);
			if (due < wanted && !result.more()) {
				awaitSignal(this.settings.idleCheckInterval().toMillis());
			}
		}
		if (request != null) {
			this.idleHandlers.release(request.wanted());
		}
	}

	/**
	 * One claim request: sent again with the same token until it gets an answer.
	 */
	private record ClaimRequest(String token, int wanted, int earlyLimit) {
	}

	/**
	 * Keeps a message the broker made ready before its due time until then; it is in flight here
	 * meanwhile (leased, extended, handed back at shutdown) but takes no handler permit.
	 */
	private void hold(InFlightMessage message, long dueInMicros) {
		this.held.incrementAndGet();
		try {
			this.holdTimer.schedule(() -> {
				if (this.held.getAndDecrement() >= MAX_HELD) {
					wake();
				}
				dispatch(message, false);
			}, dueInMicros, TimeUnit.MICROSECONDS);
		}
		catch (RejectedExecutionException ex) {
			// Stopping: the message stays in flight here and is handed back by finishStopping.
			this.held.decrementAndGet();
		}
	}

	private void dispatch(InFlightMessage message, boolean holdsPermit) {
		try {
			this.handlers.execute(() -> {
				try {
					handle(message);
				}
				finally {
					this.inFlight.remove(message);
					if (holdsPermit) {
						this.idleHandlers.release();
					}
				}
			});
		}
		catch (RejectedExecutionException ex) {
			// Stopping: the message stays in flight here and is handed back by finishStopping.
			if (holdsPermit) {
				this.idleHandlers.release();
			}
		}
	}

	private int acquireIdleHandlers() {
		try {
			if (!this.idleHandlers.tryAcquire(this.settings.idleCheckInterval().toMillis(), TimeUnit.MILLISECONDS)) {
				return 0;
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			this.running = false;
			return 0;
		}
		return 1 + this.idleHandlers.drainPermits();
	}

	private void awaitSignal(long timeoutMillis) {
		synchronized (this.signal) {
			if (!this.signalled && this.running) {
				try {
					this.signal.wait(timeoutMillis);
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
					this.running = false;
				}
			}
			this.signalled = false;
		}
	}

	private void handle(InFlightMessage inFlight) {
		synchronized (inFlight) {
			if (inFlight.isSettled()) {
				// Handed back while it waited for a handler (the listener is stopping).
				return;
			}
		}
		ClaimedMessage claimed = inFlight.claimed();
		StoredMessage message;
		try {
			message = MessageFormat.decode(claimed.id(), claimed.stored());
		}
		catch (CorruptMessageException ex) {
			this.metrics.deadLetteredUnhandled(this.topic, "corrupt");
			deadLetter(inFlight, "Stored message is corrupt: " + ex.getMessage());
			return;
		}
		int attempt = message.attempts() + 1;
		Duration lateness = Duration.ofNanos(Math.max(0, inFlight.redisClockMicros() - message.dueAtMillis() * 1000) * 1000);
		if (this.settings.latePolicy() == LatePolicy.DEAD_LETTER && lateness.compareTo(this.settings.lateThreshold()) > 0) {
			this.metrics.deadLetteredUnhandled(this.topic, "late");
			deadLetter(inFlight, "Claimed " + lateness + " after its due time, later than the late threshold "
					+ this.settings.lateThreshold() + " of late policy " + LatePolicy.DEAD_LETTER);
			return;
		}
		Object argument;
		try {
			argument = this.endpoint.argument(message, lateness, this.converter);
		}
		catch (PayloadConversionException ex) {
			this.metrics.deadLetteredUnhandled(this.topic, "unreadable");
			deadLetter(inFlight, ex.getMessage());
			return;
		}
		this.metrics.delivered(this.topic, lateness);
		if (logger.isDebugEnabled()) {
			logger.debug("Topic '" + this.topic + "' message " + claimed.id() + " delivered, attempt " + attempt);
		}
		long start = System.nanoTime();
		Observation observation = DelayQueueObservation.RECEIVE.observation(null,
				DefaultDelayQueueReceiverObservationConvention.INSTANCE,
				() -> new DelayQueueReceiverContext(this.topic, claimed.id(), attempt, message.headers()),
				this.observationRegistry);
		try {
			observation.observeChecked(() -> this.endpoint.invoke(argument));
		}
		catch (Throwable ex) {
			HandlingOutcome outcome = (attempt >= this.settings.maxAttempts()) ? HandlingOutcome.DEAD
					: HandlingOutcome.RETRY;
			this.metrics.handled(this.topic, outcome, Duration.ofNanos(System.nanoTime() - start),
					ex.getClass().getSimpleName());
			failed(inFlight, attempt, ex);
			if (ex instanceof VirtualMachineError error) {
				throw error;
			}
			return;
		}
		this.metrics.handled(this.topic, HandlingOutcome.SUCCESS, Duration.ofNanos(System.nanoTime() - start), "none");
		synchronized (inFlight) {
			if (inFlight.isSettled()) {
				logger.warn("Topic '" + this.topic + "' message " + inFlight.id() + ": handler finished after its lease"
						+ " ended (handed back or lost), so it is not acknowledged and will be delivered again");
				return;
			}
			inFlight.settle();
		}
		this.acks.acknowledge(inFlight);
	}

	private void failed(InFlightMessage message, int attempt, Throwable ex) {
		if (attempt >= this.settings.maxAttempts()) {
			logger.warn("Topic '" + this.topic + "' message " + message.id() + " failed on its last attempt (" + attempt
					+ " of " + this.settings.maxAttempts() + "), moving it to the dead-letter set", ex);
			deadLetter(message, describe(ex));
			return;
		}
		Duration backoff = this.settings.backoff().after(attempt);
		logger.warn("Topic '" + this.topic + "' message " + message.id() + " failed on attempt " + attempt + " of "
				+ this.settings.maxAttempts() + ", retrying in " + backoff + ": " + ex);
		Long due = settle(message, "schedule a retry",
				() -> this.store.retry(this.topic, message.id(), message.leaseToken(), backoff));
		if (due != null && due < 0) {
			logger.warn("Topic '" + this.topic + "' message " + message.id()
					+ " could not be scheduled for a retry: its lease had expired");
		}
	}

	private void deadLetter(InFlightMessage message, String error) {
		logger.warn("Topic '" + this.topic + "' message " + message.id() + " dead-lettered: " + error);
		Boolean moved = settle(message, "dead-letter",
				() -> this.store.deadLetter(this.topic, message.id(), message.leaseToken(), error));
		if (Boolean.FALSE.equals(moved)) {
			logger.warn("Topic '" + this.topic + "' message " + message.id()
					+ " could not be dead-lettered: its lease had expired");
		}
	}

	/**
	 * Ends the lease with a store call, unless it already ended (handed back at shutdown, or lost).
	 */
	private <T> @Nullable T settle(InFlightMessage message, String action, Supplier<T> call) {
		synchronized (message) {
			if (message.isSettled()) {
				logger.warn("Topic '" + this.topic + "' message " + message.id() + ": handler finished after its lease"
						+ " ended (handed back or lost), so it is not acknowledged and will be delivered again");
				return null;
			}
			message.settle();
			return callStore(message, action, call);
		}
	}

	private <T> @Nullable T callStore(InFlightMessage message, String action, Supplier<T> call) {
		RuntimeException failure = null;
		for (int i = 0; i < STORE_CALL_TRIES; i++) {
			try {
				return call.get();
			}
			catch (RuntimeException ex) {
				failure = ex;
				if (i + 1 == STORE_CALL_TRIES) {
					break;
				}
				try {
					Thread.sleep(100L << i);
				}
				catch (InterruptedException interrupted) {
					Thread.currentThread().interrupt();
					break;
				}
			}
		}
		logger.warn("Topic '" + this.topic + "' message " + message.id() + ": could not " + action
				+ ", it is delivered again when its lease expires: " + failure);
		return null;
	}

	private static CustomizableThreadFactory daemonThreads(String prefix) {
		CustomizableThreadFactory factory = new CustomizableThreadFactory(prefix);
		factory.setDaemon(true);
		return factory;
	}

	private static String describe(Throwable ex) {
		String text = ex.getClass().getName() + ((ex.getMessage() != null) ? ": " + ex.getMessage() : "");
		return (text.length() > 2000) ? text.substring(0, 2000) : text;
	}

}

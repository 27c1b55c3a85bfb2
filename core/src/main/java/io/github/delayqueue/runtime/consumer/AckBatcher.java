package io.github.delayqueue.runtime.consumer;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.delayqueue.runtime.support.Replies;
import io.github.delayqueue.store.StoreCalls;
import io.github.delayqueue.store.TopicStore;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.util.backoff.BackOffExecution;

/**
 * Acknowledges the messages whose handlers returned, many per script call: handlers hand
 * their settled message over and go on, and a flush on the shared scheduler sends
 * whatever has gathered a few milliseconds after the first one came. This turns one round
 * trip per message into one per batch, under load and in a trickle alike, without a
 * thread of its own; no thread waits for Redis either: the replies continue on the
 * scheduler. A call that fails is sent again by {@link StoreCalls#RETRIES}, and once the
 * consumer stops, only while it can be done by the stop's deadline.
 */
final class AckBatcher {

	private static final Log logger = LogFactory.getLog(AckBatcher.class);

	private static final int MAX_BATCH = 200;

	/**
	 * How long a flush waits for more messages after the first, unless told otherwise;
	 * small next to any lease.
	 */
	static final Duration LINGER = Duration.ofMillis(5);

	private final String topic;

	private final TopicStore store;

	private final ScheduledExecutorService scheduler;

	private final long lingerMicros;

	private final ConcurrentLinkedQueue<InFlightMessage> pending = new ConcurrentLinkedQueue<>();

	private final AtomicBoolean flushScheduled = new AtomicBoolean();

	/** Messages queued and not yet answered by Redis. */
	private final AtomicInteger unanswered = new AtomicInteger();

	/** Each batch sent and not yet answered (or given up), by its answer. */
	private final Map<CompletableFuture<Void>, LeaseBatch> onTheirWay = new ConcurrentHashMap<>();

	/**
	 * The acknowledgements the stop sent again in full, by the answer of the batch they
	 * repeat: whichever of the two runs first acknowledges, the other finds no lease.
	 */
	private final Map<CompletableFuture<Void>, CompletableFuture<List<Boolean>>> sentAgain = new ConcurrentHashMap<>();

	/**
	 * Held while a batch is taken from the queue and added to {@link #onTheirWay}, so
	 * that {@link #flushNow(long)} sees every batch taken before it.
	 */
	private final Object taking = new Object();

	/**
	 * Set once stopping: the {@link System#nanoTime()} after which nothing is retried.
	 */
	private volatile @Nullable Long stopDeadlineNanos;

	AckBatcher(String topic, TopicStore store, ScheduledExecutorService scheduler) {
		this(topic, store, scheduler, LINGER);
	}

	/**
	 * Creates the acknowledgements of a consumer.
	 * @param linger how long a flush waits for more messages after the first: zero for a
	 * listener with a group concurrency, whose acknowledgement frees its group's slot for
	 * the claim that follows it
	 */
	AckBatcher(String topic, TopicStore store, ScheduledExecutorService scheduler, Duration linger) {
		this.topic = topic;
		this.store = store;
		this.scheduler = scheduler;
		this.lingerMicros = TimeUnit.NANOSECONDS.toMicros(linger.toNanos());
	}

	/**
	 * Queues a settled message for acknowledgement.
	 * @param message the message, settled by its handler
	 */
	void acknowledge(InFlightMessage message) {
		this.unanswered.incrementAndGet();
		this.pending.add(message);
		scheduleFlush(this.lingerMicros);
	}

	/**
	 * @return whether every queued acknowledgement was sent and answered (or given up)
	 */
	boolean isDone() {
		return this.unanswered.get() == 0;
	}

	/**
	 * Sends what is queued at once, without waiting for Redis; from now on a failed call
	 * is sent again only if that can be done before the deadline.
	 * @param deadlineNanos the {@link System#nanoTime()} of the stop's deadline
	 * @return completes once every acknowledgement queued so far is answered or given up
	 */
	CompletableFuture<Void> flushNow(long deadlineNanos) {
		this.stopDeadlineNanos = deadlineNanos;
		// Taken once the deadline is set: a batch that a flush sends from now on reads it
		// and goes in full; one it sent before is here.
		Map<CompletableFuture<Void>, LeaseBatch> sentBefore = Map.copyOf(this.onTheirWay);
		sendPending();
		// Sent by digest: if Redis lost its scripts, the NOSCRIPT may come back after the
		// connection closed, too late to send the script. Once more in full, which Redis
		// runs as it arrives; an acknowledgement made twice changes nothing, and the
		// batch's answer is read together with this one's (see answered).
		sentBefore.forEach((answered, batch) -> {
			CompletableFuture<List<Boolean>> again = new CompletableFuture<>();
			this.sentAgain.put(answered, again);
			sendAgain(batch, again);
		});
		synchronized (this.taking) {
			return CompletableFuture.allOf(this.onTheirWay.keySet().toArray(CompletableFuture[]::new));
		}
	}

	private void scheduleFlush(long delayMicros) {
		if (this.flushScheduled.compareAndSet(false, true)) {
			try {
				this.scheduler.schedule(this::flush, delayMicros, TimeUnit.MICROSECONDS);
			}
			catch (RejectedExecutionException ex) {
				// Stopping: flushNow sends what is left; once it has (a handler that
				// outlived the stop, whose message kept its lease), sent now.
				this.flushScheduled.set(false);
				if (this.stopDeadlineNanos != null) {
					sendPending();
				}
			}
		}
	}

	private void flush() {
		this.flushScheduled.set(false);
		sendPending();
	}

	/** Sends every queued message, in batches of up to {@value #MAX_BATCH}. */
	private void sendPending() {
		while (true) {
			List<InFlightMessage> batch = new ArrayList<>();
			CompletableFuture<Void> answered = new CompletableFuture<>();
			LeaseBatch leases;
			synchronized (this.taking) {
				InFlightMessage next;
				while (batch.size() < MAX_BATCH && (next = this.pending.poll()) != null) {
					batch.add(next);
				}
				if (batch.isEmpty()) {
					return;
				}
				leases = new LeaseBatch(batch);
				this.onTheirWay.put(answered, leases);
			}
			send(leases, StoreCalls.RETRIES.start(), answered);
		}
	}

	private void sendAgain(LeaseBatch batch, CompletableFuture<List<Boolean>> again) {
		try {
			this.store.ackAtStop(batch.ids(), batch.leaseTokens()).whenComplete((acked, failure) -> {
				if (acked != null) {
					again.complete(acked);
				}
				else {
					again.completeExceptionally(failure);
				}
			});
		}
		catch (RuntimeException ex) {
			again.completeExceptionally(ex);
		}
	}

	private void send(LeaseBatch batch, BackOffExecution retries, CompletableFuture<Void> answered) {
		// Once stopping, the connection may close before a NOSCRIPT could be answered.
		boolean stopping = this.stopDeadlineNanos != null;
		Replies.send(
				() -> stopping ? this.store.ackAtStop(batch.ids(), batch.leaseTokens())
						: this.store.ack(batch.ids(), batch.leaseTokens()),
				this.scheduler, (acked, failure) -> answered(batch, retries, answered, acked, failure),
				(acked, failure) -> answered(batch, null, answered, acked, failure));
	}

	/**
	 * @param retries what is left of the retries, or {@code null} if the call may not be
	 * sent again
	 */
	private void answered(LeaseBatch batch, @Nullable BackOffExecution retries, CompletableFuture<Void> answered,
			@Nullable List<Boolean> acked, @Nullable Throwable failure) {
		if (acked == null && retries != null && retried(batch, retries, answered)) {
			return;
		}
		CompletableFuture<List<Boolean>> again = this.sentAgain.remove(answered);
		if (again == null) {
			settled(batch, answered, acked, failure);
			return;
		}
		// Sent again in full at the stop: a message is acknowledged if either run did.
		again.whenComplete((ackedAgain, failureAgain) -> settled(batch, answered, either(acked, ackedAgain),
				(acked != null || ackedAgain != null) ? null : failure));
	}

	private void settled(LeaseBatch batch, CompletableFuture<Void> answered, @Nullable List<Boolean> acked,
			@Nullable Throwable failure) {
		if (acked != null) {
			report(batch, acked);
		}
		else {
			logger
				.warn("Topic '" + this.topic + "': no answer to the acknowledgement of messages " + batch.describeIds()
						+ " (" + failure + "); unless Redis ran it, they are delivered again when their lease expires");
		}
		this.unanswered.addAndGet(-batch.size());
		this.onTheirWay.remove(answered);
		answered.complete(null);
	}

	/**
	 * @return for each message, whether either reply acknowledged it; {@code null} if
	 * neither came
	 */
	private static @Nullable List<Boolean> either(@Nullable List<Boolean> acked, @Nullable List<Boolean> ackedAgain) {
		if (acked == null || ackedAgain == null) {
			return (acked != null) ? acked : ackedAgain;
		}
		List<Boolean> either = new ArrayList<>(acked.size());
		for (int m = 0; m < acked.size(); m++) {
			either.add(acked.get(m) || ackedAgain.get(m));
		}
		return either;
	}

	/**
	 * @return whether the batch is sent again, after the wait of the
	 * {@link StoreCalls#RETRIES} rule: not after the last try, nor past the stop's
	 * deadline
	 */
	private boolean retried(LeaseBatch batch, BackOffExecution retries, CompletableFuture<Void> answered) {
		long waitMillis = retries.nextBackOff();
		if (waitMillis == BackOffExecution.STOP) {
			return false;
		}
		long delayNanos = TimeUnit.MILLISECONDS.toNanos(waitMillis);
		Long deadline = this.stopDeadlineNanos;
		if (deadline != null && System.nanoTime() + delayNanos - deadline > 0) {
			return false;
		}
		try {
			this.scheduler.schedule(() -> send(batch, retries, answered), delayNanos, TimeUnit.NANOSECONDS);
			return true;
		}
		catch (RejectedExecutionException ex) {
			return false;
		}
	}

	private void report(LeaseBatch batch, List<Boolean> acked) {
		for (int m = 0; m < batch.size(); m++) {
			String id = batch.messages().get(m).id();
			if (!acked.get(m)) {
				logger.warn("Topic '" + this.topic + "' message " + id
						+ " handled, but its lease had expired: it may be delivered again");
			}
			else if (logger.isDebugEnabled()) {
				logger.debug("Topic '" + this.topic + "' message " + id + " acknowledged");
			}
		}
	}

}

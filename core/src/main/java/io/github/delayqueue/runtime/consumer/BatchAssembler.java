package io.github.delayqueue.runtime.consumer;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * Gathers the due messages the {@link Fetcher} hands over into batches for a batch
 * listener: a batch goes to the handlers when it has the maximum batch size, or when the
 * batch timeout has passed since its first message came. Messages waiting here stay
 * leased by the {@link LeaseKeeper}, which extends their leases and hands them back if
 * the consumer stops.
 */
final class BatchAssembler implements Fetcher.Dispatcher {

	private static final Log logger = LogFactory.getLog(BatchAssembler.class);

	private final String topic;

	private final int maxBatchSize;

	private final Duration batchTimeout;

	private final ScheduledExecutorService scheduler;

	private final BatchDispatcher dispatcher;

	/**
	 * The batch being gathered; guarded by this object's monitor like the fields below.
	 */
	private List<InFlightMessage> forming = new ArrayList<>();

	/** How many messages of the forming batch took a handler slot in the fetcher. */
	private int formingSlots;

	private @Nullable ScheduledFuture<?> timeout;

	private boolean stopped;

	/** Batches taken to be sent, in order. */
	private final ArrayDeque<Batch> toSend = new ArrayDeque<>();

	/** Whether a thread is sending the batches taken. */
	private boolean sending;

	/**
	 * Creates an assembler.
	 * @param topic the topic
	 * @param maxBatchSize most messages in a batch
	 * @param batchTimeout longest wait to fill a batch once its first message came
	 * @param scheduler the shared scheduler, for the batch timeout
	 * @param dispatcher what runs the finished batches
	 */
	BatchAssembler(String topic, int maxBatchSize, Duration batchTimeout, ScheduledExecutorService scheduler,
			BatchDispatcher dispatcher) {
		this.topic = topic;
		this.maxBatchSize = maxBatchSize;
		this.batchTimeout = batchTimeout;
		this.scheduler = scheduler;
		this.dispatcher = dispatcher;
	}

	@Override
	public void dispatch(InFlightMessage message, boolean holdsSlot) {
		synchronized (this) {
			if (this.stopped) {
				// The lease keeper hands it back.
				return;
			}
			this.forming.add(message);
			if (holdsSlot) {
				this.formingSlots++;
			}
			if (this.forming.size() == 1 && this.maxBatchSize > 1) {
				scheduleTimeout(this.forming);
			}
			if (this.forming.size() >= this.maxBatchSize) {
				this.toSend.add(take());
			}
		}
		sendInOrder();
	}

	/**
	 * Gathers no more, and gives up the batches taken and not sent yet and the batch
	 * being gathered, which no handler has started: the caller hands them back.
	 * @return the messages of those batches
	 */
	synchronized List<InFlightMessage> stop() {
		this.stopped = true;
		List<InFlightMessage> notSent = new ArrayList<>();
		this.toSend.forEach((batch) -> notSent.addAll(batch.messages()));
		this.toSend.clear();
		if (!this.forming.isEmpty()) {
			notSent.addAll(take().messages());
		}
		return notSent;
	}

	private void scheduleTimeout(List<InFlightMessage> batch) {
		try {
			this.timeout = this.scheduler.schedule(() -> timedOut(batch), this.batchTimeout.toNanos(),
					TimeUnit.NANOSECONDS);
		}
		catch (RejectedExecutionException ex) {
			// The runtime is stopping: the lease keeper hands the batch back.
			this.timeout = null;
		}
	}

	private void timedOut(List<InFlightMessage> batch) {
		synchronized (this) {
			if (this.stopped || this.forming != batch || batch.isEmpty()) {
				return;
			}
			if (logger.isDebugEnabled()) {
				logger.debug("Topic '" + this.topic + "': batch timeout " + this.batchTimeout + " passed, sending a"
						+ " batch of " + batch.size());
			}
			this.toSend.add(take());
		}
		sendInOrder();
	}

	/** Takes the batch being gathered; call while holding the monitor. */
	private Batch take() {
		if (this.timeout != null) {
			this.timeout.cancel(false);
			this.timeout = null;
		}
		Batch batch = new Batch(this.forming, this.formingSlots);
		this.forming = new ArrayList<>();
		this.formingSlots = 0;
		return batch;
	}

	/**
	 * Sends the batches taken, one at a time and in the order they were taken, outside
	 * the monitor: the handler executor may wait for room, and the stop needs the monitor
	 * meanwhile. One thread sends at a time; others leave their batches to it.
	 */
	private void sendInOrder() {
		synchronized (this) {
			if (this.sending) {
				return;
			}
			this.sending = true;
		}
		boolean done = false;
		try {
			while (true) {
				Batch next;
				synchronized (this) {
					next = this.stopped ? null : this.toSend.poll();
					if (next == null) {
						this.sending = false;
						done = true;
						return;
					}
				}
				this.dispatcher.dispatch(next.messages(), next.slots());
			}
		}
		finally {
			if (!done) {
				synchronized (this) {
					this.sending = false;
				}
			}
		}
	}

	/**
	 * A batch taken to be sent.
	 *
	 * @param messages its messages
	 * @param slots how many of them took a handler slot
	 */
	private record Batch(List<InFlightMessage> messages, int slots) {
	}

	/** Hands finished batches to handlers. */
	interface BatchDispatcher {

		/**
		 * Runs the batch's handler.
		 * @param batch the messages
		 * @param slots how many of them took a handler slot, to be freed when the handler
		 * is done
		 */
		void dispatch(List<InFlightMessage> batch, int slots);

	}

}

package io.github.delayqueue.runtime.consumer;

import java.time.Duration;
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
		Batch full;
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
			full = (this.forming.size() >= this.maxBatchSize) ? take() : null;
		}
		// Outside the monitor: the handler executor may wait for room, and the stop needs
		// the monitor meanwhile.
		send(full);
	}

	/**
	 * Gathers no more, and gives up the batch being gathered, which no handler has
	 * started: the caller hands it back.
	 * @return the messages of the batch being gathered
	 */
	synchronized List<InFlightMessage> stop() {
		this.stopped = true;
		return (this.forming.isEmpty()) ? List.of() : take().messages();
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
		Batch due;
		synchronized (this) {
			if (this.stopped || this.forming != batch || batch.isEmpty()) {
				return;
			}
			if (logger.isDebugEnabled()) {
				logger.debug("Topic '" + this.topic + "': batch timeout " + this.batchTimeout + " passed, sending a"
						+ " batch of " + batch.size());
			}
			due = take();
		}
		send(due);
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

	private void send(@Nullable Batch batch) {
		if (batch != null) {
			this.dispatcher.dispatch(batch.messages(), batch.slots());
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

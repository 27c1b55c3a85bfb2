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
	public synchronized void dispatch(InFlightMessage message, boolean holdsSlot) {
		if (this.stopped) {
			// The lease keeper hands it back.
			return;
		}
		this.forming.add(message);
		if (holdsSlot) {
			this.formingSlots++;
		}
		if (this.forming.size() >= this.maxBatchSize) {
			send();
		}
		else if (this.forming.size() == 1) {
			scheduleTimeout(this.forming);
		}
	}

	/**
	 * Sends the forming batch at once and gathers no more: what comes later stays with
	 * the lease keeper, which hands it back.
	 */
	synchronized void stop() {
		this.stopped = true;
		if (!this.forming.isEmpty()) {
			send();
		}
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

	private synchronized void timedOut(List<InFlightMessage> batch) {
		if (this.forming == batch && !batch.isEmpty()) {
			if (logger.isDebugEnabled()) {
				logger.debug("Topic '" + this.topic + "': batch timeout " + this.batchTimeout + " passed, sending a"
						+ " batch of " + batch.size());
			}
			send();
		}
	}

	private void send() {
		if (this.timeout != null) {
			this.timeout.cancel(false);
			this.timeout = null;
		}
		List<InFlightMessage> batch = this.forming;
		int slots = this.formingSlots;
		this.forming = new ArrayList<>();
		this.formingSlots = 0;
		this.dispatcher.dispatch(batch, slots);
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

package io.github.delayqueue.runtime.consumer;

import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

import io.github.delayqueue.runtime.support.OutageLog;
import io.github.delayqueue.store.TopicStore;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * Keeps the leases of the messages this consumer holds (held until due, or being
 * handled): extends each every third of the visibility timeout, up to the maximum
 * handling time, and at shutdown hands every unfinished one back. Tracks the messages by
 * identity: one id may be held twice after its lease expired.
 */
final class LeaseKeeper {

	private static final Log logger = LogFactory.getLog(LeaseKeeper.class);

	private final String topic;

	private final TopicStore store;

	private final Duration visibilityTimeout;

	private final Duration maxHandlingTime;

	private final Settlement settlement;

	private final OutageLog outageLog;

	private final Set<InFlightMessage> held = ConcurrentHashMap.newKeySet();

	private @Nullable ScheduledFuture<?> extension;

	LeaseKeeper(String topic, TopicStore store, Duration visibilityTimeout, Duration maxHandlingTime,
			Settlement settlement, OutageLog outageLog) {
		this.topic = topic;
		this.store = store;
		this.visibilityTimeout = visibilityTimeout;
		this.maxHandlingTime = maxHandlingTime;
		this.settlement = settlement;
		this.outageLog = outageLog;
	}

	void start(ScheduledExecutorService scheduler) {
		long period = Math.max(1, this.visibilityTimeout.toMillis() / 3);
		this.extension = scheduler.scheduleWithFixedDelay(this::extendLeases, period, period, TimeUnit.MILLISECONDS);
	}

	/** Starts keeping the lease of a message just claimed. */
	void keep(InFlightMessage message) {
		this.held.add(message);
	}

	/** Stops keeping the lease of a message whose handler is done with it. */
	void release(InFlightMessage message) {
		this.held.remove(message);
	}

	/**
	 * @return whether it holds no message: none claimed and not yet settled
	 */
	boolean holdsNone() {
		return this.held.isEmpty();
	}

	/** Stops extending leases and hands every message that is still unfinished back. */
	void handBackUnfinished() {
		if (this.extension != null) {
			this.extension.cancel(false);
		}
		this.held.forEach(this.settlement::handBack);
		this.held.clear();
	}

	private void extendLeases() {
		long maxHandlingNanos = this.maxHandlingTime.toNanos();
		for (InFlightMessage message : this.held) {
			synchronized (message) {
				if (message.isSettled()) {
					continue;
				}
				if (message.handlingNanos() > maxHandlingNanos) {
					if (message.reportOverdue()) {
						logger.warn("Topic '" + this.topic + "' message " + message.id()
								+ " has been handled for more than " + "delay-queue.listener.max-handling-time ("
								+ this.maxHandlingTime
								+ "): its lease is no longer extended and it will be delivered again");
					}
					continue;
				}
			}
			try {
				if (this.store.extendLease(message.id(), message.leaseToken(), this.visibilityTimeout) < 0) {
					this.settlement.leaseLost(message);
				}
				this.outageLog.succeeded();
			}
			catch (RuntimeException ex) {
				this.outageLog.failed(ex);
			}
		}
	}

}

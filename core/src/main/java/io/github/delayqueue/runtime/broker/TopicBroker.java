package io.github.delayqueue.runtime.broker;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

import io.github.delayqueue.metrics.DelayQueueMetrics;
import io.github.delayqueue.runtime.support.Nanoseconds;
import io.github.delayqueue.runtime.support.OutageLog;
import io.github.delayqueue.runtime.support.Replies;
import io.github.delayqueue.runtime.support.TopicRepair;
import io.github.delayqueue.store.LeaseExpiryResult;
import io.github.delayqueue.store.PromoteResult;
import io.github.delayqueue.store.TopicStore;
import io.github.delayqueue.store.StoreCalls;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.util.Assert;
import org.springframework.util.backoff.BackOffExecution;

/**
 * Moves one topic's due messages to its ready list and takes back messages whose lease
 * expired. With a {@link BrokerSettings#lookahead() lookahead}, messages move that much
 * before they are due, in batches, and listeners deliver each at its due time. It sleeps
 * until the next move is needed (by the time Redis reports, so local clocks never
 * matter), at most {@link BrokerSettings#maxSleep()}, and is woken at once by
 * {@link #wake()} when an earlier message is sent. Any number of brokers may run for the
 * same topic: each move is one atomic script.
 */
public final class TopicBroker {

	private static final Log logger = LogFactory.getLog(TopicBroker.class);

	private final String topic;

	private final TopicStore store;

	private final ScheduledExecutorService scheduler;

	private final BrokerSettings settings;

	private final long halfLookaheadMicros;

	private final int maxAttempts;

	private final Runnable onReady;

	private final ReadyListsListener onReadyListsRead;

	private final CountMarkerListener onCountMarkerRead;

	private final OutageLog outageLog;

	private final DelayQueueMetrics metrics;

	private final Object lock = new Object();

	private @Nullable ScheduledFuture<?> next;

	private long nextRunNanos;

	private boolean running;

	private boolean cycleInProgress;

	private boolean wakeDuringCycle;

	/** The waits while Redis does not answer; {@code null} while it does. */
	private @Nullable BackOffExecution outage;

	/**
	 * Creates a broker.
	 * @param topic the topic
	 * @param store the topic's store
	 * @param scheduler runs the broker's cycles
	 * @param settings the broker settings
	 * @param maxAttempts the topic's maximum attempts, for messages whose lease expires
	 * @param onReady called after messages were made ready, to wake local consumers
	 * @param onReadyListsRead called, on the scheduler, after each promote call with
	 * whether the partition's ready lists held an id, so that a local consumer need not
	 * look itself; must return at once
	 * @param onCountMarkerRead called, on the scheduler, after each promote call with
	 * whether the partition's count marker has the number of partitions the broker's
	 * store names ({@code false}: the topic's count changed, or a change of it is on its
	 * way); must return at once
	 * @param metrics where expired leases are reported
	 */
	public TopicBroker(String topic, TopicStore store, ScheduledExecutorService scheduler, BrokerSettings settings,
			int maxAttempts, Runnable onReady, ReadyListsListener onReadyListsRead,
			CountMarkerListener onCountMarkerRead, DelayQueueMetrics metrics) {
		this.topic = topic;
		this.store = store;
		this.scheduler = scheduler;
		this.settings = settings;
		this.halfLookaheadMicros = Nanoseconds.of(settings.lookahead()) / 2000;
		this.maxAttempts = maxAttempts;
		this.onReady = onReady;
		this.onReadyListsRead = onReadyListsRead;
		this.onCountMarkerRead = onCountMarkerRead;
		this.metrics = metrics;
		this.outageLog = new OutageLog(topic, "broker", store);
	}

	/**
	 * @return the topic
	 */
	public String topic() {
		return this.topic;
	}

	/** Starts the broker: its first cycle runs at once. */
	public void start() {
		synchronized (this.lock) {
			this.running = true;
			scheduleIn(0);
		}
	}

	/** Stops the broker; a cycle in progress finishes. */
	public void stop() {
		synchronized (this.lock) {
			this.running = false;
			if (this.next != null) {
				this.next.cancel(false);
				this.next = null;
			}
		}
	}

	/**
	 * Runs a cycle as soon as possible, e.g. because a message earlier than the known
	 * next one was sent.
	 */
	public void wake() {
		synchronized (this.lock) {
			if (this.cycleInProgress) {
				this.wakeDuringCycle = true;
			}
			else {
				scheduleIn(0);
			}
		}
	}

	private void cycle() {
		synchronized (this.lock) {
			if (!this.running) {
				return;
			}
			if (this.cycleInProgress) {
				this.wakeDuringCycle = true;
				return;
			}
			this.next = null;
			this.cycleInProgress = true;
			this.wakeDuringCycle = false;
		}
		promote();
	}

	/**
	 * Sends one promote call and returns at once; the reply is handled on the scheduler,
	 * so that the brokers of many topics due at the same instant share round trips
	 * instead of each holding a scheduler thread while it waits.
	 */
	private void promote() {
		long sentNanos = System.nanoTime();
		Replies.send(() -> this.store.promote(this.settings.batchSize(), this.settings.lookahead()), this.scheduler,
				(promoted, failure) -> promoted(sentNanos, promoted, failure), (promoted, failure) -> abandonCycle());
	}

	/**
	 * The scheduler refused the reply's task: it is shutting down, and so is this broker.
	 */
	private void abandonCycle() {
		synchronized (this.lock) {
			this.cycleInProgress = false;
		}
	}

	private void promoted(long sentNanos, @Nullable PromoteResult promoted, @Nullable Throwable failure) {
		long sleepMicros;
		try {
			if (failure != null) {
				throw Replies.rethrow(failure);
			}
			Assert.state(promoted != null, "A promote call returned no result");
			this.onCountMarkerRead.markerRead(promoted.countAgreed());
			if (promoted.moved() > 0) {
				if (logger.isDebugEnabled()) {
					logger.debug("Topic '" + this.topic + "': " + promoted.moved() + " due messages made ready");
				}
				this.onReady.run();
			}
			this.onReadyListsRead.readyListsRead(sentNanos, promoted.readyWaiting());
			if (promoted.moved() == this.settings.batchSize()) {
				promote();
				return;
			}
			sleepMicros = sleepAfter(promoted);
			this.outage = null;
			this.outageLog.succeeded();
		}
		catch (RuntimeException ex) {
			TopicRepair.failed(this.store, ex, this.outageLog);
			if (this.outage == null) {
				this.outage = StoreCalls.OUTAGE.start();
			}
			sleepMicros = TimeUnit.MILLISECONDS.toMicros(this.outage.nextBackOff());
		}
		endCycle(sleepMicros);
	}

	private void endCycle(long sleepMicros) {
		synchronized (this.lock) {
			this.cycleInProgress = false;
			if (this.running) {
				scheduleIn(this.wakeDuringCycle ? 0 : sleepMicros);
			}
		}
	}

	/**
	 * @return microseconds until the next cycle is needed, after the last promote call of
	 * a cycle
	 */
	private long sleepAfter(PromoteResult promoted) {
		long maxSleep = Nanoseconds.of(this.settings.maxSleep()) / 1000;
		// With a lookahead, wake when the next message is half the lookahead inside the
		// window, so
		// each call moves about half a lookahead's worth of messages, each ahead of its
		// due time.
		Duration nextDueIn = promoted.nextDueIn();
		long sleep = (nextDueIn != null) ? Math.min(Math.max(0, micros(nextDueIn) - this.halfLookaheadMicros), maxSleep)
				: maxSleep;
		Duration nextLeaseEndIn = promoted.nextLeaseEndIn();
		if (nextLeaseEndIn != null && nextLeaseEndIn.isZero()) {
			sleep = Math.min(sleep, expireLeases(maxSleep));
		}
		else if (nextLeaseEndIn != null) {
			sleep = Math.min(sleep, micros(nextLeaseEndIn));
		}
		return sleep;
	}

	/**
	 * @return microseconds until the next lease ends, at most {@code maxSleep}
	 */
	private long expireLeases(long maxSleep) {
		LeaseExpiryResult expired = this.store.expireLeases(this.settings.batchSize(), this.maxAttempts);
		if (expired.expired() > 0) {
			this.metrics.leasesExpired(this.topic, expired.requeued().size(), expired.deadLettered().size());
		}
		if (!expired.requeued().isEmpty()) {
			logger.warn("Topic '" + this.topic + "': lease expired (consumer died or too slow), delivering again: "
					+ sample(expired.requeued()));
			this.onReady.run();
		}
		if (!expired.deadLettered().isEmpty()) {
			logger.warn("Topic '" + this.topic + "': lease expired on the last attempt, dead-lettered: "
					+ sample(expired.deadLettered()));
		}
		if (expired.expired() == this.settings.batchSize()) {
			return 0;
		}
		Duration nextExpiryIn = expired.nextExpiryIn();
		return (nextExpiryIn != null) ? Math.min(micros(nextExpiryIn), maxSleep) : maxSleep;
	}

	private static long micros(Duration duration) {
		return TimeUnit.NANOSECONDS.toMicros(Nanoseconds.of(duration));
	}

	/** Hears what each promote call read of the partition's ready lists. */
	@FunctionalInterface
	public interface ReadyListsListener {

		/**
		 * A promote call read the partition's ready lists.
		 * @param sentNanos the {@link System#nanoTime()} at which the call was sent:
		 * Redis ran it after every call answered before then
		 * @param waiting whether a ready list held an id after the call
		 */
		void readyListsRead(long sentNanos, boolean waiting);

	}

	/** Hears what each promote call read of the partition's count marker. */
	@FunctionalInterface
	public interface CountMarkerListener {

		/**
		 * A promote call read the partition's count marker.
		 * @param agreed whether it has the number of partitions the broker's store names
		 */
		void markerRead(boolean agreed);

	}

	private static String sample(List<String> ids) {
		return (ids.size() <= 20) ? ids.toString() : ids.subList(0, 20) + " and " + (ids.size() - 20) + " more";
	}

	private void scheduleIn(long delayMicros) {
		long runAt = System.nanoTime() + TimeUnit.MICROSECONDS.toNanos(delayMicros);
		if (this.next != null) {
			if (runAt - this.nextRunNanos >= 0) {
				return;
			}
			this.next.cancel(false);
		}
		this.nextRunNanos = runAt;
		this.next = this.scheduler.schedule(this::cycle, delayMicros, TimeUnit.MICROSECONDS);
	}

}

package io.github.delayqueue.runtime.consumer;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;

import io.github.delayqueue.listener.ListenerSettings;
import io.github.delayqueue.metrics.DelayQueueMetrics;
import io.github.delayqueue.runtime.support.OutageLog;
import io.github.delayqueue.store.LeaseTokens;
import io.github.delayqueue.store.RateLimit;
import io.github.delayqueue.store.TopicStore;
import org.jspecify.annotations.Nullable;

/**
 * Claims a topic's ready messages for its consumer, as many as it has free slots (see
 * {@link ClaimSlots}), and hands them over: a due message at once, one the broker made
 * ready ahead of its due time (the lookahead) when it falls due by the Redis clock,
 * holding it meanwhile without a slot (see {@link DispatchQueue} and
 * {@link EarlyMessages}). It has no thread of its own: the {@link ClaimLoop} sends the
 * claims from the shared scheduler. When it stops, a claim whose outcome is not known
 * (failed, or still on its way) is handed back (see {@link UnansweredClaim}), and what is
 * held or not dispatched yet is given up to the caller. For a rate-limited topic it
 * claims only for free handler slots and nothing early, so that a delivery starts when
 * its claim takes its place in the limit's window.
 */
final class Fetcher {

	private final UnansweredClaim unanswered;

	private final DispatchQueue dispatchQueue;

	private final ClaimLoop claims;

	private volatile boolean running;

	/**
	 * Creates a fetcher.
	 * @param handlerSlots how many messages its handlers take at once: the concurrency
	 * (times the maximum batch size for a batch listener)
	 * @param prefetch how many claimed messages may wait for a free handler besides
	 * those, at the moment of each claim
	 * @param rateLimit the rate limit of the topic (this partition's share), or
	 * {@code null} for none
	 * @param slowDown the topic's pause of claims asked by its handlers, shared by its
	 * partitions
	 * @param metrics where claims held back by the rate limit are counted
	 */
	Fetcher(String topic, TopicStore store, ListenerSettings settings, int handlerSlots, AdaptivePrefetch prefetch,
			@Nullable RateLimit rateLimit, ClaimPause slowDown, DelayQueueMetrics metrics,
			ScheduledExecutorService scheduler, Dispatcher dispatcher, LeaseKeeper leases, OutageLog outageLog) {
		String consumerId = LeaseTokens.newToken();
		this.unanswered = new UnansweredClaim(topic, consumerId, store, settings.visibilityTimeout(), leases,
				this::isRunning);
		this.dispatchQueue = new DispatchQueue(topic, dispatcher, leases, scheduler, this::isRunning, this::slotsFreed,
				this::wake);
		// Nothing early for a rate limit or a group concurrency: a delivery starts when
		// it
		// is claimed.
		ClaimSlots slots = new ClaimSlots(handlerSlots, prefetch, rateLimit != null || settings.groupConcurrency() > 0,
				this.dispatchQueue::heldCount);
		this.claims = new ClaimLoop(topic, consumerId, store, settings, rateLimit, metrics, scheduler, leases,
				outageLog, this::isRunning, slots, this.unanswered, slowDown, this.dispatchQueue);
	}

	void start() {
		this.running = true;
		this.claims.request();
	}

	/**
	 * Stops claiming. A claim whose outcome is not known (on its way, or failed and to be
	 * sent again) is handed back at once, without waiting (see {@link UnansweredClaim}).
	 * @return the messages held until their due time or taken and not yet dispatched, now
	 * given up: the caller hands them back
	 */
	List<InFlightMessage> stop() {
		this.running = false;
		this.unanswered.handBackAtStop();
		this.claims.stop();
		return this.dispatchQueue.takeBack();
	}

	/**
	 * @return completes once Redis has answered the hand-back of a claim unanswered at
	 * the stop (or it failed); completed if there was none
	 */
	CompletableFuture<Void> claimHandedBack() {
		return this.unanswered.handedBack();
	}

	/**
	 * @return whether a claim was sent and its reply is not yet handled
	 */
	boolean isClaiming() {
		return this.unanswered.isClaiming();
	}

	/**
	 * @return whether it is claiming: started, not stopped, and not stopped by an error
	 */
	boolean isAlive() {
		return this.running && !this.claims.isDead();
	}

	/**
	 * Something may have become claimable: a wake-up signal, or messages made ready here.
	 */
	void wake() {
		this.claims.request();
	}

	/**
	 * What a promote call of the partition's broker read of its ready lists.
	 * @see ClaimLoop#readyListsRead(long, boolean)
	 */
	void readyListsRead(long sentNanos, boolean waiting) {
		this.claims.readyListsRead(sentNanos, waiting);
	}

	/**
	 * A handler finished messages that held slots.
	 * @param count how many
	 */
	void slotsFreed(int count) {
		this.claims.slotsFreed(count);
	}

	/**
	 * A handler takes slots that no message of it holds (a batch listener's batch that
	 * does not fill the handler), freed with {@link #slotsFreed} when it is done.
	 * @param count how many
	 */
	void slotsReserved(int count) {
		this.claims.slotsReserved(count);
	}

	private boolean isRunning() {
		return this.running;
	}

	/** Hands claimed messages to handlers. */
	interface Dispatcher {

		/**
		 * Runs the message's handler.
		 * @param message the message
		 * @param holdsSlot whether it took a handler slot, to be freed when its handler
		 * is done
		 */
		void dispatch(InFlightMessage message, boolean holdsSlot);

	}

}

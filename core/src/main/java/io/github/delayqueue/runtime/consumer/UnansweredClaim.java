package io.github.delayqueue.runtime.consumer;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.BooleanSupplier;

import io.github.delayqueue.runtime.consumer.Settlement.HandBack;
import io.github.delayqueue.store.ClaimResult;
import io.github.delayqueue.store.TopicStore;
import io.github.delayqueue.store.WriteGate;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * The claim whose outcome is not known: sent and not yet answered, or failed and to be
 * sent again. At the stop it is handed back at once with {@code release_claim.lua},
 * without waiting: on the connection the claim went out on (the shared one of Spring Data
 * Redis' Lettuce, by default), Redis runs it after the claim, so that whatever the claim
 * leased is ready again even if its reply never reaches this application (say the
 * connection closes once the listeners stopped); the claim's reply, if it comes, is
 * handed back as well, which is harmless. On a connection of its own (no shared native
 * connection, a pool, a Cluster re-routing the claim), the hand-back may run before the
 * claim: it then records the claim as having leased nothing, so that the claim leases
 * nothing when it runs. Its claims are written through it ({@link WriteGate}): none after
 * the stop wrote the hand-back. Thread-safe.
 */
final class UnansweredClaim implements WriteGate {

	/** Logs as the fetcher, as all of its parts do: one category to set. */
	private static final Log logger = LogFactory.getLog(Fetcher.class);

	private final String topic;

	private final String consumerId;

	private final TopicStore store;

	private final Duration visibilityTimeout;

	private final LeaseKeeper leases;

	private final BooleanSupplier running;

	/**
	 * Guards {@link #inProgress}, {@link #unanswered} and the decision to send a claim
	 * while running.
	 */
	private final Object lock = new Object();

	/**
	 * Orders the writes of claims and of the stop's hand-back; guards
	 * {@link #writesClosed}.
	 */
	private final Object writes = new Object();

	/** Whether the stop has written the hand-back: no claim is written any more. */
	private boolean writesClosed;

	/**
	 * Completes once the reply of the claim on its way is handled.
	 */
	private @Nullable CompletableFuture<Void> inProgress;

	/**
	 * The claim whose outcome is not known; {@code null} once answered. At the stop it is
	 * handed back, and its reply, if one comes, is not taken.
	 */
	private @Nullable ClaimRequest unanswered;

	/** The hand-back, at the stop, of what the claim unanswered then may have leased. */
	private volatile CompletableFuture<Void> handedBack = CompletableFuture.completedFuture(null);

	/**
	 * Creates the record of a consumer's claims.
	 * @param consumerId the consumer the claims are sent for
	 * @param running whether the fetcher runs
	 */
	UnansweredClaim(String topic, String consumerId, TopicStore store, Duration visibilityTimeout, LeaseKeeper leases,
			BooleanSupplier running) {
		this.topic = topic;
		this.consumerId = consumerId;
		this.store = store;
		this.visibilityTimeout = visibilityTimeout;
		this.leases = leases;
		this.running = running;
	}

	/**
	 * A claim is about to be sent, unless the fetcher stopped.
	 * @param inProgress completes once its reply is handled
	 * @return whether it may be sent: it is now the claim unanswered
	 */
	boolean sending(ClaimRequest request, CompletableFuture<Void> inProgress) {
		synchronized (this.lock) {
			if (!this.running.getAsBoolean()) {
				return false;
			}
			this.inProgress = inProgress;
			this.unanswered = request;
			return true;
		}
	}

	/**
	 * Writes a claim, or its script in full after {@code NOSCRIPT}, unless the stop has
	 * written the hand-back of the claim unanswered then: Redis runs the writes of the
	 * shared connection in order, so a claim never runs after its hand-back.
	 */
	@Override
	public boolean write(Runnable write) {
		synchronized (this.writes) {
			if (this.writesClosed) {
				return false;
			}
			write.run();
			return true;
		}
	}

	/**
	 * A claim's reply came, or its failure.
	 * @param result the reply, or {@code null} if it failed
	 * @return whether the stop took the claim over: its reply is not taken; else, on a
	 * reply, the claim is no longer unanswered
	 */
	boolean handedBackAtStop(ClaimRequest request, @Nullable ClaimResult result) {
		synchronized (this.lock) {
			if (this.unanswered != request) {
				return true;
			}
			if (result != null) {
				this.unanswered = null;
			}
			return false;
		}
	}

	/** Hands back what the reply of a claim handed back at the stop names. */
	void handBackLate(@Nullable ClaimResult result) {
		if (result != null && !result.messages().isEmpty()) {
			this.leases.handBack(InFlightMessage.of(result), HandBack.CLAIMED_AFTER_STOP);
		}
	}

	/**
	 * At the stop, once the fetcher no longer runs: closes the writes of claims, and
	 * hands back the claim unanswered, if any. Closed before the hand-back is written: a
	 * claim written from now on, or sent again because Redis lost its script, would come
	 * after it.
	 */
	void handBackAtStop() {
		synchronized (this.writes) {
			this.writesClosed = true;
			ClaimRequest unknown;
			synchronized (this.lock) {
				unknown = this.unanswered;
				this.unanswered = null;
			}
			if (unknown != null) {
				this.handedBack = handBack(unknown);
			}
		}
	}

	/**
	 * @return whether a claim was sent and its reply is not yet handled
	 */
	boolean isClaiming() {
		synchronized (this.lock) {
			return this.inProgress != null && !this.inProgress.isDone();
		}
	}

	/**
	 * @return completes once Redis has answered the hand-back of a claim unanswered at
	 * the stop (or it failed); completed if there was none
	 */
	CompletableFuture<Void> handedBack() {
		return this.handedBack;
	}

	private CompletableFuture<Void> handBack(ClaimRequest claim) {
		CompletableFuture<List<String>> sent;
		try {
			sent = this.store.releaseClaim(this.consumerId, claim.token(), this.visibilityTimeout);
		}
		catch (RuntimeException ex) {
			sent = CompletableFuture.failedFuture(ex);
		}
		return sent.handle((ids, failure) -> {
			if (ids == null) {
				Throwable cause = (failure instanceof CompletionException) ? failure.getCause() : failure;
				logger.warn("Topic '" + this.topic + "': no answer to the hand-back of a claim unanswered when the "
						+ "listener stopped (" + cause + "); unless Redis ran it, what the claim leased is "
						+ "delivered again when its lease expires");
			}
			else if (!ids.isEmpty() && logger.isDebugEnabled()) {
				logger.debug("Topic '" + this.topic + "': " + ids.size() + " messages of a claim unanswered when "
						+ "the listener stopped handed back, not delivered: " + ids);
			}
			return null;
		});
	}

}

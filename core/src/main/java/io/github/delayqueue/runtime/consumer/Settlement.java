package io.github.delayqueue.runtime.consumer;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import java.util.function.Supplier;

import io.github.delayqueue.store.GroupWait;
import io.github.delayqueue.store.MessageStore;
import io.github.delayqueue.store.StoreCalls;
import io.github.delayqueue.store.TopicStore;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.util.backoff.BackOffExecution;

/**
 * Ends the lease of a message this consumer holds, once: acknowledges it (through the
 * {@link AckBatcher}), schedules its retry, dead-letters it, or hands it back unfinished.
 * The only caller of {@link InFlightMessage#settle()}: whichever end comes first wins,
 * and a later one (a handler that finishes after its message was handed back or its lease
 * lost) is refused with a WARN. An outcome is reported (logged and counted, by the
 * caller's {@code report}) only once its end has won, so that a handler cut off by a stop
 * is not reported as retried or dead-lettered while its message is in fact ready again.
 */
final class Settlement {

	private static final Log logger = LogFactory.getLog(Settlement.class);

	private final String topic;

	private final TopicStore store;

	private final AckBatcher acks;

	Settlement(String topic, TopicStore store, AckBatcher acks) {
		this.topic = topic;
		this.store = store;
		this.acks = acks;
	}

	/**
	 * The handler returned normally: the message is acknowledged with the next batch.
	 * @param report reports the outcome, if this end wins
	 */
	void acknowledge(InFlightMessage message, Runnable report) {
		synchronized (message) {
			// Queued while settling, so that a stop, which hands back the unsettled
			// messages and then sends the queued acknowledgements, sees it either way.
			if (!settle(message)) {
				return;
			}
			this.acks.acknowledge(message);
		}
		report.run();
	}

	/**
	 * The handler failed: the message is scheduled again after the backoff, attempts + 1,
	 * with the error for its next delivery; a message of a group may hold its group back.
	 * @param report reports the outcome, if this end wins, before Redis is asked
	 */
	void retry(InFlightMessage message, Duration backoff, String error, GroupWait groupWait, Runnable report) {
		if (!settle(message)) {
			return;
		}
		report.run();
		Long due = call(message, "schedule a retry",
				() -> this.store.retry(message.id(), message.leaseToken(), backoff, error, groupWait));
		if (due != null && due < 0) {
			logger.warn("Topic '" + this.topic + "' message " + message.id()
					+ " could not be scheduled for a retry: its lease had expired");
		}
	}

	/**
	 * The handler asked to slow down: the message is scheduled again after the pause,
	 * attempts unchanged; a message of a group holds its group back.
	 * @param report reports the outcome, if this end wins, before Redis is asked
	 */
	void postpone(InFlightMessage message, Duration pause, GroupWait groupWait, Runnable report) {
		if (!settle(message)) {
			return;
		}
		report.run();
		Long due = call(message, "postpone",
				() -> this.store.postpone(message.id(), message.leaseToken(), pause, groupWait));
		if (due != null && due < 0) {
			logger.warn("Topic '" + this.topic + "' message " + message.id()
					+ " could not be postponed: its lease had expired");
		}
	}

	/**
	 * The message failed for good: it moves to the dead-letter set with the error.
	 * @param report reports the outcome, if this end wins, before Redis is asked
	 */
	void deadLetter(InFlightMessage message, String error, Runnable report) {
		if (!settle(message)) {
			return;
		}
		report.run();
		logger.warn("Topic '" + this.topic + "' message " + message.id() + " dead-lettered: " + error);
		Boolean moved = call(message, "dead-letter",
				() -> this.store.deadLetter(message.id(), message.leaseToken(), error));
		if (Boolean.FALSE.equals(moved)) {
			logger.warn("Topic '" + this.topic + "' message " + message.id()
					+ " could not be dead-lettered: its lease had expired");
		}
	}

	/**
	 * Messages go back unhandled or unfinished: each is ready again at once, attempts
	 * unchanged. Sends one call for every {@value MessageStore#MAX_IDS_PER_CALL}
	 * messages, all before any reply, and waits for none, so that it may run where
	 * nothing may block; nothing is sent again: a message not handed back is delivered
	 * again when its lease expires. A message whose lease was lost meanwhile (handed back
	 * by another call, say) is left out of the log.
	 * @param messages the messages; those already settled are left out
	 * @param why why they go back, for the log
	 * @return completes once Redis has answered every call, or it failed
	 */
	CompletableFuture<Void> handBack(Collection<InFlightMessage> messages, HandBack why) {
		List<InFlightMessage> unsettled = new ArrayList<>(messages.size());
		for (InFlightMessage message : messages) {
			synchronized (message) {
				if (!message.isSettled()) {
					message.settle();
					unsettled.add(message);
				}
			}
		}
		return CompletableFuture.allOf(LeaseBatch.of(unsettled, MessageStore.MAX_IDS_PER_CALL)
			.stream()
			.map((batch) -> handBack(batch, why))
			.toArray(CompletableFuture[]::new));
	}

	private CompletableFuture<Void> handBack(LeaseBatch batch, HandBack why) {
		AtomicBoolean unanswered = new AtomicBoolean();
		return release(batch, StoreCalls.RETRIES.start(), unanswered).handle((released, failure) -> {
			if (released != null) {
				List<InFlightMessage> handedBack = new ArrayList<>();
				List<InFlightMessage> maybeHandedBack = new ArrayList<>();
				for (int m = 0; m < batch.size(); m++) {
					if (released.get(m)) {
						handedBack.add(batch.messages().get(m));
					}
					else if (unanswered.get()) {
						// An earlier try got no answer: Redis may have run it.
						maybeHandedBack.add(batch.messages().get(m));
					}
				}
				if (!handedBack.isEmpty()) {
					log(why, handedBack.size() + " messages " + why.description
							+ ", handed back to be delivered again: " + new LeaseBatch(handedBack).describeIds());
				}
				if (!maybeHandedBack.isEmpty()) {
					log(why, maybeHandedBack.size() + " messages " + why.description + ": a try of their hand-back got "
							+ "no answer and the next found their leases gone, so that try handed them back (unless "
							+ "their lease had expired), to be delivered again: "
							+ new LeaseBatch(maybeHandedBack).describeIds());
				}
			}
			else {
				Throwable cause = (failure instanceof CompletionException) ? failure.getCause() : failure;
				// Sent in full: Redis may have run it, and only its reply was lost.
				logger.warn("Topic '" + this.topic + "': no answer to the hand-back of " + batch.size() + " messages "
						+ why.description + " (" + cause + "); unless Redis ran it, they are delivered again when "
						+ "their lease expires: " + batch.describeIds());
			}
			return null;
		});
	}

	private void log(HandBack why, String what) {
		if (why.warns) {
			logger.warn("Topic '" + this.topic + "': " + what);
		}
		else if (logger.isDebugEnabled()) {
			logger.debug("Topic '" + this.topic + "': " + what);
		}
	}

	/**
	 * Releases the messages of a batch, trying again by {@link StoreCalls#RETRIES} while
	 * the call fails (a Redis that just restarted answers {@code LOADING} for a moment):
	 * a release is idempotent, so one that ran and lost its reply runs again harmlessly,
	 * and reports the messages it released before as not released.
	 * @param unanswered set once a try failed, as Redis may have run it
	 */
	private CompletableFuture<List<Boolean>> release(LeaseBatch batch, BackOffExecution retries,
			AtomicBoolean unanswered) {
		CompletableFuture<List<Boolean>> sent;
		try {
			sent = this.store.release(batch.ids(), batch.leaseTokens());
		}
		catch (RuntimeException ex) {
			sent = CompletableFuture.failedFuture(ex);
		}
		return sent.handle((released, failure) -> {
			if (released != null) {
				return CompletableFuture.completedFuture(released);
			}
			unanswered.set(true);
			long wait = retries.nextBackOff();
			if (wait == BackOffExecution.STOP) {
				return CompletableFuture.<List<Boolean>>failedFuture(failure);
			}
			Executor later = CompletableFuture.delayedExecutor(wait, TimeUnit.MILLISECONDS);
			return CompletableFuture.runAsync(() -> {
			}, later).thenCompose((ignored) -> release(batch, retries, unanswered));
		}).thenCompose(Function.identity());
	}

	/** Redis no longer knows the lease (it expired and the message went back or on). */
	void leaseLost(InFlightMessage message) {
		synchronized (message) {
			if (message.isSettled()) {
				// Settled while the extension was on its way: nothing was lost.
				return;
			}
			message.settle();
		}
		logger.warn("Topic '" + this.topic + "' message " + message.id()
				+ " lost its lease while being handled: it may be delivered again");
	}

	private boolean settle(InFlightMessage message) {
		synchronized (message) {
			if (message.isSettled()) {
				logger.warn("Topic '" + this.topic + "' message " + message.id() + ": handler finished after its lease"
						+ " ended (handed back or lost), so it is not acknowledged and will be delivered again");
				return false;
			}
			message.settle();
			return true;
		}
	}

	private <T> @Nullable T call(InFlightMessage message, String action, Supplier<T> call) {
		try {
			return StoreCalls.withRetries(call);
		}
		catch (RuntimeException ex) {
			logger.warn("Topic '" + this.topic + "' message " + message.id() + ": could not " + action
					+ ", it is delivered again when its lease expires: " + ex);
			return null;
		}
	}

	/** Why messages are handed back, for the log. */
	enum HandBack {

		/**
		 * Their handlers were cut off by a stop or a pause (a WARN names them).
		 */
		UNFINISHED("unfinished when the listener stopped or paused", true),

		/**
		 * Claimed, but not handed to a handler before the listener stopped: waiting for a
		 * handler or for their due time.
		 */
		NOT_STARTED("claimed and not yet handled when the listener stopped or paused", false),

		/** Named by the reply of a claim that came after the listener stopped. */
		CLAIMED_AFTER_STOP("leased by a claim answered after the listener stopped or paused", false),

		/** The handler executor refused to run them (the refusal is logged). */
		REFUSED("refused by the handler executor", false);

		private final String description;

		private final boolean warns;

		HandBack(String description, boolean warns) {
			this.description = description;
			this.warns = warns;
		}

	}

}

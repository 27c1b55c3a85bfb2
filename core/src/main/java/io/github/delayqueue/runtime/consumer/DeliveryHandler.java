package io.github.delayqueue.runtime.consumer;

import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.function.Consumer;

import io.github.delayqueue.convert.PayloadConversionException;
import io.github.delayqueue.convert.PayloadConverter;
import io.github.delayqueue.listener.DelayListenerEndpoint;
import io.github.delayqueue.listener.DelayListenerErrorHandler;
import io.github.delayqueue.listener.FailureAction;
import io.github.delayqueue.listener.LatePolicy;
import io.github.delayqueue.listener.ListenerFailure;
import io.github.delayqueue.listener.ListenerSettings;
import io.github.delayqueue.listener.SlowDownException;
import io.github.delayqueue.runtime.support.Nanoseconds;
import io.github.delayqueue.metrics.DelayQueueMetrics;
import io.github.delayqueue.metrics.HandlingOutcome;
import io.github.delayqueue.observation.DefaultDelayQueueReceiverObservationConvention;
import io.github.delayqueue.observation.DelayQueueObservation;
import io.github.delayqueue.observation.DelayQueueReceiverContext;
import io.github.delayqueue.observation.DelayQueueReceiverObservationConvention;
import io.github.delayqueue.store.ClaimedMessage;
import io.github.delayqueue.store.CorruptMessageException;
import io.github.delayqueue.store.GroupWait;
import io.github.delayqueue.store.MessageFormat;
import io.github.delayqueue.store.StoredMessage;
import io.github.delayqueue.store.TopicPartitions;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * Delivers one claimed message to the listener method (and does the per-message part for
 * the {@link BatchDeliveryHandler}): decodes it, applies the late policy, converts the
 * payload, and invokes the method inside a receiver observation. What happens then is
 * decided here and carried out by {@link Settlement}: acknowledged when the method
 * returns; when it throws, what the {@link DelayListenerErrorHandler} decides (by
 * default: retried after the backoff, postponed without counting an attempt for a
 * {@link SlowDownException}, dead-lettered on its last attempt or for an exception not
 * retried); dead-lettered at once when the message is corrupt, unreadable as the method's
 * type, or later than the late policy allows.
 */
final class DeliveryHandler {

	private static final Log logger = LogFactory.getLog(DeliveryHandler.class);

	private final DelayListenerEndpoint endpoint;

	private final ListenerSettings settings;

	private final String topic;

	private final PayloadConverter converter;

	private final Settlement settlement;

	private final DelayQueueMetrics metrics;

	private final ObservationRegistry observationRegistry;

	private final @Nullable DelayQueueReceiverObservationConvention observationConvention;

	private final Consumer<Duration> slowDown;

	private final DelayListenerErrorHandler errorHandler;

	/**
	 * Creates a handler.
	 * @param slowDown pauses the topic's claiming when a handler asks to slow down
	 * @param errorHandler decides what happens to a message whose method failed
	 */
	DeliveryHandler(DelayListenerEndpoint endpoint, PayloadConverter converter, Settlement settlement,
			DelayQueueMetrics metrics, ObservationRegistry observationRegistry,
			@Nullable DelayQueueReceiverObservationConvention observationConvention, Consumer<Duration> slowDown,
			DelayListenerErrorHandler errorHandler) {
		this.endpoint = endpoint;
		this.settings = endpoint.settings();
		this.topic = endpoint.topic();
		this.converter = converter;
		this.settlement = settlement;
		this.metrics = metrics;
		this.observationRegistry = observationRegistry;
		this.observationConvention = observationConvention;
		this.slowDown = slowDown;
		this.errorHandler = errorHandler;
	}

	/**
	 * Delivers a message and settles it.
	 * @param inFlight the message, leased to this consumer
	 */
	void handle(InFlightMessage inFlight) {
		Prepared prepared = prepare(inFlight);
		if (prepared == null) {
			return;
		}
		delivered(prepared);
		long start = System.nanoTime();
		Observation observation = observation(prepared);
		try {
			observation.observeChecked(() -> this.endpoint.invoke(prepared.argument()));
		}
		catch (Throwable ex) {
			FailureAction action = failed(prepared, ex, start);
			if (action.kind() == FailureAction.Kind.SLOW_DOWN) {
				logger.info("Topic '" + this.topic + "' message " + inFlight.id() + " asked to slow down: "
						+ (slowsItsGroup(prepared)
								? "its group '" + groupOf(prepared.message()) + "' waits, in every application,"
								: "no new claim here")
						+ " for " + action.pause());
			}
			if (ex instanceof VirtualMachineError error) {
				throw error;
			}
			return;
		}
		succeeded(prepared, start);
	}

	/**
	 * Readies a message for the listener method: decodes it, applies the late policy and
	 * converts its payload, dead-lettering it when one of these fails.
	 * @param inFlight the message, leased to this consumer
	 * @return the message with the method's argument, or {@code null} if it is settled
	 * already (handed back while it waited, or dead-lettered here), or it waited here
	 * longer than the maximum handling time, after which its lease is no longer extended
	 * and it is delivered again when the lease expires
	 */
	@Nullable Prepared prepare(InFlightMessage inFlight) {
		synchronized (inFlight) {
			if (inFlight.isSettled()) {
				// Handed back while it waited for a handler (the consumer is stopping).
				return null;
			}
			if (inFlight.handlingNanos() > Nanoseconds.of(this.settings.maxHandlingTime())) {
				logger.warn("Topic '" + this.topic + "' message " + inFlight.id() + " waited for a handler longer "
						+ "than delay-queue.listener.max-handling-time (" + this.settings.maxHandlingTime()
						+ "): not started here, as its lease is no longer extended; it is delivered again when the "
						+ "lease expires");
				return null;
			}
		}
		ClaimedMessage claimed = inFlight.claimed();
		StoredMessage message;
		try {
			message = MessageFormat.decode(claimed.id(), claimed.stored());
		}
		catch (CorruptMessageException ex) {
			this.settlement.deadLetter(inFlight, "Stored message is corrupt: " + ex.getMessage(),
					() -> this.metrics.deadLetteredUnhandled(this.topic, "corrupt"));
			return null;
		}
		int attempt = message.attempts() + 1;
		Duration sinceDue = Duration.between(Instant.ofEpochMilli(message.dueAtMillis()), inFlight.redisClock());
		Duration lateness = sinceDue.isNegative() ? Duration.ZERO : sinceDue;
		// A dead-letter queue delivers late ones whatever its settings say: burying them
		// again would lose what it exists to deliver. Nor are the messages of groups in
		// strict order late: they wait in their group on purpose (a retry's backoff, a
		// slow-down), keeping their first due time, which is their rank.
		if (this.settings.latePolicy() == LatePolicy.DEAD_LETTER && !TopicPartitions.isDeadLetters(this.topic)
				&& lateness.compareTo(this.settings.lateThreshold()) > 0
				&& !(this.settings.strictGroupOrder() && groupOf(message) != null)) {
			this.settlement.deadLetter(inFlight,
					"Claimed " + lateness + " after its due time, later than the late threshold "
							+ this.settings.lateThreshold() + " of late policy " + LatePolicy.DEAD_LETTER,
					() -> this.metrics.deadLetteredUnhandled(this.topic, "late"));
			return null;
		}
		try {
			return new Prepared(inFlight, message, attempt, lateness,
					this.endpoint.argument(message, groupOf(message), lateness, this.converter));
		}
		catch (PayloadConversionException ex) {
			this.settlement.deadLetter(inFlight, ex.getMessage(),
					() -> this.metrics.deadLetteredUnhandled(this.topic, "unreadable"));
			return null;
		}
	}

	/**
	 * Tells whether a message holds its group back while it waits for its next attempt (a
	 * slow-down pauses its group rather than this application's listener; a retry in
	 * strict group order waits in its group): the message was sent in a group, on this
	 * topic (a dead letter keeps its group in its header only).
	 */
	boolean slowsItsGroup(Prepared prepared) {
		return groupOf(prepared.message()) != null && !TopicPartitions.isDeadLetters(this.topic);
	}

	/**
	 * @return the group the message was sent in, as its header names it (a dead letter
	 * keeps it in its dead-letter queue), or {@code null}
	 */
	private static @Nullable String groupOf(StoredMessage message) {
		return message.headers().get(MessageFormat.GROUP_HEADER);
	}

	/** Counts a message as delivered to the method. */
	void delivered(Prepared prepared) {
		this.metrics.delivered(this.topic, prepared.lateness());
		if (logger.isDebugEnabled()) {
			logger.debug("Topic '" + this.topic + "' message " + prepared.inFlight().id() + " delivered, attempt "
					+ prepared.attempt());
		}
	}

	/**
	 * @return a receiver observation of the message's handling, not yet started
	 */
	Observation observation(Prepared prepared) {
		return DelayQueueObservation.RECEIVE.observation(this.observationConvention,
				DefaultDelayQueueReceiverObservationConvention.INSTANCE,
				() -> new DelayQueueReceiverContext(this.topic, prepared.inFlight().id(), prepared.attempt(),
						MessageFormat.userHeaders(prepared.message().headers())),
				this.observationRegistry);
	}

	/**
	 * The method returned normally: the message is acknowledged, and counted as handled
	 * if its lease had not ended meanwhile.
	 * @param startNanos when the method was called
	 */
	void succeeded(Prepared prepared, long startNanos) {
		Duration took = since(startNanos);
		this.settlement.acknowledge(prepared.inFlight(),
				() -> this.metrics.handled(this.topic, HandlingOutcome.SUCCESS, took, "none"));
	}

	/**
	 * The method failed for this message: the error handler decides whether it is retried
	 * after a pause, dead-lettered, or postponed without counting an attempt while the
	 * topic's claims here pause (a slow-down); logged and counted so only if its lease
	 * had not ended meanwhile (a handler interrupted by a stop, whose message was handed
	 * back, is neither).
	 * @param ex the failure
	 * @param startNanos when the method was called
	 * @return what was decided
	 */
	FailureAction failed(Prepared prepared, Throwable ex, long startNanos) {
		Duration took = since(startNanos);
		InFlightMessage message = prepared.inFlight();
		int attempt = prepared.attempt();
		Decision decision = decide(prepared, ex);
		FailureAction action = decision.action();
		String exception = ex.getClass().getSimpleName();
		switch (action.kind()) {
			case SLOW_DOWN -> {
				// A message of a group slows its group down, in every application; any
				// other, this application's listener of the topic.
				boolean groupWaits = slowsItsGroup(prepared);
				if (!groupWaits) {
					this.slowDown.accept(action.pause());
				}
				GroupWait groupWait = !groupWaits ? GroupWait.NONE
						: this.settings.strictGroupOrder() ? GroupWait.IN_GROUP : GroupWait.GROUP;
				this.settlement.postpone(message, action.pause(), groupWait, () -> {
					this.metrics.handled(this.topic, HandlingOutcome.SLOW_DOWN, took, exception);
					if (logger.isDebugEnabled()) {
						logger.debug("Topic '" + this.topic + "' message " + message.id() + " postponed by "
								+ action.pause() + " without counting an attempt");
					}
				});
			}
			case DEAD_LETTER -> this.settlement.deadLetter(message, describe(ex), () -> {
				this.metrics.handled(this.topic, HandlingOutcome.DEAD, took, exception);
				logger.warn("Topic '" + this.topic + "' message " + message.id() + " failed on attempt " + attempt
						+ " of " + this.settings.maxAttempts()
						+ ((attempt >= this.settings.maxAttempts()) ? ", its last" : ", not to be retried")
						+ ": moving it to the dead-letter set", ex);
			});
			case RETRY -> this.settlement.retry(message, action.pause(), describe(ex),
					(this.settings.strictGroupOrder() && slowsItsGroup(prepared)) ? GroupWait.IN_GROUP : GroupWait.NONE,
					() -> {
						this.metrics.handled(this.topic, HandlingOutcome.RETRY, took, exception);
						logger.warn("Topic '" + this.topic + "' message " + message.id() + " failed on attempt "
								+ attempt + " of " + this.settings.maxAttempts() + ", retrying in " + action.pause()
								+ ": " + ex);
					});
		}
		if (decision.fatal() != null) {
			// Settled: now the error the error handler ran into goes on up.
			throw decision.fatal();
		}
		return action;
	}

	/**
	 * Asks the error handler; the built-in policy applies if it throws, whatever it
	 * throws, or answers nothing. A {@link VirtualMachineError} it throws is handed back
	 * to be thrown once the message is settled.
	 */
	private Decision decide(Prepared prepared, Throwable ex) {
		FailureAction defaultAction = this.settings.defaultAction(ex, prepared.attempt());
		if (this.errorHandler == DelayListenerErrorHandler.DEFAULT) {
			return new Decision(defaultAction, null);
		}
		Map<String, String> headers = prepared.message().headers();
		ListenerFailure failure = new ListenerFailure(this.topic, prepared.inFlight().id(), prepared.attempt(),
				this.settings.maxAttempts(), ex, MessageFormat.priority(headers), MessageFormat.userHeaders(headers),
				defaultAction);
		try {
			FailureAction action = this.errorHandler.handle(failure);
			if (action != null) {
				return new Decision(action, null);
			}
			logger.warn("Topic '" + this.topic + "' message " + prepared.inFlight().id()
					+ ": the error handler decided nothing; " + defaultAction + " (the built-in policy)");
		}
		catch (Throwable handlerFailure) {
			logger.warn("Topic '" + this.topic + "' message " + prepared.inFlight().id() + ": the error handler"
					+ " failed; " + defaultAction + " (the built-in policy)", handlerFailure);
			if (handlerFailure instanceof VirtualMachineError error) {
				return new Decision(defaultAction, error);
			}
		}
		return new Decision(defaultAction, null);
	}

	/** What happens to a failed message, and an error to throw once it is settled. */
	private record Decision(FailureAction action, @Nullable VirtualMachineError fatal) {
	}

	private static Duration since(long startNanos) {
		return Duration.ofNanos(System.nanoTime() - startNanos);
	}

	private static String describe(Throwable ex) {
		// The store bounds it (ErrorTexts).
		return ex.getClass().getName() + ((ex.getMessage() != null) ? ": " + ex.getMessage() : "");
	}

	/**
	 * A message ready for the listener method.
	 *
	 * @param inFlight the message as claimed
	 * @param message the decoded message
	 * @param attempt this delivery's attempt, from 1
	 * @param lateness how long after its due time it was claimed
	 * @param argument the method's argument, or for a batch listener one element of it
	 */
	record Prepared(InFlightMessage inFlight, StoredMessage message, int attempt, Duration lateness, Object argument) {
	}

}

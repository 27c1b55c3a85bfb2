package io.github.delayqueue.runtime.consumer;

import java.time.Duration;
import java.time.Instant;
import java.util.function.Consumer;

import io.github.delayqueue.convert.PayloadConversionException;
import io.github.delayqueue.convert.PayloadConverter;
import io.github.delayqueue.listener.DelayListenerEndpoint;
import io.github.delayqueue.listener.LatePolicy;
import io.github.delayqueue.listener.SlowDownException;
import io.github.delayqueue.listener.ListenerSettings;
import io.github.delayqueue.metrics.DelayQueueMetrics;
import io.github.delayqueue.metrics.HandlingOutcome;
import io.github.delayqueue.observation.DefaultDelayQueueReceiverObservationConvention;
import io.github.delayqueue.observation.DelayQueueObservation;
import io.github.delayqueue.observation.DelayQueueReceiverContext;
import io.github.delayqueue.observation.DelayQueueReceiverObservationConvention;
import io.github.delayqueue.store.ClaimedMessage;
import io.github.delayqueue.store.CorruptMessageException;
import io.github.delayqueue.store.MessageFormat;
import io.github.delayqueue.store.StoredMessage;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * Delivers one claimed message to the listener method: decodes it, applies the late
 * policy, converts the payload, and invokes the method inside a receiver observation.
 * What happens then is decided here and carried out by {@link Settlement}: acknowledged
 * when the method returns, retried after the backoff when it throws, postponed without
 * counting an attempt when it throws {@link SlowDownException}, dead-lettered on its last
 * attempt, or at once when the message is corrupt, unreadable as the method's type, or
 * later than the late policy allows.
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

	/**
	 * Creates a handler.
	 * @param slowDown pauses the topic's claiming when a handler asks to slow down
	 */
	DeliveryHandler(DelayListenerEndpoint endpoint, PayloadConverter converter, Settlement settlement,
			DelayQueueMetrics metrics, ObservationRegistry observationRegistry,
			@Nullable DelayQueueReceiverObservationConvention observationConvention, Consumer<Duration> slowDown) {
		this.endpoint = endpoint;
		this.settings = endpoint.settings();
		this.topic = endpoint.topic();
		this.converter = converter;
		this.settlement = settlement;
		this.metrics = metrics;
		this.observationRegistry = observationRegistry;
		this.observationConvention = observationConvention;
		this.slowDown = slowDown;
	}

	/**
	 * Delivers a message and settles it.
	 * @param inFlight the message, leased to this consumer
	 */
	void handle(InFlightMessage inFlight) {
		synchronized (inFlight) {
			if (inFlight.isSettled()) {
				// Handed back while it waited for a handler (the consumer is stopping).
				return;
			}
		}
		ClaimedMessage claimed = inFlight.claimed();
		StoredMessage message;
		try {
			message = MessageFormat.decode(claimed.id(), claimed.stored());
		}
		catch (CorruptMessageException ex) {
			this.metrics.deadLetteredUnhandled(this.topic, "corrupt");
			this.settlement.deadLetter(inFlight, "Stored message is corrupt: " + ex.getMessage());
			return;
		}
		int attempt = message.attempts() + 1;
		Duration sinceDue = Duration.between(Instant.ofEpochMilli(message.dueAtMillis()), inFlight.redisClock());
		Duration lateness = sinceDue.isNegative() ? Duration.ZERO : sinceDue;
		if (this.settings.latePolicy() == LatePolicy.DEAD_LETTER
				&& lateness.compareTo(this.settings.lateThreshold()) > 0) {
			this.metrics.deadLetteredUnhandled(this.topic, "late");
			this.settlement.deadLetter(inFlight, "Claimed " + lateness + " after its due time, later than the late "
					+ "threshold " + this.settings.lateThreshold() + " of late policy " + LatePolicy.DEAD_LETTER);
			return;
		}
		Object argument;
		try {
			argument = this.endpoint.argument(message, lateness, this.converter);
		}
		catch (PayloadConversionException ex) {
			this.metrics.deadLetteredUnhandled(this.topic, "unreadable");
			this.settlement.deadLetter(inFlight, ex.getMessage());
			return;
		}
		invoke(inFlight, message, attempt, lateness, argument);
	}

	private void invoke(InFlightMessage inFlight, StoredMessage message, int attempt, Duration lateness,
			Object argument) {
		this.metrics.delivered(this.topic, lateness);
		if (logger.isDebugEnabled()) {
			logger.debug("Topic '" + this.topic + "' message " + inFlight.id() + " delivered, attempt " + attempt);
		}
		long start = System.nanoTime();
		Observation observation = DelayQueueObservation.RECEIVE.observation(this.observationConvention,
				DefaultDelayQueueReceiverObservationConvention.INSTANCE,
				() -> new DelayQueueReceiverContext(this.topic, inFlight.id(), attempt, message.headers()),
				this.observationRegistry);
		try {
			observation.observeChecked(() -> this.endpoint.invoke(argument));
		}
		catch (SlowDownException ex) {
			this.metrics.handled(this.topic, HandlingOutcome.SLOW_DOWN, Duration.ofNanos(System.nanoTime() - start),
					ex.getClass().getSimpleName());
			logger.info("Topic '" + this.topic + "' message " + inFlight.id() + " asked to slow down: delivered again"
					+ " in " + ex.pause() + " without counting an attempt, no new claim here until then");
			this.slowDown.accept(ex.pause());
			this.settlement.postpone(inFlight, ex.pause());
			return;
		}
		catch (Throwable ex) {
			boolean last = attempt >= this.settings.maxAttempts();
			this.metrics.handled(this.topic, last ? HandlingOutcome.DEAD : HandlingOutcome.RETRY,
					Duration.ofNanos(System.nanoTime() - start), ex.getClass().getSimpleName());
			failed(inFlight, attempt, ex);
			if (ex instanceof VirtualMachineError error) {
				throw error;
			}
			return;
		}
		this.metrics.handled(this.topic, HandlingOutcome.SUCCESS, Duration.ofNanos(System.nanoTime() - start), "none");
		this.settlement.acknowledge(inFlight);
	}

	private void failed(InFlightMessage message, int attempt, Throwable ex) {
		if (attempt >= this.settings.maxAttempts()) {
			logger.warn("Topic '" + this.topic + "' message " + message.id() + " failed on its last attempt (" + attempt
					+ " of " + this.settings.maxAttempts() + "), moving it to the dead-letter set", ex);
			this.settlement.deadLetter(message, describe(ex));
			return;
		}
		Duration backoff = this.settings.backoff().after(attempt);
		logger.warn("Topic '" + this.topic + "' message " + message.id() + " failed on attempt " + attempt + " of "
				+ this.settings.maxAttempts() + ", retrying in " + backoff + ": " + ex);
		this.settlement.retry(message, backoff);
	}

	private static String describe(Throwable ex) {
		String text = ex.getClass().getName() + ((ex.getMessage() != null) ? ": " + ex.getMessage() : "");
		return (text.length() > 2000) ? text.substring(0, 2000) : text;
	}

}

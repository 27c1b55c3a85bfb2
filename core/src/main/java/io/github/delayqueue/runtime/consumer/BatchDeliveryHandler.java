package io.github.delayqueue.runtime.consumer;

import java.time.Duration;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;

import io.github.delayqueue.listener.BatchListenerFailedException;
import io.github.delayqueue.listener.DelayListenerEndpoint;
import io.github.delayqueue.listener.FailureAction;
import io.github.delayqueue.listener.SlowDownException;
import io.github.delayqueue.runtime.consumer.DeliveryHandler.Prepared;
import io.micrometer.observation.Observation;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * Delivers a batch of claimed messages to a batch listener method in one call. Each
 * message is readied, counted and settled on its own by the {@link DeliveryHandler}, as
 * for a single-message listener, and has its own receiver observation, which spans the
 * call (the method runs outside their scopes). When the method returns, every message is
 * acknowledged; when it throws {@link BatchListenerFailedException}, the messages it
 * names fail and the others are acknowledged; when it throws anything else, every message
 * fails (with a {@link SlowDownException} and the built-in policy, every message is
 * postponed). The error handler decides for each failed message on its own.
 */
final class BatchDeliveryHandler {

	private static final Log logger = LogFactory.getLog(BatchDeliveryHandler.class);

	private final DelayListenerEndpoint endpoint;

	private final String topic;

	private final DeliveryHandler deliveries;

	/**
	 * Creates a handler.
	 * @param endpoint the batch listener method
	 * @param deliveries what readies, counts and settles each message
	 */
	BatchDeliveryHandler(DelayListenerEndpoint endpoint, DeliveryHandler deliveries) {
		this.endpoint = endpoint;
		this.topic = endpoint.topic();
		this.deliveries = deliveries;
	}

	/**
	 * Delivers a batch and settles each of its messages.
	 * @param batch the messages, leased to this consumer
	 */
	void handle(List<InFlightMessage> batch) {
		List<Prepared> prepared = batch.stream().map(this.deliveries::prepare).filter(Objects::nonNull).toList();
		if (prepared.isEmpty()) {
			return;
		}
		prepared.forEach(this.deliveries::delivered);
		if (logger.isDebugEnabled()) {
			logger.debug("Topic '" + this.topic + "' batch of " + prepared.size() + " messages delivered");
		}
		List<Observation> observations = prepared.stream()
			.map((message) -> this.deliveries.observation(message).start())
			.toList();
		long start = System.nanoTime();
		Throwable failure = null;
		try {
			this.endpoint.invoke(prepared.stream().map(Prepared::argument).toList());
		}
		catch (Throwable ex) {
			failure = ex;
		}
		try {
			settle(prepared, observations, failure, start);
		}
		finally {
			observations.forEach(Observation::stop);
		}
		if (failure instanceof VirtualMachineError error) {
			throw error;
		}
	}

	private void settle(List<Prepared> prepared, List<Observation> observations, @Nullable Throwable failure,
			long start) {
		if (failure == null) {
			prepared.forEach((message) -> this.deliveries.succeeded(message, start));
			return;
		}
		Set<String> failedIds = null;
		Throwable reported = failure;
		if (failure instanceof BatchListenerFailedException partial) {
			failedIds = partial.failedIds();
			reported = (partial.getCause() != null) ? partial.getCause() : partial;
			warnOfUnknownIds(prepared, failedIds);
		}
		Duration slowDown = null;
		VirtualMachineError fatal = null;
		for (int i = 0; i < prepared.size(); i++) {
			Prepared message = prepared.get(i);
			if (failedIds == null || failedIds.contains(message.inFlight().id())) {
				observations.get(i).error(reported);
				FailureAction action;
				try {
					action = this.deliveries.failed(message, reported, start);
				}
				catch (VirtualMachineError error) {
					// That message is settled: settle the rest of the batch before it
					// goes on.
					fatal = error;
					continue;
				}
				if (action.kind() == FailureAction.Kind.SLOW_DOWN && !this.deliveries.slowsItsGroup(message)
						&& (slowDown == null || action.pause().compareTo(slowDown) > 0)) {
					slowDown = action.pause();
				}
			}
			else {
				this.deliveries.succeeded(message, start);
			}
		}
		if (slowDown != null) {
			logger.info("Topic '" + this.topic + "' batch of " + prepared.size() + " messages asked to slow down:"
					+ " no new claim here for " + slowDown);
		}
		if (fatal != null) {
			throw fatal;
		}
	}

	private void warnOfUnknownIds(List<Prepared> prepared, Set<String> failedIds) {
		Set<String> unknown = new LinkedHashSet<>(failedIds);
		prepared.forEach((message) -> unknown.remove(message.inFlight().id()));
		if (!unknown.isEmpty()) {
			logger.warn("Topic '" + this.topic + "': the batch listener named failed messages " + unknown
					+ " that are not in its batch; ignored");
		}
	}

}

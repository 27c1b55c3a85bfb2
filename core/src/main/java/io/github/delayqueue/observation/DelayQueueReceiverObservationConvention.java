package io.github.delayqueue.observation;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationConvention;

/**
 * The names and tags of {@link DelayQueueObservation#RECEIVE} observations; implement it
 * to change them.
 */
public interface DelayQueueReceiverObservationConvention extends ObservationConvention<DelayQueueReceiverContext> {

	@Override
	default boolean supportsContext(Observation.Context context) {
		return context instanceof DelayQueueReceiverContext;
	}

}

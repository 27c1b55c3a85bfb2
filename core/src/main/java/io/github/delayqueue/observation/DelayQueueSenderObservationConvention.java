package io.github.delayqueue.observation;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationConvention;

/**
 * The names and tags of {@link DelayQueueObservation#SEND} observations; implement it to
 * change them.
 */
public interface DelayQueueSenderObservationConvention extends ObservationConvention<DelayQueueSenderContext> {

	@Override
	default boolean supportsContext(Observation.Context context) {
		return context instanceof DelayQueueSenderContext;
	}

}

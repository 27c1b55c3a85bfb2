package io.github.delayqueue.observation;

import io.micrometer.common.KeyValues;

/**
 * The default {@link DelayQueueSenderObservationConvention}: name
 * {@code delay.queue.send}, contextual name {@code <topic> send}, tags system and topic.
 */
public class DefaultDelayQueueSenderObservationConvention implements DelayQueueSenderObservationConvention {

	/** A shared instance. */
	public static final DefaultDelayQueueSenderObservationConvention INSTANCE = new DefaultDelayQueueSenderObservationConvention();

	@Override
	public String getName() {
		return "delay.queue.send";
	}

	@Override
	public String getContextualName(DelayQueueSenderContext context) {
		return context.getTopic() + " send";
	}

	@Override
	public KeyValues getLowCardinalityKeyValues(DelayQueueSenderContext context) {
		return KeyValues.of(DelayQueueObservation.LowCardinalityKeys.MESSAGING_SYSTEM.withValue("redis-delay-queue"),
				DelayQueueObservation.LowCardinalityKeys.DESTINATION.withValue(context.getTopic()));
	}

}

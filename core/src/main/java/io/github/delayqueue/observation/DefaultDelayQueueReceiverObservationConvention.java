package io.github.delayqueue.observation;

import io.micrometer.common.KeyValues;

/**
 * The default {@link DelayQueueReceiverObservationConvention}: name
 * {@code delay.queue.receive}, contextual name {@code <topic> receive}, tags system and
 * topic, high cardinality message id and attempt.
 */
public class DefaultDelayQueueReceiverObservationConvention implements DelayQueueReceiverObservationConvention {

	/** A shared instance. */
	public static final DefaultDelayQueueReceiverObservationConvention INSTANCE = new DefaultDelayQueueReceiverObservationConvention();

	@Override
	public String getName() {
		return "delay.queue.receive";
	}

	@Override
	public String getContextualName(DelayQueueReceiverContext context) {
		return context.getTopic() + " receive";
	}

	@Override
	public KeyValues getLowCardinalityKeyValues(DelayQueueReceiverContext context) {
		return KeyValues.of(DelayQueueObservation.LowCardinalityKeys.MESSAGING_SYSTEM.withValue("redis-delay-queue"),
				DelayQueueObservation.LowCardinalityKeys.DESTINATION.withValue(context.getTopic()));
	}

	@Override
	public KeyValues getHighCardinalityKeyValues(DelayQueueReceiverContext context) {
		return KeyValues.of(DelayQueueObservation.HighCardinalityKeys.MESSAGE_ID.withValue(context.getMessageId()),
				DelayQueueObservation.HighCardinalityKeys.ATTEMPT.withValue(Integer.toString(context.getAttempt())));
	}

}

package io.github.delayqueue.observation;

import io.micrometer.common.docs.KeyName;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationConvention;
import io.micrometer.observation.docs.ObservationDocumentation;

/**
 * The observations of the delay queue.
 */
public enum DelayQueueObservation implements ObservationDocumentation {

	/** Sending a message. */
	SEND {

		@Override
		public Class<? extends ObservationConvention<? extends Observation.Context>> getDefaultConvention() {
			return DefaultDelayQueueSenderObservationConvention.class;
		}

		@Override
		public KeyName[] getLowCardinalityKeyNames() {
			return LowCardinalityKeys.values();
		}

	},

	/** Handling a delivered message in a listener. */
	RECEIVE {

		@Override
		public Class<? extends ObservationConvention<? extends Observation.Context>> getDefaultConvention() {
			return DefaultDelayQueueReceiverObservationConvention.class;
		}

		@Override
		public KeyName[] getLowCardinalityKeyNames() {
			return LowCardinalityKeys.values();
		}

		@Override
		public KeyName[] getHighCardinalityKeyNames() {
			return HighCardinalityKeys.values();
		}

	};

	/** Low cardinality tags. */
	public enum LowCardinalityKeys implements KeyName {

		/** The messaging system. */
		MESSAGING_SYSTEM {

			@Override
			public String asString() {
				return "messaging.system";
			}

		},

		/** The topic. */
		DESTINATION {

			@Override
			public String asString() {
				return "messaging.destination.name";
			}

		}

	}

	/** High cardinality tags. */
	public enum HighCardinalityKeys implements KeyName {

		/** The message id. */
		MESSAGE_ID {

			@Override
			public String asString() {
				return "messaging.message.id";
			}

		},

		/** The delivery attempt. */
		ATTEMPT {

			@Override
			public String asString() {
				return "messaging.delay_queue.attempt";
			}

		}

	}

}

package io.github.delayqueue.runtime.support;

import java.util.List;

import io.github.delayqueue.store.TopicStore;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * Handles a failure of a topic's script calls: a key of the wrong type is moved aside
 * with a WARN naming it (so the topic keeps moving), anything else is reported to the
 * outage log.
 */
public final class TopicRepair {

	private static final Log logger = LogFactory.getLog(TopicRepair.class);

	private TopicRepair() {
	}

	/**
	 * Reports a failure, repairing the topic's keys when that is the cause.
	 * @param store the store of the topic whose call failed
	 * @param ex the failure
	 * @param outageLog the outage log of the caller
	 */
	public static void failed(TopicStore store, RuntimeException ex, OutageLog outageLog) {
		String topic = store.topic();
		try {
			List<String> moved = store.repairAfter(ex);
			if (moved.isEmpty()) {
				outageLog.failed(ex);
				return;
			}
			logger.warn("Topic '" + topic + "': keys of the wrong type moved aside as <key>:quarantined:<ms> " + moved
					+ " (something else wrote them; messages in them are not delivered)");
		}
		catch (RuntimeException repairFailure) {
			outageLog.failed(repairFailure);
		}
	}

}

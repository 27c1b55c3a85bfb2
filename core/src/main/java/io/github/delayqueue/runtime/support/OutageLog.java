package io.github.delayqueue.runtime.support;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * Logs a Redis outage once when it starts (WARN) and once when it ends (INFO), however
 * many attempts fail in between. Thread-safe.
 */
public final class OutageLog {

	private static final Log logger = LogFactory.getLog(OutageLog.class);

	private final String component;

	private boolean down;

	/**
	 * Creates a log for one component.
	 * @param component what is talking to Redis, e.g. "broker for topic 'orders'"
	 */
	public OutageLog(String component) {
		this.component = component;
	}

	/**
	 * Records a failed attempt; logs only the first of an outage.
	 * @param ex the failure
	 */
	public synchronized void failed(Exception ex) {
		if (!this.down) {
			this.down = true;
			logger.warn("Redis unavailable for " + this.component + ", retrying with backoff until it is back: " + ex);
		}
	}

	/** Records a successful call; logs the end of an outage. */
	public synchronized void succeeded() {
		if (this.down) {
			this.down = false;
			logger.info("Redis available again for " + this.component + ", resuming");
		}
	}

}

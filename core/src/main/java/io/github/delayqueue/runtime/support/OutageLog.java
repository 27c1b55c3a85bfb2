package io.github.delayqueue.runtime.support;

import java.util.ArrayList;
import java.util.List;

import io.github.delayqueue.store.Failures;
import io.github.delayqueue.store.TopicStore;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * Logs a Redis outage once when it starts (WARN) and once when it ends (INFO), however
 * many attempts fail in between. Thread-safe.
 */
public final class OutageLog {

	private static final Log logger = LogFactory.getLog(OutageLog.class);

	private final String component;

	private final @Nullable String topic;

	private final @Nullable TopicStore partition;

	private boolean down;

	/**
	 * Creates a log for one component.
	 * @param component what is talking to Redis, e.g. "broker for topic 'orders'"
	 */
	public OutageLog(String component) {
		this.component = component;
		this.topic = null;
		this.partition = null;
	}

	/**
	 * Creates a log for one component of a topic's partition: its log names the
	 * partition, when the topic has several, and the server that holds it, when the store
	 * knows it (on a Cluster).
	 * @param topic the topic
	 * @param component what is talking to Redis, e.g. "broker"
	 * @param partition the partition it works on
	 */
	public OutageLog(String topic, String component, TopicStore partition) {
		this.component = component + " of topic '" + topic + "'";
		this.topic = topic;
		this.partition = partition;
	}

	/**
	 * Records a failed attempt; logs only the first of an outage.
	 * @param ex the failure
	 */
	public synchronized void failed(Exception ex) {
		if (!this.down) {
			this.down = true;
			logger.warn("Redis unavailable for " + this.component + where()
					+ ", retrying with backoff until it is back: " + Failures.describe(ex));
		}
	}

	/** Records a successful call; logs the end of an outage. */
	public synchronized void succeeded() {
		if (this.down) {
			this.down = false;
			logger.info("Redis available again for " + this.component + where() + ", resuming");
		}
	}

	/**
	 * The partition, unless it is the topic itself, and its server, if known: such as
	 * {@code  (partition 'orders#2', on primary 10.0.0.7:6379)}.
	 */
	private String where() {
		if (this.partition == null) {
			return "";
		}
		List<String> parts = new ArrayList<>(2);
		String name = this.partition.topic();
		if (!name.equals(this.topic)) {
			parts.add("partition '" + name + "'");
		}
		String server = this.partition.server();
		if (server != null) {
			parts.add("on primary " + server);
		}
		return parts.isEmpty() ? "" : " (" + String.join(", ", parts) + ")";
	}

}

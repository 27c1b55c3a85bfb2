package io.github.delayqueue.observation;

import java.util.Map;

import io.micrometer.observation.transport.SenderContext;

/**
 * The observation context of a send; a propagating tracer writes the trace context into
 * the message headers.
 */
public class DelayQueueSenderContext extends SenderContext<Map<String, String>> {

	private final String topic;

	/**
	 * Creates a context.
	 * @param topic the topic
	 * @param headers the message headers, mutable: trace context is added to them
	 */
	public DelayQueueSenderContext(String topic, Map<String, String> headers) {
		super((carrier, key, value) -> {
			if (carrier != null) {
				carrier.put(key, value);
			}
		});
		setCarrier(headers);
		setRemoteServiceName("redis-delay-queue");
		this.topic = topic;
	}

	/**
	 * @return the topic
	 */
	public String getTopic() {
		return this.topic;
	}

}

package io.github.delayqueue.observation;

import java.util.Map;

import io.micrometer.observation.transport.ReceiverContext;

/**
 * The observation context of a delivery to a listener; a propagating tracer reads the
 * trace context the producer wrote into the message headers, so the listener's span
 * continues the producer's trace.
 */
public class DelayQueueReceiverContext extends ReceiverContext<Map<String, String>> {

	private final String topic;

	private final String messageId;

	private final int attempt;

	/**
	 * Creates a context.
	 * @param topic the topic
	 * @param messageId the message id
	 * @param attempt the delivery attempt, 1 for the first
	 * @param headers the message headers
	 */
	public DelayQueueReceiverContext(String topic, String messageId, int attempt, Map<String, String> headers) {
		super((carrier, key) -> carrier.get(key));
		setCarrier(headers);
		setRemoteServiceName("redis-delay-queue");
		this.topic = topic;
		this.messageId = messageId;
		this.attempt = attempt;
	}

	/**
	 * @return the topic
	 */
	public String getTopic() {
		return this.topic;
	}

	/**
	 * @return the message id
	 */
	public String getMessageId() {
		return this.messageId;
	}

	/**
	 * @return the delivery attempt
	 */
	public int getAttempt() {
		return this.attempt;
	}

}

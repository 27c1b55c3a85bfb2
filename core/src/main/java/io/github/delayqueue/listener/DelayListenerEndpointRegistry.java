package io.github.delayqueue.listener;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

import io.github.delayqueue.convert.PayloadConversionException;
import io.github.delayqueue.convert.PayloadConverter;
import org.jspecify.annotations.Nullable;

/**
 * Holds the application's {@link DelayListenerEndpoint}s, one per topic, and checks each
 * as it is registered. Registers only: the runtime
 * ({@code io.github.delayqueue.runtime.DelayQueueRuntime}) runs them.
 */
public class DelayListenerEndpointRegistry {

	/** The longest converter's message a payload problem quotes. */
	private static final int MAX_PROBLEM_LENGTH = 300;

	private final PayloadConverter converter;

	private final Map<String, DelayListenerEndpoint> endpoints = new LinkedHashMap<>();

	/**
	 * Creates a registry.
	 * @param converter the payload converter, which must be able to read each endpoint's
	 * payload type
	 */
	public DelayListenerEndpointRegistry(PayloadConverter converter) {
		this.converter = converter;
	}

	/**
	 * Adds an endpoint; must be called before the runtime starts.
	 * @param endpoint the endpoint
	 * @throws IllegalStateException if the topic already has a listener in this
	 * application
	 * @throws IllegalArgumentException if the payload converter can never read the
	 * method's payload type
	 */
	public synchronized void register(DelayListenerEndpoint endpoint) {
		try {
			this.converter.checkReadable(endpoint.payloadType());
		}
		catch (PayloadConversionException ex) {
			throw new IllegalArgumentException("@DelayListener method " + endpoint.describe() + " cannot receive its"
					+ " payloads: " + ex.getMessage(), ex);
		}
		DelayListenerEndpoint existing = this.endpoints.putIfAbsent(endpoint.topic(), endpoint);
		if (existing != null) {
			throw new IllegalStateException("Topic '" + endpoint.topic() + "' has two @DelayListener methods: "
					+ existing.describe() + " and " + endpoint.describe() + "; a topic may have one per application");
		}
	}

	/**
	 * Tells why this application's listener of a topic could not read a payload, so that
	 * what would only be dead-lettered can be refused where it is made (a schedule's
	 * payload, sent at every tick).
	 * @param topic the topic
	 * @param payload the payload's bytes
	 * @return what is wrong, or {@code null} when the listener reads it, or no listener
	 * of the topic runs here
	 */
	public synchronized @Nullable String payloadProblem(String topic, byte[] payload) {
		DelayListenerEndpoint endpoint = this.endpoints.get(topic);
		if (endpoint == null) {
			return null;
		}
		try {
			this.converter.fromBytes(payload, endpoint.payloadType());
			return null;
		}
		catch (RuntimeException ex) {
			String why = String.valueOf(ex.getMessage());
			return "the listener " + endpoint.describe() + " cannot read it as " + endpoint.payloadType().getTypeName()
					+ ": " + ((why.length() > MAX_PROBLEM_LENGTH) ? why.substring(0, MAX_PROBLEM_LENGTH) + "..." : why);
		}
	}

	/**
	 * @return the registered endpoints by topic, in registration order
	 */
	public synchronized Map<String, DelayListenerEndpoint> getEndpoints() {
		return Collections.unmodifiableMap(new LinkedHashMap<>(this.endpoints));
	}

}

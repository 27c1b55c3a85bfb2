package io.github.delayqueue.listener;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

import io.github.delayqueue.convert.PayloadConversionException;
import io.github.delayqueue.convert.PayloadConverter;

/**
 * Holds the application's {@link DelayListenerEndpoint}s, one per topic, and checks each
 * as it is registered. Registers only: the runtime
 * ({@code io.github.delayqueue.runtime.DelayQueueRuntime}) runs them.
 */
public class DelayListenerEndpointRegistry {

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
	 * @return the registered endpoints by topic, in registration order
	 */
	public synchronized Map<String, DelayListenerEndpoint> getEndpoints() {
		return Collections.unmodifiableMap(new LinkedHashMap<>(this.endpoints));
	}

}

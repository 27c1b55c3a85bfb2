package io.github.delayqueue.benchmarks;

import java.lang.reflect.Method;

import io.github.delayqueue.listener.DelayListenerEndpoint;
import io.github.delayqueue.listener.DelayListenerEndpointRegistry;
import io.github.delayqueue.listener.ListenerSettingsProvider;

import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.core.env.Environment;
import org.springframework.util.ReflectionUtils;

/**
 * Listeners for any number of topics without a {@code @DelayListener} method per topic:
 * once all singletons exist, and so before the registry starts, registers
 * {@link #on(String)} of this bean for each topic named in {@value #TOPICS_PROPERTY}
 * (comma-separated), with the topic's configured settings, as the annotation post
 * processor does for annotated methods.
 */
class RegisteredListeners implements SmartInitializingSingleton {

	/** The property naming the topics, comma-separated. */
	static final String TOPICS_PROPERTY = "benchmark.topics";

	private static final Method ON = ReflectionUtils.findMethod(RegisteredListeners.class, "on", String.class);

	private final PayloadHandler handler;

	private final String[] topics;

	private final DelayListenerEndpointRegistry registry;

	private final ListenerSettingsProvider settings;

	RegisteredListeners(PayloadHandler benchmarkHandler, Environment environment,
			DelayListenerEndpointRegistry registry, ListenerSettingsProvider settings) {
		this.handler = benchmarkHandler;
		this.topics = environment.getRequiredProperty(TOPICS_PROPERTY, String[].class);
		this.registry = registry;
		this.settings = settings;
	}

	@Override
	public void afterSingletonsInstantiated() {
		for (String topic : this.topics) {
			this.registry.register(new DelayListenerEndpoint(topic, this, ON, this.settings.forTopic(topic)));
		}
	}

	void on(String payload) {
		this.handler.handle(payload);
	}

}

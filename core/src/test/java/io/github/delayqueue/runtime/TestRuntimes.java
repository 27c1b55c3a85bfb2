package io.github.delayqueue.runtime;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.Objects;

import io.github.delayqueue.convert.JsonPayloadConverter;
import io.github.delayqueue.listener.DelayListenerEndpoint;
import io.github.delayqueue.listener.DelayListenerEndpointRegistry;
import io.github.delayqueue.listener.LatePolicy;
import io.github.delayqueue.listener.ListenerSettings;
import io.github.delayqueue.runtime.broker.BrokerSettings;
import io.github.delayqueue.testsupport.TestStore;
import io.github.delayqueue.time.RetryBackoff;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.util.ReflectionUtils;

/**
 * Runtimes for this package's end-to-end tests: listener settings that differ only where
 * a test needs them, endpoints on a test's own methods, and a started
 * {@link DelayQueueRuntime} over a {@link TestStore}.
 */
final class TestRuntimes {

	/** A first retry after a second, doubling up to a minute. */
	static final RetryBackoff BACKOFF = new RetryBackoff(Duration.ofSeconds(1), 2.0, Duration.ofMinutes(1));

	private TestRuntimes() {
	}

	/**
	 * Settings of three attempts, a 30 s lease, an idle check of a second and late
	 * messages delivered, with the default backoff.
	 * @param concurrency messages handled at once
	 * @param prefetch claimed messages that may wait for a free handler
	 * @return the settings
	 */
	static ListenerSettings settings(int concurrency, int prefetch) {
		return settings(concurrency, prefetch, BACKOFF);
	}

	/**
	 * Settings of three attempts, a 30 s lease, an idle check of a second and late
	 * messages delivered.
	 * @param concurrency messages handled at once
	 * @param prefetch claimed messages that may wait for a free handler
	 * @param backoff the retries' backoff
	 * @return the settings
	 */
	static ListenerSettings settings(int concurrency, int prefetch, RetryBackoff backoff) {
		return new ListenerSettings(concurrency, prefetch, 3, Duration.ofSeconds(30), backoff, Duration.ofSeconds(1),
				Duration.ofSeconds(2), Duration.ofMinutes(5), LatePolicy.DELIVER, Duration.ofHours(1));
	}

	/**
	 * An endpoint of a topic on one of a test's own methods.
	 * @param topic the topic
	 * @param bean the test
	 * @param method the name of its method
	 * @param parameter the method's parameter type
	 * @param settings the listener's settings
	 * @return the endpoint
	 */
	static DelayListenerEndpoint endpoint(String topic, Object bean, String method, Class<?> parameter,
			ListenerSettings settings) {
		Method found = Objects.requireNonNull(ReflectionUtils.findMethod(bean.getClass(), method, parameter),
				() -> "no method " + method + "(" + parameter.getSimpleName() + ") on " + bean.getClass());
		return new DelayListenerEndpoint(topic, bean, found, settings);
	}

	/**
	 * Starts a runtime over the store with these endpoints, claiming up to 100 at a time
	 * and sleeping at most a second.
	 * @param fixture the store
	 * @param endpoints the listeners
	 * @return the started runtime, for the caller to stop
	 */
	static DelayQueueRuntime start(TestStore fixture, DelayListenerEndpoint... endpoints) {
		JsonPayloadConverter converter = new JsonPayloadConverter(new JsonMapper());
		DelayListenerEndpointRegistry registry = new DelayListenerEndpointRegistry(converter);
		for (DelayListenerEndpoint endpoint : endpoints) {
			registry.register(endpoint);
		}
		DelayQueueRuntime runtime = new DelayQueueRuntime(fixture.store(), converter,
				new BrokerSettings(100, Duration.ofSeconds(1), Duration.ZERO), registry);
		runtime.start();
		return runtime;
	}

}

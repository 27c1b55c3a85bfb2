package io.github.delayqueue.actuate;

import java.util.Locale;
import java.util.Map;

import io.github.delayqueue.actuate.DelayQueueEndpoint.ListenerDescriptor;
import io.github.delayqueue.listener.DelayListenerEndpoint;
import io.github.delayqueue.listener.ListenerSettings;
import io.github.delayqueue.runtime.DelayQueueRuntime;
import io.github.delayqueue.runtime.ListenerState;
import io.github.delayqueue.store.RateLimit;
import io.github.delayqueue.time.Durations;
import org.jspecify.annotations.Nullable;

/**
 * A topic's listener in this application, as the {@code delayqueue} endpoint shows it:
 * its method, state and settings.
 */
final class ListenerDescriptions {

	private final DelayQueueRuntime runtime;

	/**
	 * Creates the descriptions.
	 * @param runtime the listeners of this application
	 */
	ListenerDescriptions(DelayQueueRuntime runtime) {
		this.runtime = runtime;
	}

	/**
	 * The listener of a topic.
	 * @param topic the topic
	 * @param states the states of this application's listeners, by topic
	 * @return its listener, or {@code null} if it has none here
	 */
	@Nullable ListenerDescriptor of(String topic, Map<String, ListenerState> states) {
		DelayListenerEndpoint endpoint = this.runtime.getEndpoints().get(topic);
		if (endpoint == null) {
			return null;
		}
		ListenerState state = states.getOrDefault(topic, ListenerState.STOPPED);
		ListenerSettings settings = endpoint.settings();
		return new ListenerDescriptor(endpoint.describe(), state.name().toLowerCase(Locale.ROOT),
				settings.concurrency(), settings.maxAttempts(), settings.visibilityTimeout().toString(),
				rateLimit(settings.rateLimit()),
				(settings.groupConcurrency() > 0) ? Integer.valueOf(settings.groupConcurrency()) : null,
				settings.strictGroupOrder() ? "strict" : null,
				settings.groupWeights().isEmpty() ? null : settings.groupWeights().asMap(),
				rateLimit(settings.groupRateLimit()));
	}

	/**
	 * The listener of a topic, in its state now.
	 * @param topic the topic
	 * @return its listener, or {@code null} if it has none here
	 */
	@Nullable ListenerDescriptor of(String topic) {
		return of(topic, this.runtime.getListenerStates());
	}

	private static @Nullable String rateLimit(@Nullable RateLimit rateLimit) {
		return (rateLimit != null) ? rateLimit.limit() + " per " + Durations.format(rateLimit.period()) : null;
	}

}

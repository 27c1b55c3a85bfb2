package io.github.delayqueue.actuate;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import io.github.delayqueue.runtime.DelayQueueRuntime;
import io.github.delayqueue.runtime.ListenerState;
import io.github.delayqueue.store.RedisMessageStore;
import io.github.delayqueue.store.TopicStats;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;

/**
 * The {@code delayQueue} health contributor: {@code DOWN} when Redis does not answer or a topic's
 * listener in this application has died; with a maximum lateness set, the lateness status (by
 * default {@code OUT_OF_SERVICE}) when a topic's oldest waiting message is later than that. Its
 * details give, for each topic with a listener here, the listener's state and the topic's counts.
 * It reads one small script per such topic and never scans Redis.
 */
public class DelayQueueHealthIndicator extends AbstractHealthIndicator {

	private final RedisMessageStore store;

	private final DelayQueueRuntime runtime;

	private final @Nullable Duration maxLateness;

	private final Status latenessStatus;

	/**
	 * Creates the health contributor.
	 * @param store the Redis store
	 * @param runtime the listeners of this application
	 * @param maxLateness how late a topic's oldest waiting message may be, or {@code null} for no limit
	 * @param latenessStatus the status when a topic is later than that
	 */
	public DelayQueueHealthIndicator(RedisMessageStore store, DelayQueueRuntime runtime,
			@Nullable Duration maxLateness, Status latenessStatus) {
		super("Delay queue health check failed");
		this.store = store;
		this.runtime = runtime;
		this.maxLateness = maxLateness;
		this.latenessStatus = latenessStatus;
	}

	@Override
	protected void doHealthCheck(Health.Builder builder) {
		Map<String, ListenerState> listeners = this.runtime.getListenerStates();
		if (listeners.isEmpty()) {
			this.store.ping();
			builder.up();
			return;
		}
		boolean listenersStarted = this.runtime.isRunning();
		Map<String, Map<String, Object>> topics = new LinkedHashMap<>();
		List<String> died = new ArrayList<>();
		List<String> late = new ArrayList<>();
		listeners.forEach((topic, state) -> {
			TopicStats stats = this.store.stats(topic);
			Duration lateness = stats.oldestLateness();
			Map<String, Object> details = new LinkedHashMap<>();
			details.put("listener", state.name().toLowerCase(Locale.ROOT));
			details.put("scheduled", stats.scheduled());
			details.put("ready", stats.ready());
			details.put("inFlight", stats.inFlight());
			details.put("dead", stats.dead());
			details.put("oldestLateness", lateness.toString());
			topics.put(topic, details);
			if (listenersStarted && state == ListenerState.STOPPED) {
				died.add(topic);
			}
			if (this.maxLateness != null && lateness.compareTo(this.maxLateness) > 0) {
				late.add(topic);
			}
		});
		if (!died.isEmpty()) {
			builder.down().withDetail("stoppedListeners", died);
		}
		else if (!late.isEmpty()) {
			builder.status(this.latenessStatus);
		}
		else {
			builder.up();
		}
		if (!late.isEmpty()) {
			builder.withDetail("late", late).withDetail("maxLateness", String.valueOf(this.maxLateness));
		}
		builder.withDetail("topics", topics);
	}

}

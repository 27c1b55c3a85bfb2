package io.github.delayqueue.dashboard;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import io.github.delayqueue.metrics.DelayQueueMeterNames;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.distribution.ValueAtPercentile;
import org.jspecify.annotations.Nullable;

/**
 * The application's own delay-queue meters, summed over its topics, for the dashboard's
 * live charts: running totals of messages sent, delivered and failed, and the lateness
 * now. The page turns the totals into rates between two readings.
 */
public final class DashboardMeters implements Supplier<Map<String, Object>> {

	private final MeterRegistry registry;

	/**
	 * Reads the meters of a registry.
	 * @param registry the application's registry
	 */
	public DashboardMeters(MeterRegistry registry) {
		this.registry = registry;
	}

	/**
	 * The totals and lateness now.
	 * @return {@code sent}, {@code delivered}, {@code failed} (retried or dead-lettered),
	 * {@code latenessMaxMs} and {@code latenessP99Ms} (absent unless the lateness
	 * percentiles include 0.99)
	 */
	@Override
	public Map<String, Object> get() {
		Map<String, Object> meters = new LinkedHashMap<>();
		meters.put("available", true);
		meters.put("sent", count(DelayQueueMeterNames.SENT, "sent") + count(DelayQueueMeterNames.SENT, "replaced"));
		meters.put("delivered", count(DelayQueueMeterNames.DELIVERED, null));
		meters.put("failed",
				count(DelayQueueMeterNames.RETRIED, null) + count(DelayQueueMeterNames.DEAD_LETTERED, null));
		double max = 0;
		Double p99 = null;
		for (Timer lateness : this.registry.find(DelayQueueMeterNames.LATENESS).timers()) {
			max = Math.max(max, lateness.max(TimeUnit.MILLISECONDS));
			for (ValueAtPercentile percentile : lateness.takeSnapshot().percentileValues()) {
				if (percentile.percentile() == 0.99) {
					double value = percentile.value(TimeUnit.MILLISECONDS);
					p99 = (p99 != null) ? Math.max(p99, value) : value;
				}
			}
		}
		meters.put("latenessMaxMs", max);
		if (p99 != null) {
			meters.put("latenessP99Ms", p99);
		}
		return meters;
	}

	private double count(String name, @Nullable String outcome) {
		double total = 0;
		for (Counter counter : (outcome != null)
				? this.registry.find(name).tag(DelayQueueMeterNames.OUTCOME, outcome).counters()
				: this.registry.find(name).counters()) {
			total += counter.count();
		}
		return total;
	}

}

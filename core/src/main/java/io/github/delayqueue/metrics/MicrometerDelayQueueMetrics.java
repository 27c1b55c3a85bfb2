package io.github.delayqueue.metrics;

import java.time.Duration;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;

/**
 * Reports the queue's events to a Micrometer {@link MeterRegistry}, with the names of
 * {@link DelayQueueMeterNames}. The per-topic gauges are {@link TopicGauges}.
 */
public class MicrometerDelayQueueMetrics implements DelayQueueMetrics {

	private final MeterRegistry registry;

	private final double[] latenessPercentiles;

	private final boolean latenessHistogram;

	/**
	 * Creates the adapter.
	 * @param registry the registry
	 * @param latenessPercentiles client-side percentiles of the lateness timer, e.g.
	 * 0.99; none if empty
	 * @param latenessHistogram whether the lateness timer publishes a histogram
	 */
	public MicrometerDelayQueueMetrics(MeterRegistry registry, double[] latenessPercentiles,
			boolean latenessHistogram) {
		this.registry = registry;
		this.latenessPercentiles = latenessPercentiles.clone();
		this.latenessHistogram = latenessHistogram;
	}

	@Override
	public void sent(String topic, int sent, int duplicates, Duration latency) {
		sent(topic, sent, 0, duplicates, latency);
	}

	@Override
	public void sent(String topic, int stored, int replaced, int duplicates, Duration latency) {
		if (stored > 0) {
			counter(DelayQueueMeterNames.SENT, topic, DelayQueueMeterNames.OUTCOME, "sent").increment(stored);
		}
		if (replaced > 0) {
			counter(DelayQueueMeterNames.SENT, topic, DelayQueueMeterNames.OUTCOME, "replaced").increment(replaced);
		}
		if (duplicates > 0) {
			counter(DelayQueueMeterNames.SENT, topic, DelayQueueMeterNames.OUTCOME, "duplicate").increment(duplicates);
		}
		Timer.builder(DelayQueueMeterNames.SEND_LATENCY)
			.description("Send calls to Redis, one per topic and call")
			.tag(DelayQueueMeterNames.TOPIC, topic)
			.register(this.registry)
			.record(latency);
	}

	@Override
	public void delivered(String topic, Duration lateness) {
		counter(DelayQueueMeterNames.DELIVERED, topic).increment();
		Timer.builder(DelayQueueMeterNames.LATENESS)
			.description("Claim time minus due time, by the Redis clock")
			.tag(DelayQueueMeterNames.TOPIC, topic)
			.publishPercentiles(this.latenessPercentiles)
			.publishPercentileHistogram(this.latenessHistogram)
			.register(this.registry)
			.record(lateness);
	}

	@Override
	public void handled(String topic, HandlingOutcome outcome, Duration duration, String exception) {
		Timer.builder(DelayQueueMeterNames.HANDLER)
			.description("Listener method invocations")
			.tags(DelayQueueMeterNames.TOPIC, topic, DelayQueueMeterNames.OUTCOME, outcome.tag(),
					DelayQueueMeterNames.EXCEPTION, exception)
			.register(this.registry)
			.record(duration);
		switch (outcome) {
			case SUCCESS -> counter(DelayQueueMeterNames.ACKED, topic).increment();
			case RETRY ->
				counter(DelayQueueMeterNames.RETRIED, topic, DelayQueueMeterNames.EXCEPTION, exception).increment();
			case DEAD ->
				counter(DelayQueueMeterNames.DEAD_LETTERED, topic, DelayQueueMeterNames.REASON, "failed").increment();
			case SLOW_DOWN -> {
				// Neither acknowledged, retried nor dead: the handler timer counts it.
			}
		}
	}

	@Override
	public void deadLetteredUnhandled(String topic, String reason) {
		counter(DelayQueueMeterNames.DEAD_LETTERED, topic, DelayQueueMeterNames.REASON, reason).increment();
	}

	@Override
	public void leasesExpired(String topic, int redelivered, int deadLettered) {
		if (redelivered > 0) {
			counter(DelayQueueMeterNames.LEASE_EXPIRED, topic).increment(redelivered);
		}
		if (deadLettered > 0) {
			counter(DelayQueueMeterNames.DEAD_LETTERED, topic, DelayQueueMeterNames.REASON, "lease-expired")
				.increment(deadLettered);
		}
	}

	@Override
	public void rateLimited(String topic) {
		counter(DelayQueueMeterNames.RATE_LIMITED, topic).increment();
	}

	@Override
	public void cancelled(String topic) {
		counter(DelayQueueMeterNames.CANCELLED, topic).increment();
	}

	@Override
	public void rescheduled(String topic) {
		counter(DelayQueueMeterNames.RESCHEDULED, topic).increment();
	}

	@Override
	public void redisDataLost() {
		Counter.builder(DelayQueueMeterNames.REDIS_DATA_LOST).register(this.registry).increment();
	}

	private Counter counter(String name, String topic, String... tags) {
		return Counter.builder(name).tag(DelayQueueMeterNames.TOPIC, topic).tags(tags).register(this.registry);
	}

}

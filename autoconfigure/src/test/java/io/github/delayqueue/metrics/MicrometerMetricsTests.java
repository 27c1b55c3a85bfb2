package io.github.delayqueue.metrics;

import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.delayqueue.producer.DelayMessage;
import io.github.delayqueue.producer.DelayQueueTemplate;
import io.github.delayqueue.listener.BatchListenerFailedException;
import io.github.delayqueue.listener.DelayListener;
import io.github.delayqueue.listener.Delivery;
import io.github.delayqueue.testsupport.QueueContexts;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * After a known scenario the meters say exactly what happened.
 */
class MicrometerMetricsTests {

	@Test
	void countersAndTimersDescribeAScenarioOfSendsReplacementsRetriesDeadLettersAndCancellations() {
		QueueContexts.runner(QueueContexts.uniquePrefix())
			.withBean(MeterRegistry.class, SimpleMeterRegistry::new)
			.withBean(ScenarioListener.class)
			.withPropertyValues("delay-queue.topics.scenario.max-attempts=2")
			.run((context) -> {
				DelayQueueTemplate template = context.getBean(DelayQueueTemplate.class);
				MeterRegistry meters = context.getBean(MeterRegistry.class);
				for (int i = 0; i < 10; i++) {
					template.send(DelayMessage.builder("scenario", "m" + i).id("m" + i).build());
				}
				assertThat(template
					.send(DelayMessage.builder("scenario", "again").id("later").delay(Duration.ofHours(1)).build())
					.duplicate()).isFalse();
				assertThat(template
					.send(DelayMessage.builder("scenario", "other").id("later").delay(Duration.ofHours(1)).build())
					.duplicate()).isTrue();
				assertThat(template
					.send(DelayMessage.builder("scenario", "newer")
						.id("later")
						.delay(Duration.ofHours(2))
						.replaceIfPending()
						.build())
					.replaced()).isTrue();
				assertThat(template.cancel("scenario", "later")).isTrue();
				await().atMost(Duration.ofSeconds(15))
					.until(() -> count(meters, DelayQueueMeterNames.ACKED) == 9
							&& count(meters, DelayQueueMeterNames.DEAD_LETTERED) == 1);

				assertThat(meters.get(DelayQueueMeterNames.SENT).tag("outcome", "sent").counter().count())
					.isEqualTo(11);
				assertThat(meters.get(DelayQueueMeterNames.SENT).tag("outcome", "duplicate").counter().count())
					.isEqualTo(1);
				assertThat(meters.get(DelayQueueMeterNames.SENT).tag("outcome", "replaced").counter().count())
					.isEqualTo(1);
				assertThat(meters.get(DelayQueueMeterNames.SEND_LATENCY).timer().count()).isEqualTo(13);
				assertThat(count(meters, DelayQueueMeterNames.DELIVERED)).isEqualTo(13);
				assertThat(count(meters, DelayQueueMeterNames.RETRIED)).isEqualTo(3);
				assertThat(meters.get(DelayQueueMeterNames.DEAD_LETTERED).tag("reason", "failed").counter().count())
					.isEqualTo(1);
				assertThat(count(meters, DelayQueueMeterNames.CANCELLED)).isEqualTo(1);
				assertThat(meters.get(DelayQueueMeterNames.HANDLER).tag("outcome", "success").timer().count())
					.isEqualTo(9);
				assertThat(meters.get(DelayQueueMeterNames.HANDLER)
					.tags("outcome", "retry", "exception", "IllegalStateException")
					.timer()
					.count()).isEqualTo(3);
				assertThat(meters.get(DelayQueueMeterNames.HANDLER).tag("outcome", "dead").timer().count())
					.isEqualTo(1);
				assertThat(meters.get(DelayQueueMeterNames.LATENESS).tag("topic", "scenario").timer().count())
					.isEqualTo(13);
			});
	}

	@Test
	void gaugesCountEachStateOfAListenedTopicOnceSpringBootBindsThem() {
		QueueContexts.runner(QueueContexts.uniquePrefix())
			.withConfiguration(AutoConfigurations.of(MetricsAutoConfiguration.class))
			.withBean(MeterRegistry.class, SimpleMeterRegistry::new)
			.withBean(ScenarioListener.class)
			.withPropertyValues("delay-queue.topics.scenario.max-attempts=1",
					"delay-queue.metrics.gauge-refresh-interval=100ms")
			.run((context) -> {
				DelayQueueTemplate template = context.getBean(DelayQueueTemplate.class);
				MeterRegistry meters = context.getBean(MeterRegistry.class);
				template.send("scenario", "later", Duration.ofHours(1));
				template.send("scenario", "much later", Duration.ofHours(2));
				template.send(DelayMessage.builder("scenario", "fails").id("m2").build());
				await().atMost(Duration.ofSeconds(10))
					.untilAsserted(() -> assertThat(gauge(meters, "dead")).isEqualTo(1));
				assertThat(gauge(meters, "scheduled")).isEqualTo(2);
				assertThat(gauge(meters, "ready")).isZero();
				assertThat(gauge(meters, "in-flight")).isZero();
				assertThat(meters.get(DelayQueueMeterNames.OLDEST_LATENESS).timeGauge().value()).isZero();
			});
	}

	@Test
	void topicsNobodyListensToHaveGaugesWhenConfiguredListedOrScheduledAndTheirOverdueMessagesShowAsLate() {
		QueueContexts.runner(QueueContexts.uniquePrefix())
			.withConfiguration(AutoConfigurations.of(MetricsAutoConfiguration.class))
			.withBean(MeterRegistry.class, SimpleMeterRegistry::new)
			.withPropertyValues("delay-queue.topics.orders.partitions=2", "delay-queue.metrics.topics=webhooks",
					"delay-queue.schedules.beat.topic=beats", "delay-queue.schedules.beat.fixed-rate=1h",
					"delay-queue.metrics.gauge-refresh-interval=100ms")
			.run((context) -> {
				MeterRegistry meters = context.getBean(MeterRegistry.class);
				context.getBean(DelayQueueTemplate.class).send("webhooks", "nobody consumes it", Duration.ZERO);
				assertThat(meters.get(DelayQueueMeterNames.MESSAGES).gauges())
					.extracting((gauge) -> gauge.getId().getTag("topic"))
					.containsOnly("orders", "webhooks", "beats");
				await().atMost(Duration.ofSeconds(10))
					.untilAsserted(() -> assertThat(meters.get(DelayQueueMeterNames.OLDEST_LATENESS)
						.tag("topic", "webhooks")
						.timeGauge()
						.value()).as("lateness of an overdue message no broker moves").isPositive());
				assertThat(meters.get(DelayQueueMeterNames.MESSAGES)
					.tags("topic", "webhooks", "state", "scheduled")
					.gauge()
					.value()).isOne();
			});
	}

	@Test
	void aBatchListenerCountsEachMessageWithItsOwnOutcome() {
		QueueContexts.runner(QueueContexts.uniquePrefix())
			.withBean(MeterRegistry.class, SimpleMeterRegistry::new)
			.withBean(BatchScenarioListener.class)
			.withPropertyValues("delay-queue.topics.batch-scenario.max-attempts=2")
			.run((context) -> {
				DelayQueueTemplate template = context.getBean(DelayQueueTemplate.class);
				MeterRegistry meters = context.getBean(MeterRegistry.class);
				template.sendAll(List.of("m0", "m1", "m2", "m3", "m4")
					.stream()
					.map((id) -> DelayMessage.builder("batch-scenario", id).id(id).build())
					.toList());
				await().atMost(Duration.ofSeconds(15))
					.until(() -> count(meters, DelayQueueMeterNames.ACKED) == 4
							&& count(meters, DelayQueueMeterNames.DEAD_LETTERED) == 1);
				// m0 fails once, m1 on both attempts; the rest of each batch succeeds.
				assertThat(count(meters, DelayQueueMeterNames.DELIVERED)).isEqualTo(7);
				assertThat(count(meters, DelayQueueMeterNames.RETRIED)).isEqualTo(2);
				assertThat(meters.get(DelayQueueMeterNames.HANDLER).tag("outcome", "success").timer().count())
					.isEqualTo(4);
				assertThat(meters.get(DelayQueueMeterNames.HANDLER)
					.tags("outcome", "retry", "exception", "IllegalStateException")
					.timer()
					.count()).isEqualTo(2);
				assertThat(meters.get(DelayQueueMeterNames.HANDLER).tag("outcome", "dead").timer().count())
					.isEqualTo(1);
			});
	}

	@Test
	void withoutAMeterRegistryNothingIsReported() {
		QueueContexts.runner(QueueContexts.uniquePrefix())
			.run((context) -> assertThat(context).doesNotHaveBean(DelayQueueMetrics.class));
	}

	private static double gauge(MeterRegistry meters, String state) {
		return meters.get(DelayQueueMeterNames.MESSAGES).tags("topic", "scenario", "state", state).gauge().value();
	}

	private static double count(MeterRegistry meters, String name) {
		return meters.find(name).counters().stream().mapToDouble((counter) -> counter.count()).sum();
	}

	static class ScenarioListener {

		private static final Set<String> FAIL_ONCE = Set.of("m0", "m1");

		final AtomicInteger calls = new AtomicInteger();

		@DelayListener(topic = "scenario")
		void on(Delivery<String> delivery) {
			this.calls.incrementAndGet();
			if (delivery.id().equals("m2") || (FAIL_ONCE.contains(delivery.id()) && delivery.attempt() == 1)) {
				throw new IllegalStateException("planned failure of " + delivery.id());
			}
		}

	}

	static class BatchScenarioListener {

		@DelayListener(topic = "batch-scenario", batchTimeout = "300ms")
		void on(List<Delivery<String>> batch) {
			List<String> failed = batch.stream()
				.filter((delivery) -> delivery.id().equals("m1")
						|| (delivery.id().equals("m0") && delivery.attempt() == 1))
				.map(Delivery::id)
				.toList();
			if (!failed.isEmpty()) {
				throw new BatchListenerFailedException("planned failure", failed,
						new IllegalStateException("planned failure of " + failed));
			}
		}

	}

}

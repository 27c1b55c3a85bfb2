package io.github.delayqueue.metrics;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.delayqueue.store.MessagePage;
import io.github.delayqueue.store.MessageSnapshot;
import io.github.delayqueue.store.MessageState;
import io.github.delayqueue.store.TopicInspector;
import io.github.delayqueue.store.TopicStats;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The gauges' policy, against an inspector that counts its reads.
 */
class TopicGaugesTests {

	@Test
	void allGaugesOfATopicShareOneReadPerRefreshInterval() {
		CountingInspector orders = new CountingInspector("orders");
		MeterRegistry registry = new SimpleMeterRegistry();
		new TopicGauges(() -> List.of(orders), Duration.ofHours(1)).bindTo(registry);
		for (String state : List.of("scheduled", "ready", "in-flight", "dead", "scheduled")) {
			registry.get(DelayQueueMeterNames.MESSAGES).tags("topic", "orders", "state", state).gauge().value();
		}
		assertThat(registry.get(DelayQueueMeterNames.MESSAGES).tags("topic", "orders", "state", "dead").gauge().value())
			.isEqualTo(4);
		assertThat(orders.reads).hasValue(1);
	}

	@Test
	void aTopicWhoseStatsCannotBeReadReportsNotANumber() {
		CountingInspector orders = new CountingInspector("orders");
		orders.failing = true;
		MeterRegistry registry = new SimpleMeterRegistry();
		new TopicGauges(() -> List.of(orders), Duration.ZERO).bindTo(registry);
		assertThat(
				registry.get(DelayQueueMeterNames.MESSAGES).tags("topic", "orders", "state", "ready").gauge().value())
			.isNaN();
		orders.failing = false;
		assertThat(
				registry.get(DelayQueueMeterNames.MESSAGES).tags("topic", "orders", "state", "ready").gauge().value())
			.isEqualTo(2);
	}

	@Test
	void topicsAreAskedForWhenBoundNotWhenCreated() {
		List<TopicInspector> topics = new ArrayList<>();
		TopicGauges gauges = new TopicGauges(() -> topics, Duration.ZERO);
		topics.add(new CountingInspector("late-registered"));
		MeterRegistry registry = new SimpleMeterRegistry();
		gauges.bindTo(registry);
		assertThat(registry.find(DelayQueueMeterNames.MESSAGES).tag("topic", "late-registered").gauges()).hasSize(4);
	}

	@Test
	void readyMessagesOfEachPriorityAreGaugedOnceATopicIsSeenToUsePriorities() {
		CountingInspector orders = new CountingInspector("orders");
		MeterRegistry registry = new SimpleMeterRegistry();
		new TopicGauges(() -> List.of(orders), Duration.ZERO).bindTo(registry);
		registry.get(DelayQueueMeterNames.MESSAGES).tags("topic", "orders", "state", "ready").gauge().value();
		assertThat(registry.find(DelayQueueMeterNames.READY_BY_PRIORITY).gauges()).isEmpty();
		orders.readyByPriority = Map.of(0, 1L, 9, 1L);
		registry.get(DelayQueueMeterNames.MESSAGES).tags("topic", "orders", "state", "ready").gauge().value();
		assertThat(registry.find(DelayQueueMeterNames.READY_BY_PRIORITY).tag("topic", "orders").gauges()).hasSize(2);
		assertThat(registry.get(DelayQueueMeterNames.READY_BY_PRIORITY)
			.tags("topic", "orders", "priority", "9")
			.gauge()
			.value()).isEqualTo(1);
		orders.readyByPriority = Map.of(0, 2L);
		assertThat(registry.get(DelayQueueMeterNames.READY_BY_PRIORITY)
			.tags("topic", "orders", "priority", "9")
			.gauge()
			.value()).isZero();
	}

	private static final class CountingInspector implements TopicInspector {

		private final String topic;

		private final AtomicInteger reads = new AtomicInteger();

		private volatile boolean failing;

		private volatile Map<Integer, Long> readyByPriority = Map.of();

		CountingInspector(String topic) {
			this.topic = topic;
		}

		@Override
		public String topic() {
			return this.topic;
		}

		@Override
		public TopicStats stats() {
			this.reads.incrementAndGet();
			if (this.failing) {
				throw new IllegalStateException("Redis is down");
			}
			return new TopicStats(1_000, 1, 2, 3, 4, -1, -1, this.readyByPriority);
		}

		@Override
		public MessagePage page(MessageState state, long offset, int limit) {
			throw new UnsupportedOperationException();
		}

		@Override
		public @Nullable MessageSnapshot inspect(String id, int maxBytes) {
			throw new UnsupportedOperationException();
		}

	}

}

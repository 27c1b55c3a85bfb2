package io.github.delayqueue.runtime;

import java.lang.reflect.Method;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.IntStream;

import io.github.delayqueue.convert.JsonPayloadConverter;
import io.github.delayqueue.listener.DelayListenerEndpoint;
import io.github.delayqueue.listener.DelayListenerEndpointRegistry;
import io.github.delayqueue.listener.Delivery;
import io.github.delayqueue.listener.LatePolicy;
import io.github.delayqueue.listener.ListenerSettings;
import io.github.delayqueue.producer.DelayMessage;
import io.github.delayqueue.runtime.broker.BrokerSettings;
import io.github.delayqueue.testsupport.TestStore;
import io.github.delayqueue.time.RetryBackoff;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.util.ReflectionUtils;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Strict group order end to end: with a group concurrency of 1, a group's messages are
 * handled one at a time and in order, a failure included (its retry comes before the
 * group's next message), while a topic in relaxed order lets the next message pass the
 * retry.
 */
class StrictGroupOrderTests {

	private final List<String> handled = new CopyOnWriteArrayList<>();

	@Test
	void aFailedMessageIsRetriedBeforeItsGroupsNextMessageInStrictOrder() {
		assertThat(run(true)).containsExactly("o-0#1", "o-1#1", "o-1#2", "o-2#1", "o-3#1");
	}

	@Test
	void inRelaxedOrderTheGroupsNextMessagesPassTheRetry() {
		assertThat(run(false)).startsWith("o-0#1", "o-1#1", "o-2#1").contains("o-1#2");
	}

	private List<String> run(boolean strict) {
		try (TestStore fixture = TestStore.create()) {
			DelayQueueRuntime runtime = runtime(fixture, strict);
			try {
				Instant now = Instant.now();
				fixture.template()
					.sendAll(IntStream.range(0, 4)
						.mapToObj((i) -> DelayMessage.builder("orders", "step")
							.id("o-" + i)
							.group("order-7")
							.dueAt(now.plusMillis(i))
							.build())
						.toList());
				await().atMost(Duration.ofSeconds(15)).until(() -> this.handled.size() == 5);
				return List.copyOf(this.handled);
			}
			finally {
				runtime.stop();
			}
		}
	}

	private DelayQueueRuntime runtime(TestStore fixture, boolean strict) {
		JsonPayloadConverter converter = new JsonPayloadConverter(new JsonMapper());
		DelayListenerEndpointRegistry registry = new DelayListenerEndpointRegistry(converter);
		ListenerSettings settings = new ListenerSettings(4, 0, 3, Duration.ofSeconds(30),
				new RetryBackoff(Duration.ofMillis(300), 2.0, Duration.ofSeconds(1)), Duration.ofSeconds(1),
				Duration.ofSeconds(2), Duration.ofMinutes(5), LatePolicy.DELIVER, Duration.ofHours(1))
			.withGroupConcurrency(1)
			.withStrictGroupOrder(strict);
		Method on = ReflectionUtils.findMethod(StrictGroupOrderTests.class, "on", Delivery.class);
		registry.register(new DelayListenerEndpoint("orders", this, on, settings));
		DelayQueueRuntime runtime = new DelayQueueRuntime(fixture.store(), converter,
				new BrokerSettings(100, Duration.ofSeconds(1), Duration.ZERO), registry);
		runtime.start();
		return runtime;
	}

	void on(Delivery<String> delivery) {
		this.handled.add(delivery.id() + "#" + delivery.attempt());
		if (delivery.id().equals("o-1") && delivery.attempt() == 1) {
			throw new IllegalStateException("the payment service is down");
		}
	}

}

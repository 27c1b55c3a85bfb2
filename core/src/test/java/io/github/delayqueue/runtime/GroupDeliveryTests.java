package io.github.delayqueue.runtime;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

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
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.util.ReflectionUtils;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A message's group reaches its listener as {@link Delivery#group()}, end to end: sent
 * with the template, stored and claimed by the scripts on real Redis, delivered by a
 * {@link DelayQueueRuntime} to a single and to a batch listener, and to a listener of
 * dead letters.
 */
class GroupDeliveryTests {

	private final Map<String, Delivery<String>> received = new ConcurrentHashMap<>();

	@Test
	void singleAndBatchListenersReceiveTheGroupEachMessageWasSentIn() {
		try (TestStore fixture = TestStore.create()) {
			DelayQueueRuntime runtime = runtime(fixture);
			try {
				for (String topic : List.of("single", "batched")) {
					fixture.template()
						.sendAll(List.of(DelayMessage.builder(topic, "a").id(topic + "-1").group("shop-17").build(),
								DelayMessage.builder(topic, "b").id(topic + "-2").build(),
								DelayMessage.builder(topic, "c").id(topic + "-3").group("店舗 9").build()));
				}
				await().atMost(Duration.ofSeconds(10)).until(() -> this.received.size() == 6);
				for (String topic : List.of("single", "batched")) {
					assertThat(group(topic + "-1")).as(topic).isEqualTo("shop-17");
					assertThat(group(topic + "-2")).as(topic).isNull();
					assertThat(group(topic + "-3")).as(topic).isEqualTo("店舗 9");
				}
			}
			finally {
				runtime.stop();
			}
		}
	}

	@Test
	void aDeadLetterIsDeliveredToAListenerOfThemWithTheGroupItsMessageWasSentIn() {
		try (TestStore fixture = TestStore.create()) {
			DelayQueueRuntime runtime = runtime(fixture);
			try {
				fixture.template().send(DelayMessage.builder("failing", "a").id("f-1").group("shop-17").build());
				await().atMost(Duration.ofSeconds(10)).until(() -> this.received.containsKey("f-1"));
				Delivery<String> deadLetter = this.received.get("f-1");
				assertThat(deadLetter.topic()).isEqualTo("failing#dead");
				assertThat(deadLetter.deadLetter()).isNotNull();
				assertThat(deadLetter.group()).isEqualTo("shop-17");
				assertThat(deadLetter.headers()).isEmpty();
			}
			finally {
				runtime.stop();
			}
		}
	}

	private @Nullable String group(String id) {
		return this.received.get(id).group();
	}

	private DelayQueueRuntime runtime(TestStore fixture) {
		JsonPayloadConverter converter = new JsonPayloadConverter(new JsonMapper());
		DelayListenerEndpointRegistry registry = new DelayListenerEndpointRegistry(converter);
		ListenerSettings settings = new ListenerSettings(2, 0, 3, Duration.ofSeconds(30),
				new RetryBackoff(Duration.ofSeconds(1), 2.0, Duration.ofMinutes(1)), Duration.ofSeconds(1),
				Duration.ofSeconds(2), Duration.ofMinutes(5), LatePolicy.DELIVER, Duration.ofHours(1));
		Method single = ReflectionUtils.findMethod(GroupDeliveryTests.class, "on", Delivery.class);
		Method batch = ReflectionUtils.findMethod(GroupDeliveryTests.class, "onBatch", List.class);
		registry.register(new DelayListenerEndpoint("single", this, single, settings));
		registry.register(new DelayListenerEndpoint("batched", this, batch, settings));
		Method failing = ReflectionUtils.findMethod(GroupDeliveryTests.class, "fail", Delivery.class);
		registry.register(new DelayListenerEndpoint("failing", this, failing,
				new ListenerSettings(1, 0, 1, settings.visibilityTimeout(), settings.backoff(),
						settings.idleCheckInterval(), settings.shutdownTimeout(), settings.maxHandlingTime(),
						LatePolicy.DELIVER, settings.lateThreshold())));
		registry.register(new DelayListenerEndpoint("failing#dead", this, single, settings));
		DelayQueueRuntime runtime = new DelayQueueRuntime(fixture.store(), converter,
				new BrokerSettings(100, Duration.ofSeconds(1), Duration.ZERO), registry);
		runtime.start();
		return runtime;
	}

	void on(Delivery<String> delivery) {
		this.received.put(delivery.id(), delivery);
	}

	void fail(Delivery<String> delivery) {
		throw new IllegalStateException("endpoint of " + delivery.group() + " down");
	}

	void onBatch(List<Delivery<String>> batch) {
		batch.forEach(this::on);
	}

}

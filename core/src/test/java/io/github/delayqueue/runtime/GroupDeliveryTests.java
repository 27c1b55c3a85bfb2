package io.github.delayqueue.runtime;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import io.github.delayqueue.listener.Delivery;
import io.github.delayqueue.listener.ListenerSettings;
import io.github.delayqueue.producer.DelayMessage;
import io.github.delayqueue.testsupport.TestStore;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

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
		ListenerSettings settings = TestRuntimes.settings(2, 0);
		return TestRuntimes.start(fixture, TestRuntimes.endpoint("single", this, "on", Delivery.class, settings),
				TestRuntimes.endpoint("batched", this, "onBatch", List.class, settings),
				TestRuntimes.endpoint("failing", this, "fail", Delivery.class,
						TestRuntimes.settings(1, 0).withMaxAttempts(1)),
				TestRuntimes.endpoint("failing#dead", this, "on", Delivery.class, settings));
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

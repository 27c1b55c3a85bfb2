package io.github.delayqueue.runtime;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.IntStream;

import io.github.delayqueue.listener.Delivery;
import io.github.delayqueue.producer.DelayMessage;
import io.github.delayqueue.testsupport.OnOneServerVersion;
import io.github.delayqueue.testsupport.TestStore;
import io.github.delayqueue.time.RetryBackoff;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Strict group order end to end: with a group concurrency of 1, a group's messages are
 * handled one at a time and in order, a failure included (its retry comes before the
 * group's next message), while a topic in relaxed order lets the next message pass the
 * retry.
 */
@OnOneServerVersion
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
		return TestRuntimes.start(fixture, TestRuntimes.endpoint("orders", this, "on", Delivery.class,
				TestRuntimes.settings(4, 0, new RetryBackoff(Duration.ofMillis(300), 2.0, Duration.ofSeconds(1)))
					.withGroupConcurrency(1)
					.withStrictGroupOrder(strict)));
	}

	void on(Delivery<String> delivery) {
		this.handled.add(delivery.id() + "#" + delivery.attempt());
		if (delivery.id().equals("o-1") && delivery.attempt() == 1) {
			throw new IllegalStateException("the payment service is down");
		}
	}

}

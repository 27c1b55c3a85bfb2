package io.github.delayqueue.runtime;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import io.github.delayqueue.listener.Delivery;
import io.github.delayqueue.producer.DelayMessage;
import io.github.delayqueue.store.RateLimit;
import io.github.delayqueue.testsupport.OnOneServerVersion;
import io.github.delayqueue.testsupport.TestStore;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A per-group rate limit end to end on real Redis, with two applications consuming one
 * topic: each group's messages are claimed at least period ÷ limit apart across both (4 a
 * second: 250 ms), woken at their time rather than at the idle check, while the messages
 * of no group are not held back.
 */
@OnOneServerVersion
class GroupRateLimitDeliveryTests {

	private static final RateLimit FOUR_A_SECOND = new RateLimit(4, Duration.ofSeconds(1));

	private final Map<String, List<Long>> startsByGroup = new ConcurrentHashMap<>();

	@Test
	void eachGroupsMessagesStartAQuarterOfASecondApartAcrossTwoApplications() {
		try (TestStore fixture = TestStore.create()) {
			DelayQueueRuntime first = runtime(fixture);
			DelayQueueRuntime second = runtime(fixture);
			try {
				List<DelayMessage> messages = new ArrayList<>();
				for (int i = 0; i < 5; i++) {
					messages.add(DelayMessage.builder("hooks", "x").id("a-" + i).group("a").build());
					messages.add(DelayMessage.builder("hooks", "x").id("b-" + i).group("b").build());
					messages.add(DelayMessage.builder("hooks", "x").id("plain-" + i).build());
				}
				fixture.template().sendAll(messages);
				await().atMost(Duration.ofSeconds(10))
					.until(() -> starts("a").size() == 5 && starts("b").size() == 5 && starts("none").size() == 5);
				for (String group : List.of("a", "b")) {
					List<Long> starts = new ArrayList<>(starts(group));
					Collections.sort(starts);
					// Claimed 250 ms apart on the Redis clock: five span a second, woken
					// at their pace, not at the idle check. A handler may start after its
					// claim (the first one 260 ms after on a loaded machine): unpaced,
					// the five would start within a few ms.
					long span = starts.get(starts.size() - 1) - starts.get(0);
					assertThat(span).as("group %s: from its first message to its fifth", group).isBetween(700L, 2500L);
				}
				List<Long> plain = starts("none");
				assertThat(Collections.max(plain) - Collections.min(plain)).as("messages of no group are not paced")
					.isLessThan(500);
			}
			finally {
				first.stop();
				second.stop();
			}
		}
	}

	private List<Long> starts(String group) {
		return this.startsByGroup.getOrDefault(group, List.of());
	}

	private DelayQueueRuntime runtime(TestStore fixture) {
		return TestRuntimes.start(fixture, TestRuntimes.endpoint("hooks", this, "handle", Delivery.class,
				TestRuntimes.settings(4, 0).withGroupRateLimit(FOUR_A_SECOND)));
	}

	void handle(Delivery<String> delivery) {
		String group = (delivery.group() != null) ? delivery.group() : "none";
		this.startsByGroup.computeIfAbsent(group, (name) -> Collections.synchronizedList(new ArrayList<>()))
			.add(System.currentTimeMillis());
	}

}

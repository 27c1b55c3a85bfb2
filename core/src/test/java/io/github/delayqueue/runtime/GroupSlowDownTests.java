package io.github.delayqueue.runtime;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import io.github.delayqueue.group.DelayQueueGroups;
import io.github.delayqueue.listener.Delivery;
import io.github.delayqueue.listener.SlowDownException;
import io.github.delayqueue.producer.DelayMessage;
import io.github.delayqueue.testsupport.OnOneServerVersion;
import io.github.delayqueue.testsupport.TestStore;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A {@link SlowDownException} thrown for a message of a group slows its group down, in
 * Redis for every application, and not the listener: the other groups' messages and those
 * of no group go on being delivered while the group waits, and the group's messages come
 * again once the pause is over, the postponed one without an attempt counted.
 */
@OnOneServerVersion
class GroupSlowDownTests {

	private static final Duration SLOW_DOWN = Duration.ofSeconds(2);

	/** When each id was delivered (ms on the JVM's clock), the last delivery. */
	private final Map<String, Long> delivered = new ConcurrentHashMap<>();

	/** Each id's attempt, as its deliveries said. */
	private final Map<String, Integer> attempts = new ConcurrentHashMap<>();

	private volatile long slowedDownAt;

	@Test
	void aSlowDownOfAMessageOfAGroupHoldsItsGroupBackWhileTheOthersAreDelivered() {
		try (TestStore fixture = TestStore.create()) {
			DelayQueueRuntime runtime = runtime(fixture);
			DelayQueueGroups groups = new DelayQueueGroups(fixture.store());
			try {
				fixture.template().send(DelayMessage.builder("hooks", "x").id("down-1").group("down").build());
				await().atMost(Duration.ofSeconds(10)).until(() -> groups.group("hooks", "down").paused());
				fixture.template()
					.sendAll(List.of(DelayMessage.builder("hooks", "x").id("down-2").group("down").build(),
							DelayMessage.builder("hooks", "x").id("up-1").group("up").build(),
							DelayMessage.builder("hooks", "x").id("plain-1").build()));
				await().atMost(Duration.ofSeconds(10))
					.until(() -> this.delivered.containsKey("up-1") && this.delivered.containsKey("plain-1"));
				assertThat(this.delivered.get("up-1") - this.slowedDownAt)
					.as("the other group's message waits for no slow-down")
					.isLessThan(SLOW_DOWN.toMillis());
				assertThat(this.delivered).doesNotContainKey("down-2");
				await().atMost(Duration.ofSeconds(15))
					.until(() -> this.delivered.containsKey("down-1") && this.delivered.containsKey("down-2"));
				assertThat(this.delivered.get("down-2") - this.slowedDownAt).as("the group waited for its pause")
					.isGreaterThanOrEqualTo(SLOW_DOWN.toMillis() - 50);
				assertThat(this.attempts.get("down-1")).as("a slow-down counts no attempt").isEqualTo(1);
			}
			finally {
				runtime.stop();
			}
		}
	}

	private DelayQueueRuntime runtime(TestStore fixture) {
		return TestRuntimes.start(fixture,
				TestRuntimes.endpoint("hooks", this, "on", Delivery.class, TestRuntimes.settings(2, 0)));
	}

	void on(Delivery<String> delivery) {
		if (delivery.id().equals("down-1") && this.slowedDownAt == 0) {
			this.slowedDownAt = System.currentTimeMillis();
			throw new SlowDownException(SLOW_DOWN);
		}
		this.attempts.put(delivery.id(), delivery.attempt());
		this.delivered.put(delivery.id(), System.currentTimeMillis());
	}

}

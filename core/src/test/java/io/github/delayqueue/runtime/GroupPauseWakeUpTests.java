package io.github.delayqueue.runtime;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import io.github.delayqueue.group.DelayQueueGroups;
import io.github.delayqueue.listener.Delivery;
import io.github.delayqueue.listener.LatePolicy;
import io.github.delayqueue.listener.ListenerSettings;
import io.github.delayqueue.producer.DelayMessage;
import io.github.delayqueue.testsupport.OnOneServerVersion;
import io.github.delayqueue.testsupport.TestStore;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Nothing signals the end of a group's pause (nor of a strict retry's wait, which is
 * one): an idle listener claims when the claim's reply says the first pause ends, so a
 * paused group's messages wait for their pause, not for the listener's idle check too
 * (here 20 s).
 */
@OnOneServerVersion
class GroupPauseWakeUpTests {

	private static final Duration IDLE_CHECK = Duration.ofSeconds(20);

	private final Map<String, Long> delivered = new ConcurrentHashMap<>();

	@Test
	void anIdleListenerClaimsAPausedGroupsMessageWhenThePauseEndsNotAtItsIdleCheck() {
		try (TestStore fixture = TestStore.create()) {
			ListenerSettings settings = new ListenerSettings(4, 0, 3, Duration.ofSeconds(30), TestRuntimes.BACKOFF,
					IDLE_CHECK, Duration.ofSeconds(2), Duration.ofMinutes(5), LatePolicy.DELIVER, Duration.ofHours(1));
			DelayQueueRuntime runtime = TestRuntimes.start(fixture,
					TestRuntimes.endpoint("hooks", this, "handle", Delivery.class, settings));
			try {
				DelayQueueGroups groups = new DelayQueueGroups(fixture.store());
				fixture.template().send(DelayMessage.builder("hooks", "x").id("first").group("other").build());
				await().atMost(Duration.ofSeconds(10)).until(() -> this.delivered.containsKey("first"));
				long pauseEnd = groups.pause("hooks", "shop", Duration.ofMillis(1500)).toEpochMilli();
				fixture.template().send(DelayMessage.builder("hooks", "x").id("paused").group("shop").build());
				await().atMost(IDLE_CHECK.dividedBy(2)).until(() -> this.delivered.containsKey("paused"));
				assertThat(this.delivered.get("paused")).as("delivered once its group's pause ended")
					.isGreaterThanOrEqualTo(pauseEnd - 50);
			}
			finally {
				runtime.stop();
			}
		}
	}

	void handle(Delivery<String> delivery) {
		this.delivered.put(delivery.id(), System.currentTimeMillis());
	}

}

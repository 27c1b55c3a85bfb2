package io.github.delayqueue.runtime;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.delayqueue.listener.Delivery;
import io.github.delayqueue.producer.DelayMessage;
import io.github.delayqueue.testsupport.OnOneServerVersion;
import io.github.delayqueue.testsupport.TestStore;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A listener's group concurrency, end to end on real Redis with two applications
 * consuming one topic: never more of a group in flight than its limit across both, a
 * group's messages one at a time and in due order with a limit of 1 (on a topic of three
 * partitions too, where each group's messages are in its group's partition), and every
 * message delivered.
 */
@OnOneServerVersion
class GroupConcurrencyDeliveryTests {

	private static final int GROUPS = 12;

	private static final int EACH = 8;

	private final Map<String, AtomicInteger> running = new ConcurrentHashMap<>();

	private final Map<String, List<String>> handled = new ConcurrentHashMap<>();

	private final AtomicInteger mostAtOnce = new AtomicInteger();

	private final AtomicInteger delivered = new AtomicInteger();

	@Test
	void aLimitOfOneHandlesEachGroupsMessagesOneAtATimeInDueOrderAcrossTwoApplications() {
		deliverAll(1, 1);
		assertInDueOrderOneAtATime();
	}

	@Test
	void aLimitOfOneHoldsOnATopicOfThreePartitionsEachGroupInItsPartition() {
		deliverAll(1, 3);
		assertInDueOrderOneAtATime();
	}

	private void assertInDueOrderOneAtATime() {
		assertThat(this.mostAtOnce).as("most of one group handled at once").hasValue(1);
		for (int g = 0; g < GROUPS; g++) {
			List<String> expected = new ArrayList<>();
			for (int i = 0; i < EACH; i++) {
				expected.add("g" + g + "-" + i);
			}
			assertThat(this.handled.get("g" + g)).as("group g" + g).containsExactlyElementsOf(expected);
		}
	}

	@Test
	void aLimitOfTwoNeverHasThreeOfAGroupInFlight() {
		deliverAll(2, 1);
		assertThat(this.mostAtOnce.get()).as("most of one group handled at once").isBetween(1, 2);
	}

	private void deliverAll(int limit, int partitions) {
		try (TestStore fixture = TestStore.builder().partitions(Map.of("webhooks", partitions)).build()) {
			DelayQueueRuntime first = runtime(fixture, limit);
			DelayQueueRuntime second = runtime(fixture, limit);
			try {
				Instant start = Instant.now();
				List<DelayMessage> messages = new ArrayList<>();
				for (int i = 0; i < EACH; i++) {
					for (int g = 0; g < GROUPS; g++) {
						messages.add(DelayMessage.builder("webhooks", "x")
							.id("g" + g + "-" + i)
							.group("g" + g)
							.dueAt(start.plusMillis(i))
							.build());
					}
				}
				fixture.template().sendAll(messages);
				await().atMost(Duration.ofSeconds(30)).until(() -> this.delivered.get() == GROUPS * EACH);
			}
			finally {
				first.stop();
				second.stop();
			}
		}
	}

	private DelayQueueRuntime runtime(TestStore fixture, int limit) {
		return TestRuntimes.start(fixture, TestRuntimes.endpoint("webhooks", this, "handle", Delivery.class,
				TestRuntimes.settings(8, 64).withGroupConcurrency(limit)));
	}

	void handle(Delivery<String> delivery) throws InterruptedException {
		String group = String.valueOf(delivery.group());
		AtomicInteger inGroup = this.running.computeIfAbsent(group, (name) -> new AtomicInteger());
		int now = inGroup.incrementAndGet();
		this.mostAtOnce.accumulateAndGet(now, Math::max);
		this.handled.computeIfAbsent(group, (name) -> Collections.synchronizedList(new ArrayList<>()))
			.add(delivery.id());
		// A little work, so that a second message of the group would overlap this one.
		Thread.sleep(3);
		inGroup.decrementAndGet();
		this.delivered.incrementAndGet();
	}

}

package io.github.delayqueue.store.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import io.github.delayqueue.producer.DelayMessage;
import io.github.delayqueue.store.ClaimedMessage;
import io.github.delayqueue.testsupport.TestStore;
import io.github.delayqueue.testsupport.Transitions;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A dead letter keeps its priority in the dead-letter queue: copied there by
 * {@code dead_letter.lua} or {@code expire_leases.lua}, it goes onto the queue's ready
 * list of its priority, so the queue's consumers take it before dead letters of a lower
 * one, as they would have on the topic.
 */
class DeadLetterQueuePrioritiesTests {

	@Test
	void deadLettersOfAHigherPriorityAreClaimedFirstFromTheDeadLetterQueue() {
		try (TestStore fixture = TestStore.create()) {
			RedisMessageStore store = fixture.store();
			store.watchDeadLetters("orders");
			List<DelayMessage> messages = new ArrayList<>();
			messages.add(DelayMessage.builder("orders", "low").id("low-0").build());
			messages.add(DelayMessage.builder("orders", "urgent").id("urgent").priority(9).build());
			messages.add(DelayMessage.builder("orders", "low").id("low-1").build());
			messages.add(DelayMessage.builder("orders", "soon").id("soon").priority(3).build());
			fixture.template().sendAll(messages);
			Transitions.promote(store, "orders", 100);
			List<ClaimedMessage> claimed = new ArrayList<>(
					Transitions.claim(store, "orders", 100, Duration.ofMinutes(1)));
			// They die in send order: the urgent one behind a dead letter of no priority.
			claimed.sort((a, b) -> Integer.compare(messages.indexOf(byId(messages, a.id())),
					messages.indexOf(byId(messages, b.id()))));
			for (ClaimedMessage message : claimed) {
				assertThat(Transitions.deadLetter(store, "orders", message.id(), message.leaseToken(), "failed"))
					.isTrue();
			}
			assertThat(Transitions.claim(store, "orders#dead", 10, Duration.ofMinutes(1)))
				.extracting(ClaimedMessage::id)
				.containsExactly("urgent", "soon", "low-0", "low-1");
		}
	}

	@Test
	void aMessageWhoseLastLeaseExpiredGoesToTheDeadLetterQueueWithItsPriority() {
		try (TestStore fixture = TestStore.create()) {
			RedisMessageStore store = fixture.store();
			store.watchDeadLetters("orders");
			fixture.template()
				.sendAll(List.of(DelayMessage.builder("orders", "low").id("low").build(),
						DelayMessage.builder("orders", "urgent").id("urgent").priority(7).build()));
			Transitions.promote(store, "orders", 100);
			assertThat(Transitions.claim(store, "orders", 100, Duration.ofMillis(1))).hasSize(2);
			List<String> buried = new ArrayList<>();
			await().atMost(Duration.ofSeconds(5)).until(() -> {
				buried.addAll(Transitions.expireLeases(store, "orders", 100, 1).deadLettered());
				return buried.size() == 2;
			});
			assertThat(store.inspect("orders#dead", "urgent", 100).priority()).isEqualTo(7);
			assertThat(Transitions.claim(store, "orders#dead", 10, Duration.ofMinutes(1)))
				.extracting(ClaimedMessage::id)
				.containsExactly("urgent", "low");
		}
	}

	private static DelayMessage byId(List<DelayMessage> messages, String id) {
		return messages.stream().filter((message) -> id.equals(message.id())).findFirst().orElseThrow();
	}

}

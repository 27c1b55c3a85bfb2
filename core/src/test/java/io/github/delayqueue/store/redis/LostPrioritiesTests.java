package io.github.delayqueue.store.redis;

import java.time.Duration;
import java.util.List;

import io.github.delayqueue.producer.DelayMessage;
import io.github.delayqueue.producer.DelayQueueTemplate;
import io.github.delayqueue.store.ClaimedMessage;
import io.github.delayqueue.testsupport.TestStore;
import io.github.delayqueue.testsupport.Transitions;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The priorities hash of a topic lost (deleted, evicted, moved aside as of the wrong
 * type) while messages with a priority wait in the ready lists of their priorities: they
 * are still claimed, once each, and a copy left in the list of a priority the message no
 * longer has is still dropped.
 */
class LostPrioritiesTests {

	private static final String TOPIC = "orders";

	private static final Duration LEASE = Duration.ofMinutes(1);

	@Test
	void readyMessagesWithAPriorityAreClaimedAfterThePrioritiesHashIsDeleted() {
		try (TestStore fixture = TestStore.create()) {
			RedisMessageStore store = fixture.store();
			send(fixture.template(), "urgent", 9);
			send(fixture.template(), "middle", 5);
			send(fixture.template(), "plain", 0);
			Transitions.promote(store, TOPIC, 10);
			fixture.redis().delete(store.keys(TOPIC).priorities());

			assertThat(Transitions.claim(store, TOPIC, 10, LEASE)).extracting(ClaimedMessage::id)
				.containsExactly("urgent", "middle", "plain");
			assertThat(Transitions.claim(store, TOPIC, 10, LEASE)).isEmpty();
		}
	}

	@Test
	void aMessageWithAPriorityWhoseEntryIsLostIsClaimedFromItsListBesideOthersThatKeptTheirs() {
		try (TestStore fixture = TestStore.create()) {
			RedisMessageStore store = fixture.store();
			send(fixture.template(), "urgent", 9);
			Transitions.promote(store, TOPIC, 10);
			fixture.redis().opsForHash().delete(store.keys(TOPIC).priorities(), "urgent");
			send(fixture.template(), "later", 5);
			Transitions.promote(store, TOPIC, 10);

			assertThat(Transitions.claim(store, TOPIC, 10, LEASE)).extracting(ClaimedMessage::id)
				.containsExactly("urgent", "later");
		}
	}

	@Test
	void aCopyLeftInTheListOfAPriorityTheMessageNoLongerHasIsDroppedAndTheMessageClaimedOnce() {
		try (TestStore fixture = TestStore.create()) {
			RedisMessageStore store = fixture.store();
			send(fixture.template(), "x", 9);
			send(fixture.template(), "other", 5);
			Transitions.promote(store, TOPIC, 10);
			assertThat(store.cancel(TOPIC, "x")).isTrue();
			send(fixture.template(), "x", 0);
			Transitions.promote(store, TOPIC, 10);

			List<ClaimedMessage> claimed = Transitions.claim(store, TOPIC, 10, LEASE);
			assertThat(claimed).extracting(ClaimedMessage::id).containsExactly("other", "x");
			assertThat(Transitions.claim(store, TOPIC, 10, LEASE)).isEmpty();
		}
	}

	private static void send(DelayQueueTemplate template, String id, int priority) {
		template.send(DelayMessage.builder(TOPIC, "body of " + id).id(id).priority(priority).build());
	}

}

package io.github.delayqueue.store.redis;

import java.time.Duration;
import java.util.List;

import io.github.delayqueue.producer.DelayMessage;
import io.github.delayqueue.producer.DelayQueueTemplate;
import io.github.delayqueue.store.ClaimResult;
import io.github.delayqueue.store.ClaimedMessage;
import io.github.delayqueue.testsupport.Transitions;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code release_claim.lua} hands back what a claim leased, from the consumer's claim
 * record, as a consumer does that stops while its claim is unanswered: only the messages
 * still leased to the claim's token, at the head of their ready list in the order
 * claimed, attempts unchanged; nothing for a claim the record no longer holds; and
 * nothing more when sent again, nor for the same claim sent again afterwards. No listener
 * runs here.
 */
class ReleaseClaimScriptTests {

	private static final Duration LEASE = Duration.ofMinutes(1);

	@Test
	void aClaimsHandBackReturnsWhatItStillLeasesToTheHeadOfTheReadyListInTheOrderClaimed() {
		ScriptTest.run((template, store, redis) -> {
			List.of("a", "b", "c", "d", "e").forEach((id) -> send(template, id, 0));
			Transitions.promote(store, "jobs", 10);
			assertThat(ids(Transitions.claim(store, "jobs", "consumer", "consumer.1", 4, 0, LEASE)))
				.containsExactly("a", "b", "c", "d");
			// b is acknowledged; c handed back and leased by another consumer.
			assertThat(Transitions.ack(store, "jobs", "b", "consumer.1")).isTrue();
			assertThat(Transitions.release(store, "jobs", "c", "consumer.1")).isTrue();
			assertThat(ids(Transitions.claim(store, "jobs", "other", "other.1", 1, 0, LEASE))).containsExactly("c");
			assertThat(Transitions.releaseClaim(store, "jobs", "consumer", "consumer.1", LEASE)).containsExactly("a",
					"d");
			TopicKeys keys = store.keys("jobs");
			assertThat(redis.opsForList().range(keys.ready(), 0, -1)).containsExactly("a", "d", "e");
			assertThat(redis.opsForZSet().range(keys.inFlight(), 0, -1)).containsExactly("c");
			assertThat(redis.<String, String>opsForHash().entries(keys.leases())).containsOnlyKeys("c")
				.containsEntry("c", "other.1");
			assertThat(redis.<String, String>opsForHash().get(keys.messages(), "a")).as("attempts unchanged")
				.startsWith("0:");
		});
	}

	@Test
	void aHandBackOfAClaimTheRecordNoLongerHoldsHandsBackNothing() {
		ScriptTest.run((template, store, redis) -> {
			List.of("a", "b").forEach((id) -> send(template, id, 0));
			Transitions.promote(store, "jobs", 10);
			assertThat(ids(Transitions.claim(store, "jobs", "consumer", "consumer.1", 1, 0, LEASE)))
				.containsExactly("a");
			assertThat(ids(Transitions.claim(store, "jobs", "consumer", "consumer.2", 1, 0, LEASE)))
				.containsExactly("b");
			assertThat(Transitions.releaseClaim(store, "jobs", "consumer", "consumer.1", LEASE)).isEmpty();
			assertThat(Transitions.releaseClaim(store, "jobs", "other", "consumer.2", LEASE)).isEmpty();
			assertThat(store.inspector("jobs").stats().inFlight()).isEqualTo(2);
			assertThat(Transitions.releaseClaim(store, "jobs", "consumer", "consumer.2", LEASE)).containsExactly("b");
		});
	}

	@Test
	void aHandBackSentAgainAndTheClaimSentAgainAfterItTakeNothingMore() {
		ScriptTest.run((template, store, redis) -> {
			List.of("a", "b").forEach((id) -> send(template, id, 0));
			Transitions.promote(store, "jobs", 10);
			assertThat(ids(Transitions.claim(store, "jobs", "consumer", "consumer.1", 1, 0, LEASE)))
				.containsExactly("a");
			assertThat(Transitions.releaseClaim(store, "jobs", "consumer", "consumer.1", LEASE)).containsExactly("a");
			assertThat(Transitions.releaseClaim(store, "jobs", "consumer", "consumer.1", LEASE)).isEmpty();
			assertThat(ids(Transitions.claim(store, "jobs", "consumer", "consumer.1", 1, 0, LEASE)))
				.as("the claim sent again")
				.isEmpty();
			assertThat(redis.opsForList().range(store.keys("jobs").ready(), 0, -1)).containsExactly("a", "b");
		});
	}

	@Test
	void aMessageWithAPriorityGoesBackToTheReadyListOfItsPriority() {
		ScriptTest.run((template, store, redis) -> {
			send(template, "urgent", 5);
			send(template, "plain", 0);
			Transitions.promote(store, "jobs", 10);
			assertThat(ids(Transitions.claim(store, "jobs", "consumer", "consumer.1", 2, 0, LEASE)))
				.containsExactly("urgent", "plain");
			assertThat(Transitions.releaseClaim(store, "jobs", "consumer", "consumer.1", LEASE))
				.containsExactly("urgent", "plain");
			TopicKeys keys = store.keys("jobs");
			assertThat(redis.opsForList().range(keys.ready(5), 0, -1)).containsExactly("urgent");
			assertThat(redis.opsForList().range(keys.ready(), 0, -1)).containsExactly("plain");
		});
	}

	private static List<String> ids(ClaimResult claimed) {
		return claimed.messages().stream().map(ClaimedMessage::id).toList();
	}

	private static void send(DelayQueueTemplate template, String id, int priority) {
		template.send(DelayMessage.builder("jobs", "payload of " + id).id(id).priority(priority).build());
	}

}

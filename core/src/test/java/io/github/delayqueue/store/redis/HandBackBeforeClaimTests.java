package io.github.delayqueue.store.redis;

import java.time.Duration;
import java.util.List;

import io.github.delayqueue.producer.DelayMessage;
import io.github.delayqueue.producer.DelayQueueTemplate;
import io.github.delayqueue.store.ClaimResult;
import io.github.delayqueue.store.ClaimedMessage;
import io.github.delayqueue.store.WriteGate;
import io.github.delayqueue.testsupport.Transitions;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A stop hands back a claim whose reply it has not seen with {@code release_claim.lua},
 * and relies on Redis running that hand-back after the claim ({@code Fetcher.stop},
 * {@code UnansweredClaim}, {@code WriteGate}). That holds on Spring Data Redis' shared
 * native connection only: on dedicated or pooled connections the two calls go out on
 * different connections, on a Cluster a claim queued on a node's connection during a
 * failover is re-routed after the hand-back went to the new master, and without Lettuce's
 * asynchronous API ({@code ScriptRunner.runBlocking}) the gate is not used at all. A
 * hand-back that runs first finds no record of the claim and hands back nothing; the
 * claim then leases, and nothing hands back what it leased: it stays in flight until its
 * lease expires and, on its last attempt, is dead-lettered without a delivery. The
 * hand-back must keep the claim, if it runs later, from leasing anything. No listener
 * runs here.
 */
class HandBackBeforeClaimTests {

	private static final Duration LEASE = Duration.ofMinutes(1);

	@Test
	void aClaimThatRunsAfterItsHandBackLeasesNothing() {
		ScriptTest.run((template, store, redis) -> {
			send(template, "a");
			Transitions.promote(store, "jobs", 10);
			assertThat(Transitions.releaseClaim(store, "jobs", "consumer", "consumer.1", LEASE)).isEmpty();
			assertThat(ids(Transitions.claim(store, "jobs", "consumer", "consumer.1", 1, 0, LEASE)))
				.as("leased by a claim handed back before it ran")
				.isEmpty();
			assertThat(store.inspector("jobs").stats().ready()).isOne();
			assertThat(ids(Transitions.claim(store, "jobs", "other", "other.1", 1, 0, LEASE))).containsExactly("a");
		});
	}

	@Test
	void aClaimThatRunsAfterItsHandBackLeasesNothingWhenTheRecordHoldsTheConsumersPreviousClaim() {
		ScriptTest.run((template, store, redis) -> {
			send(template, "a");
			send(template, "b");
			Transitions.promote(store, "jobs", 10);
			// The consumer's previous claim, answered: its record stays until the next
			// claim.
			assertThat(ids(Transitions.claim(store, "jobs", "consumer", "consumer.1", 1, 0, LEASE)))
				.containsExactly("a");
			assertThat(Transitions.releaseClaim(store, "jobs", "consumer", "consumer.2", LEASE)).isEmpty();
			assertThat(ids(Transitions.claim(store, "jobs", "consumer", "consumer.2", 1, 0, LEASE)))
				.as("leased by a claim handed back before it ran")
				.isEmpty();
			assertThat(store.inspector("jobs").stats().ready()).isOne();
		});
	}

	private static List<String> ids(ClaimResult claimed) {
		return claimed.messages().stream().map(ClaimedMessage::id).toList();
	}

	private static void send(DelayQueueTemplate template, String id) {
		template.send(DelayMessage.builder("jobs", "payload of " + id).id(id).build());
	}

}

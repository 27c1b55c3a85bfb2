package io.github.delayqueue.store.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;

import io.github.delayqueue.producer.DelayMessage;
import io.github.delayqueue.producer.DelayQueueTemplate;
import io.github.delayqueue.producer.SendResult;
import io.github.delayqueue.store.ClaimedMessage;
import io.github.delayqueue.store.MessageFormat;
import io.github.delayqueue.store.MessagePage;
import io.github.delayqueue.store.MessageSnapshot;
import io.github.delayqueue.store.MessageState;
import io.github.delayqueue.store.MessageSummary;
import io.github.delayqueue.store.NewMessage;
import io.github.delayqueue.store.ReplayResult;
import io.github.delayqueue.store.StoredMessage;
import io.github.delayqueue.store.TopicStats;
import io.github.delayqueue.testsupport.TestStore;
import io.github.delayqueue.testsupport.Transitions;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.RedisConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The scripts behind the operations endpoint: {@code stats.lua}, {@code page.lua} and
 * {@code inspect.lua} read without changing anything; {@code replay.lua} moves dead
 * letters back to the schedule and {@code purge_dead.lua} deletes them, in bounded
 * batches. No listener runs here, so messages stay where the test puts them.
 */
class OperationsScriptsTests {

	private static final Instant LONG_AGO = Instant.parse("2020-01-01T00:00:00Z");

	private final String prefix = TestStore.uniquePrefix();

	@Test
	void statsCountTheMessagesInEachStateAndGiveTheNextDueTime() {
		run((template, store, fixture) -> {
			template.send(message("a", "ready-then-in-flight", Duration.ZERO));
			template.send(message("b", "ready-then-dead", Duration.ZERO));
			SendResult next = template.send(message("c", "scheduled", Duration.ofHours(1)));
			template.send(message("d", "scheduled", Duration.ofHours(2)));
			Transitions.promote(store, "orders", 10);
			Transitions.claim(store, "orders", 1, Duration.ofMinutes(1));

			TopicStats stats = store.stats("orders");
			assertThat(stats.scheduled()).isEqualTo(2);
			assertThat(stats.ready()).isEqualTo(1);
			assertThat(stats.inFlight()).isEqualTo(1);
			assertThat(stats.dead()).isZero();
			assertThat(stats.nextDueMillis()).isEqualTo(next.dueAt().toEpochMilli());

			deadLetterNext(store, "orders");
			assertThat(store.stats("orders")).satisfies((after) -> {
				assertThat(after.ready()).isZero();
				assertThat(after.inFlight()).isEqualTo(1);
				assertThat(after.dead()).isEqualTo(1);
			});
		});
	}

	@Test
	void statsOfATopicWithoutMessagesAreZero() {
		run((template, store, fixture) -> {
			TopicStats stats = store.stats("empty");
			assertThat(stats.nowMillis()).isPositive();
			assertThat(List.of(stats.scheduled(), stats.ready(), stats.inFlight(), stats.dead())).containsOnly(0L);
			assertThat(stats.nextDueMillis()).isEqualTo(-1);
			assertThat(stats.oldestLateness()).isZero();
		});
	}

	@Test
	void oldestLatenessIsZeroWhenNothingIsDueYet() {
		run((template, store, fixture) -> {
			template.send("orders", "later", Duration.ofHours(1));
			assertThat(store.stats("orders").oldestLateness()).isZero();
		});
	}

	@Test
	void oldestLatenessCountsADueMessageThatNoBrokerHasMovedYet() {
		run((template, store, fixture) -> {
			template.sendAt("orders", "overdue", LONG_AGO);
			TopicStats stats = store.stats("orders");
			assertThat(stats.scheduled()).isEqualTo(1);
			assertThat(stats.oldestLateness())
				.isEqualTo(Duration.ofMillis(stats.nowMillis() - LONG_AGO.toEpochMilli()));
		});
	}

	@Test
	void oldestLatenessPassesOverCancelledIdsAtTheHeadOfTheReadyList() {
		run((template, store, fixture) -> {
			Instant later = LONG_AGO.plus(Duration.ofDays(1));
			template.send(DelayMessage.builder("orders", "first").id("first").dueAt(LONG_AGO).build());
			template.send(DelayMessage.builder("orders", "second").id("second").dueAt(later).build());
			Transitions.promote(store, "orders", 10);
			template.cancel("orders", "first");

			TopicStats stats = store.stats("orders");
			assertThat(stats.ready()).isEqualTo(1);
			assertThat(stats.oldestReadyDueMillis()).isEqualTo(later.toEpochMilli());
			assertThat(stats.oldestLateness()).isEqualTo(Duration.ofMillis(stats.nowMillis() - later.toEpochMilli()));
		});
	}

	@Test
	void pageOfScheduledMessagesIsReadByRankInDueOrder() {
		run((template, store, fixture) -> {
			for (int i = 5; i >= 1; i--) {
				template.send(message("m" + i, "p" + i, Duration.ofMinutes(60 + i)));
			}
			MessagePage page = store.page("orders", MessageState.SCHEDULED, 1, 2);
			assertThat(page.total()).isEqualTo(5);
			assertThat(page.messages()).extracting(MessageSummary::id).containsExactly("m2", "m3");
			assertThat(page.messages()).allSatisfy((summary) -> {
				assertThat(summary.attempts()).isZero();
				assertThat(summary.dueAtMillis()).isEqualTo(summary.score());
				assertThat(summary.lastError()).isNull();
			});
			assertThat(store.page("orders", MessageState.SCHEDULED, 4, 10).messages()).extracting(MessageSummary::id)
				.containsExactly("m5");
			assertThat(store.page("orders", MessageState.SCHEDULED, 5, 10).messages()).isEmpty();
		});
	}

	@Test
	void pageOfInFlightMessagesGivesTheirLeaseDeadlines() {
		run((template, store, fixture) -> {
			SendResult sent = template.send(message("m1", "x", Duration.ZERO));
			Transitions.promote(store, "orders", 10);
			ClaimedMessage claimed = Transitions.claim(store, "orders", 1, Duration.ofMinutes(5)).get(0);
			MessagePage page = store.page("orders", MessageState.IN_FLIGHT, 0, 10);
			assertThat(page.total()).isEqualTo(1);
			assertThat(page.messages()).singleElement().satisfies((summary) -> {
				assertThat(summary.id()).isEqualTo("m1");
				assertThat(summary.score()).isEqualTo(claimed.leaseDeadlineMillis());
				assertThat(summary.dueAtMillis()).isEqualTo(sent.dueAt().toEpochMilli());
				assertThat(summary.attempts()).isZero();
			});
		});
	}

	@Test
	void pageOfDeadMessagesGivesTheirTimeOfDeathAttemptsAndLastError() {
		run((template, store, fixture) -> {
			template.send(message("m1", "x", Duration.ZERO));
			deadLetterNext(store, "orders");
			MessagePage page = store.page("orders", MessageState.DEAD, 0, 10);
			assertThat(page.total()).isEqualTo(1);
			assertThat(page.messages()).singleElement().satisfies((summary) -> {
				assertThat(summary.id()).isEqualTo("m1");
				assertThat(summary.state()).isEqualTo(MessageState.DEAD);
				assertThat(summary.attempts()).isEqualTo(1);
				assertThat(summary.lastError()).isEqualTo("boom m1");
				assertThat(summary.score()).isGreaterThanOrEqualTo(summary.dueAtMillis());
			});
		});
	}

	@Test
	void pageOfReadyMessagesLeavesOutIdsThatClaimWouldDrop() {
		run((template, store, fixture) -> {
			template.send(message("m1", "x", Duration.ZERO));
			template.send(message("m2", "x", Duration.ZERO));
			template.send(message("m3", "x", Duration.ZERO));
			Transitions.promote(store, "orders", 10);
			template.cancel("orders", "m1");
			template.reschedule("orders", "m3", Duration.ofHours(1));
			MessagePage page = store.page("orders", MessageState.READY, 0, 10);
			assertThat(page.total()).isEqualTo(3);
			assertThat(page.messages()).extracting(MessageSummary::id).containsExactly("m2");
			assertThat(page.messages().get(0).score()).isEqualTo(-1);
		});
	}

	@Test
	void inspectFindsAMessageInEachStateAndReturnsTheStartOfItsStoredForm() {
		run((template, store, fixture) -> {
			SendResult scheduled = template.send(DelayMessage.builder("orders", "hello")
				.id("s")
				.delay(Duration.ofHours(1))
				.header("tenant", "acme")
				.build());
			MessageSnapshot snapshot = store.inspect("orders", "s", 1000);
			assertThat(snapshot).isNotNull();
			assertThat(snapshot.state()).isEqualTo(MessageState.SCHEDULED);
			assertThat(snapshot.score()).isEqualTo(scheduled.dueAt().toEpochMilli());
			assertThat(snapshot.complete()).isTrue();
			StoredMessage decoded = MessageFormat.decode("s", snapshot.storedPrefix());
			assertThat(decoded.headers()).containsExactly(Map.entry("tenant", "acme"));
			assertThat(decoded.payload()).isEqualTo("hello".getBytes(StandardCharsets.UTF_8));

			template.send(message("r", "x", Duration.ZERO));
			Transitions.promote(store, "orders", 10);
			assertThat(store.inspect("orders", "r", 1000)).satisfies((ready) -> {
				assertThat(ready.state()).isEqualTo(MessageState.READY);
				assertThat(ready.score()).isEqualTo(-1);
			});
			ClaimedMessage claimed = Transitions.claim(store, "orders", 1, Duration.ofMinutes(1)).get(0);
			assertThat(store.inspect("orders", "r", 1000)).satisfies((inFlight) -> {
				assertThat(inFlight.state()).isEqualTo(MessageState.IN_FLIGHT);
				assertThat(inFlight.score()).isEqualTo(claimed.leaseDeadlineMillis());
			});
			Transitions.deadLetter(store, "orders", "r", claimed.leaseToken(), "it failed");
			assertThat(store.inspect("orders", "r", 1000)).satisfies((dead) -> {
				assertThat(dead.state()).isEqualTo(MessageState.DEAD);
				assertThat(dead.lastError()).isEqualTo("it failed");
				assertThat(MessageFormat.decode("r", dead.storedPrefix()).attempts()).isEqualTo(1);
			});
			assertThat(store.inspect("orders", "unknown", 1000)).isNull();
		});
	}

	@Test
	void inspectReadsNoMoreThanTheGivenNumberOfBytes() {
		run((template, store, fixture) -> {
			template
				.send(DelayMessage.builder("orders", "x".repeat(10_000)).id("big").delay(Duration.ofHours(1)).build());
			MessageSnapshot snapshot = store.inspect("orders", "big", 100);
			assertThat(snapshot.storedPrefix()).hasSize(100);
			assertThat(snapshot.storedLength()).isGreaterThan(10_000);
			assertThat(snapshot.complete()).isFalse();
		});
	}

	@Test
	void replayMovesDeadLettersBackToTheScheduleDueNowWithAttemptsResetAndErrorsDropped() {
		run((template, store, fixture) -> {
			for (String id : List.of("d1", "d2", "d3")) {
				template.send(message(id, "payload " + id, Duration.ZERO));
				deadLetterNext(store, "orders");
			}
			ReplayResult result = store.replayDead("orders", 10, 0);
			assertThat(result.replayed()).containsExactly("d1", "d2", "d3");
			assertThat(result.skipped()).isZero();

			TopicStats stats = store.stats("orders");
			assertThat(stats.dead()).isZero();
			assertThat(stats.scheduled()).isEqualTo(3);
			for (String id : List.of("d1", "d2", "d3")) {
				MessageSnapshot snapshot = store.inspect("orders", id, 1000);
				assertThat(snapshot.state()).isEqualTo(MessageState.SCHEDULED);
				assertThat(snapshot.lastError()).isNull();
				StoredMessage message = MessageFormat.decode(id, snapshot.storedPrefix());
				assertThat(message.attempts()).isZero();
				assertThat(message.dueAtMillis()).isEqualTo(snapshot.score()).isLessThanOrEqualTo(stats.nowMillis());
				assertThat(new String(message.payload(), StandardCharsets.UTF_8)).isEqualTo("payload " + id);
			}
			TopicKeys keys = store.keys("orders");
			assertThat(fixture.redis().hasKey(keys.deadErrors())).isFalse();
			assertThat(fixture.redis().hasKey(keys.deadMessages())).isFalse();
		});
	}

	@Test
	void replayLooksAtNoMoreDeadLettersThanAskedFromTheGivenRank() {
		run((template, store, fixture) -> {
			for (String id : List.of("d1", "d2", "d3", "d4")) {
				template.send(message(id, "x", Duration.ZERO));
				deadLetterNext(store, "orders");
			}
			assertThat(store.replayDead("orders", 2, 1).replayed()).containsExactly("d2", "d3");
			assertThat(store.page("orders", MessageState.DEAD, 0, 10).messages()).extracting(MessageSummary::id)
				.containsExactly("d1", "d4");
		});
	}

	@Test
	void replayLeavesADeadLetterWhoseIdWasSentAgainWhereItIs() {
		run((template, store, fixture) -> {
			template.send(message("d1", "old", Duration.ZERO));
			deadLetterNext(store, "orders");
			template.send(message("d2", "x", Duration.ZERO));
			deadLetterNext(store, "orders");
			template.send(message("d1", "new", Duration.ofHours(1)));

			ReplayResult first = store.replayDead("orders", 1, 0);
			assertThat(first.replayed()).isEmpty();
			assertThat(first.skipped()).isEqualTo(1);
			assertThat(store.replayDead("orders", 1, 1).replayed()).containsExactly("d2");

			assertThat(store.page("orders", MessageState.DEAD, 0, 10).messages()).extracting(MessageSummary::id)
				.containsExactly("d1");
			MessageSnapshot live = store.inspect("orders", "d1", 1000);
			assertThat(live.state()).isEqualTo(MessageState.SCHEDULED);
			assertThat(MessageFormat.decode("d1", live.storedPrefix()).payload())
				.isEqualTo("new".getBytes(StandardCharsets.UTF_8));
		});
	}

	@Test
	void replayOfGivenIdsMovesOnlyThoseThatAreDead() {
		run((template, store, fixture) -> {
			template.send(message("d1", "x", Duration.ZERO));
			deadLetterNext(store, "orders");
			template.send(message("d2", "x", Duration.ZERO));
			deadLetterNext(store, "orders");
			template.send(message("s1", "x", Duration.ofHours(1)));

			ReplayResult result = store.replayDead("orders", List.of("d2", "s1", "unknown"));
			assertThat(result.replayed()).containsExactly("d2");
			assertThat(result.skipped()).isEqualTo(2);
			assertThat(store.inspect("orders", "d1", 100).state()).isEqualTo(MessageState.DEAD);
			assertThat(store.inspect("orders", "s1", 100).state()).isEqualTo(MessageState.SCHEDULED);
		});
	}

	@Test
	void purgeDeletesNoMoreThanTheGivenNumberOfTheOldestDeadLetters() {
		run((template, store, fixture) -> {
			for (String id : List.of("d1", "d2", "d3", "d4", "d5")) {
				template.send(message(id, "x", Duration.ZERO));
				deadLetterNext(store, "orders");
			}
			assertThat(store.purgeDead("orders", 2)).isEqualTo(2);
			assertThat(store.page("orders", MessageState.DEAD, 0, 10).messages()).extracting(MessageSummary::id)
				.containsExactly("d3", "d4", "d5");
			assertThat(store.inspect("orders", "d1", 100)).isNull();
			assertThat(store.purgeDead("orders", 10)).isEqualTo(3);
			assertThat(store.stats("orders").dead()).isZero();
			assertThat(fixture.redis().keys(this.prefix + ":*"))
				.filteredOn((key) -> !key.equals(TopicKeys.datasetMarker(this.prefix)))
				.allSatisfy((key) -> assertThat(key).as("only claim records, which expire with the lease")
					.contains("}:c:"));
		});
	}

	@Test
	void purgeOfGivenIdsDeletesOnlyDeadLetters() {
		run((template, store, fixture) -> {
			template.send(message("d1", "x", Duration.ZERO));
			deadLetterNext(store, "orders");
			template.send(message("s1", "x", Duration.ofHours(1)));
			assertThat(store.purgeDead("orders", List.of("s1", "d1", "unknown"))).isEqualTo(1);
			assertThat(store.inspect("orders", "d1", 100)).isNull();
			assertThat(store.inspect("orders", "s1", 100).state()).isEqualTo(MessageState.SCHEDULED);
		});
	}

	@Test
	void findTopicsListsTopicsWithMessagesOrDeadLettersUnderThePrefixOnly() {
		run((template, store, fixture) -> {
			template.send("scheduled.topic", "x", Duration.ofHours(1));
			template.send("dead-only", "x", Duration.ZERO);
			deadLetterNext(store, "dead-only");
			RedisMessageStore other = new RedisMessageStore(fixture.connectionFactory(), this.prefix + "x");
			other.send("elsewhere", List.of(newMessage("e1")));

			assertThat(store.findTopics(10)).containsExactly("dead-only", "scheduled.topic");
			assertThat(store.findTopics(1)).hasSize(1);
			assertThat(other.findTopics(10)).containsExactly("elsewhere");
		});
	}

	@Test
	void findTopicsTakesGlobCharactersOfThePrefixLiterally() {
		run((template, store, fixture) -> {
			RedisConnectionFactory connectionFactory = fixture.connectionFactory();
			RedisMessageStore starred = new RedisMessageStore(connectionFactory, this.prefix + "*[a]?");
			RedisMessageStore plain = new RedisMessageStore(connectionFactory, this.prefix + "Xa!");
			starred.send("mine", List.of(newMessage("s1")));
			plain.send("theirs", List.of(newMessage("p1")));
			assertThat(starred.findTopics(10)).containsExactly("mine");
		});
	}

	private void run(StoreTest test) {
		try (TestStore fixture = TestStore.builder().prefix(this.prefix).build()) {
			test.run(fixture.template(), fixture.store(), fixture);
		}
	}

	private static DelayMessage message(String id, String payload, Duration delay) {
		return DelayMessage.builder("orders", payload).id(id).delay(delay).build();
	}

	private static NewMessage newMessage(String id) {
		return new NewMessage(id, true, 3_600_000, MessageFormat.encodeBody(Map.of(), new byte[] { 'x' }));
	}

	/** Makes the next due message of a topic ready, claims it and dead-letters it. */
	private static void deadLetterNext(RedisMessageStore store, String topic) {
		Transitions.promote(store, topic, 1);
		ClaimedMessage claimed = Transitions.claim(store, topic, 1, Duration.ofMinutes(1)).get(0);
		assertThat(Transitions.deadLetter(store, topic, claimed.id(), claimed.leaseToken(), "boom " + claimed.id()))
			.isTrue();
	}

	@FunctionalInterface
	private interface StoreTest {

		void run(DelayQueueTemplate template, RedisMessageStore store, TestStore fixture);

	}

}

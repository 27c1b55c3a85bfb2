package io.github.delayqueue.store.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;

import io.github.delayqueue.store.ClaimedMessage;
import io.github.delayqueue.store.GroupView;
import io.github.delayqueue.store.NewMessage;
import io.github.delayqueue.store.TopicStats;
import io.github.delayqueue.testsupport.Transitions;
import org.junit.jupiter.api.Test;

import static io.github.delayqueue.store.redis.GroupScriptsSupport.TOPIC;
import static io.github.delayqueue.store.redis.GroupScriptsSupport.claim;
import static io.github.delayqueue.store.redis.GroupScriptsSupport.ids;
import static io.github.delayqueue.store.redis.GroupScriptsSupport.message;
import static io.github.delayqueue.store.redis.GroupScriptsSupport.sendGroupsOfOneToTwelveMessages;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * Reading groups on a real Redis: {@code group.lua} reads one group by name (its ready
 * and in-flight counts, whether it waits at its concurrency limit, its next ready ids),
 * and {@code stats.lua} names the groups with the most messages in flight.
 */
class GroupReadScriptsTests {

	@Test
	void aGroupReadsItsCountsItsLimitAndItsNextReadyIdsMostUrgentFirst() {
		ScriptTest.run((template, store, redis) -> {
			List<NewMessage> messages = new ArrayList<>();
			IntStream.range(0, 14).forEach((i) -> messages.add(message("g-" + i, 100 - i).inGroup("g")));
			messages.add(message("g-urgent", 500).withPriority(5).inGroup("g"));
			IntStream.range(0, 3).forEach((i) -> messages.add(message("h-" + i, i + 1).inGroup("h")));
			store.send(TOPIC, messages);
			assertThat(ids(claim(store, 100, 2))).containsExactlyInAnyOrder("g-urgent", "g-13", "h-0", "h-1");
			GroupView g = store.inspector(TOPIC).group("g");
			assertThat(g.group()).isEqualTo("g");
			assertThat(g.ready()).isEqualTo(13);
			assertThat(g.inFlight()).isEqualTo(2);
			assertThat(g.waitingAtLimit()).isTrue();
			assertThat(g.firstReadyIds()).containsExactly("g-12", "g-11", "g-10", "g-9", "g-8", "g-7", "g-6", "g-5",
					"g-4", "g-3");
			GroupView h = store.inspector(TOPIC).group("h");
			assertThat(h.ready()).isOne();
			assertThat(h.inFlight()).isEqualTo(2);
			assertThat(h.firstReadyIds()).containsExactly("h-2");
		});
	}

	@Test
	void aGroupBelowItsLimitDoesNotWaitAndAnAckLeavesItsCountsRight() {
		ScriptTest.run((template, store, redis) -> {
			store.send(TOPIC, List.of(message("a", 1).inGroup("g"), message("b", 2).inGroup("g")));
			ClaimedMessage first = claim(store, 1, 2).get(0);
			GroupView claimed = store.inspector(TOPIC).group("g");
			assertThat(claimed.waitingAtLimit()).isFalse();
			assertThat(claimed.inFlight()).isOne();
			assertThat(claimed.firstReadyIds()).containsExactly("b");
			assertThat(Transitions.ack(store, TOPIC, first.id(), first.leaseToken())).isTrue();
			GroupView acked = store.inspector(TOPIC).group("g");
			assertThat(acked.inFlight()).isZero();
			assertThat(acked.ready()).isOne();
		});
	}

	@Test
	void aGroupsNextReadyIdsPassOverTheMembersOfCancelledAndRescheduledMessages() {
		ScriptTest.run((template, store, redis) -> {
			store.send(TOPIC,
					List.of(message("a", 1).inGroup("g"), message("b", 2).inGroup("g"), message("c", 3).inGroup("g")));
			assertThat(store.cancel(TOPIC, "a")).isTrue();
			assertThat(store.reschedule(TOPIC, "b", Duration.ofMinutes(5))).isPositive();
			assertThat(store.inspector(TOPIC).group("g").firstReadyIds()).containsExactly("c");
		});
	}

	@Test
	void aGroupTheTopicDoesNotKnowReadsAsEmptyAndANameNoGroupCanHaveIsRefused() {
		ScriptTest.run((template, store, redis) -> {
			store.send(TOPIC, List.of(message("a", 1).inGroup("g")));
			assertThat(store.inspector(TOPIC).group("g\u00e9"))
				.isEqualTo(new GroupView("g\u00e9", 0, 0, false, List.of()));
			assertThat(store.inspector("empty").group("g")).isEqualTo(new GroupView("g", 0, 0, false, List.of()));
			assertThatIllegalArgumentException().isThrownBy(() -> store.inspector(TOPIC).group(""));
			assertThatIllegalArgumentException().isThrownBy(() -> store.inspector(TOPIC).group("g\u0000"));
			assertThatIllegalArgumentException().isThrownBy(() -> store.inspector(TOPIC).group("g".repeat(201)));
		});
	}

	@Test
	void statsNameTheGroupsWithTheMostMessagesInFlight() {
		ScriptTest.run((template, store, redis) -> {
			sendGroupsOfOneToTwelveMessages(store);
			assertThat(claim(store, 1000, 0)).hasSize(78);
			TopicStats stats = store.stats(TOPIC);
			assertThat(stats.busiestGroups()).isEmpty();
			assertThat(stats.busiestInFlight()).hasSize(10)
				.containsEntry("group-11", 12L)
				.containsEntry("group-2", 3L)
				.doesNotContainKeys("group-1", "group-0");
			assertThat(stats.busiestInFlight().keySet().iterator().next()).isEqualTo("group-11");
			assertThat(store.stats("empty").busiestInFlight()).isEmpty();
		});
	}

}

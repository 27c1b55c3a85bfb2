package io.github.delayqueue.store.redis;

import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import io.github.delayqueue.store.ClaimResult;
import io.github.delayqueue.store.ClaimedMessage;
import io.github.delayqueue.store.GroupWeights;
import io.github.delayqueue.store.LeaseTokens;
import io.github.delayqueue.store.MessageStore;
import io.github.delayqueue.store.WriteGate;
import org.junit.jupiter.api.Test;

import static io.github.delayqueue.store.redis.GroupScriptsSupport.LEASE;
import static io.github.delayqueue.store.redis.GroupScriptsSupport.TOPIC;
import static io.github.delayqueue.store.redis.GroupScriptsSupport.sendGroups;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * Weighted turns through the claim script on a real Redis: a group of weight {@code w}
 * takes {@code w} times the share of a group of weight 1 while both wait, with and
 * without a group concurrency; a group not named weighs 1.
 */
class GroupWeightsScriptsTests {

	@Test
	void aGroupOfWeightThreeTakesThreeTimesTheShareOfAGroupOfWeightOne() {
		ScriptTest.run((template, store, redis) -> {
			sendGroups(store, 200, "gold", "plain");
			GroupWeights weights = GroupWeights.of(Map.of("gold", 3));
			List<ClaimedMessage> claimed = claim(store, 64, 0, weights);
			assertThat(countOf(claimed, "gold")).isEqualTo(48);
			assertThat(countOf(claimed, "plain")).isEqualTo(16);
			List<ClaimedMessage> more = claim(store, 128, 0, weights);
			assertThat(countOf(more, "gold")).isEqualTo(96);
			assertThat(countOf(more, "plain")).isEqualTo(32);
		});
	}

	@Test
	void withoutWeightsEveryGroupTakesTheSameShare() {
		ScriptTest.run((template, store, redis) -> {
			sendGroups(store, 100, "gold", "plain");
			List<ClaimedMessage> claimed = claim(store, 64, 0, GroupWeights.NONE);
			assertThat(countOf(claimed, "gold")).isEqualTo(32);
			assertThat(countOf(claimed, "plain")).isEqualTo(32);
		});
	}

	@Test
	void aWeightSharesTurnsButNotTheGroupConcurrency() {
		ScriptTest.run((template, store, redis) -> {
			sendGroups(store, 50, "gold", "plain");
			List<ClaimedMessage> claimed = claim(store, 64, 2, GroupWeights.of(Map.of("gold", 10)));
			assertThat(countOf(claimed, "gold")).isEqualTo(2);
			assertThat(countOf(claimed, "plain")).isEqualTo(2);
		});
	}

	@Test
	void weightsAreCheckedNamingTheGroup() {
		assertThatIllegalArgumentException().isThrownBy(() -> GroupWeights.of(Map.of("gold", 0)))
			.withMessage("The weight of group 'gold' must be between 1 and 100, but was 0");
		assertThatIllegalArgumentException().isThrownBy(() -> GroupWeights.of(Map.of("gold", 101)))
			.withMessage("The weight of group 'gold' must be between 1 and 100, but was 101");
		assertThatIllegalArgumentException().isThrownBy(() -> GroupWeights.of(Map.of("", 2)))
			.withMessageStartingWith("A group with a weight has an invalid name: A group name must have 1 to 200");
		assertThat(GroupWeights.of(Map.of("plain", 1))).isEqualTo(GroupWeights.NONE);
	}

	private static List<ClaimedMessage> claim(MessageStore store, int limit, int groupConcurrency,
			GroupWeights weights) {
		String consumer = LeaseTokens.newToken();
		CompletableFuture<ClaimResult> claim = store.topic(TOPIC)
			.claim(consumer, consumer + ".1", limit, 0, LEASE, null, groupConcurrency, weights, null, WriteGate.OPEN);
		return claim.join().messages();
	}

	private static long countOf(List<ClaimedMessage> claimed, String group) {
		return claimed.stream().filter((message) -> message.id().startsWith(group + "-")).count();
	}

}

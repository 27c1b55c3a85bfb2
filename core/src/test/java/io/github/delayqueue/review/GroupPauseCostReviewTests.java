package io.github.delayqueue.review;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

import io.github.delayqueue.testsupport.CommandStats;
import io.github.delayqueue.group.DelayQueueGroups;
import io.github.delayqueue.store.ClaimResult;
import io.github.delayqueue.store.LeaseTokens;
import io.github.delayqueue.store.NewMessage;
import io.github.delayqueue.store.redis.RedisMessageStore;
import io.github.delayqueue.testsupport.TestStore;
import io.github.delayqueue.testsupport.Transitions;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.core.StringRedisTemplate;

import static io.github.delayqueue.review.GroupsReviewTests.due;

/**
 * The Redis commands a claim of a topic with groups runs (INFO commandstats before and
 * after, the script calls themselves left out), around the groups a claim puts back when
 * the group pauses are lost; printed to compare with the same test on another commit (the
 * lines "cost:"). The claims of a topic without groups are measured by
 * {@link GroupsCostReviewTests}.
 */
class GroupPauseCostReviewTests {

	private static final String TOPIC = "grouped";

	private static final Duration MINUTE = Duration.ofMinutes(1);

	@Test
	void theClaimsOfATopicWithGroupsRunTheseCommands() {
		Map<String, Long> costs = new LinkedHashMap<>();
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			StringRedisTemplate redis = test.redis();
			DelayQueueGroups groups = new DelayQueueGroups(store);
			store.send(TOPIC, List.of(due("g-0", 5).inGroup("g"), due("g-1", 6).inGroup("g")));
			measure(redis, costs, "claim 1 of 1 group", () -> claim(store, 1, 0));
			measure(redis, costs, "claim 1 of 1 group, concurrency 2", () -> claim(store, 1, 2));
			measure(redis, costs, "claim idle, no group ready", () -> claim(store, 10, 0));
			store.send(TOPIC, List.of(due("g-2", 7).inGroup("g"), due("h-0", 8).inGroup("h")));
			groups.pause(TOPIC, "g");
			measure(redis, costs, "claim 1 of h, g paused", () -> claim(store, 10, 0));
			measure(redis, costs, "claim idle, g paused and parked", () -> claim(store, 10, 0));
			measure(redis, costs, "claim idle, g paused, concurrency 2", () -> claim(store, 10, 2));
			redis.delete(store.keys(TOPIC).groupPauses());
			measure(redis, costs, "claim idle, concurrency 2, pauses lost", () -> claim(store, 10, 2));
			measure(redis, costs, "claim putting g back, pauses lost", () -> claim(store, 10, 0));
			measure(redis, costs, "claim 1 of g put back", () -> claim(store, 10, 0));
		}
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			StringRedisTemplate redis = test.redis();
			DelayQueueGroups groups = new DelayQueueGroups(store);
			List<NewMessage> messages = new ArrayList<>();
			for (int i = 0; i < 40; i++) {
				messages.add(due("x" + i + "-0", 10 + i).inGroup("x" + i));
				messages.add(due("x" + i + "-1", 60 + i).inGroup("x" + i));
			}
			store.send(TOPIC, messages);
			measure(redis, costs, "claim 1 of 40 groups (head full)", () -> claim(store, 1, 0));
			measure(redis, costs, "claim 1 of 40 groups (head full), concurrency 2", () -> claim(store, 1, 2));
			store.send(TOPIC, List.of(due("g-0", 5).inGroup("g")));
			groups.pause(TOPIC, "g");
			measure(redis, costs, "claim 1 of 40 groups, g paused past the head", () -> claim(store, 1, 0));
			redis.delete(store.keys(TOPIC).groupPauses());
			measure(redis, costs, "claim 1 of 40 groups putting g back past the head", () -> claim(store, 1, 0));
			measure(redis, costs, "claim 1 of 40 groups after", () -> claim(store, 1, 0));
		}
		System.out.println("cost: " + costs);
	}

	private static ClaimResult claim(RedisMessageStore store, int limit, int groupConcurrency) {
		String consumer = LeaseTokens.newToken();
		return Transitions.claim(store, TOPIC, consumer, consumer + ".1", limit, 0, MINUTE, null, groupConcurrency);
	}

	private static <T> T measure(StringRedisTemplate redis, Map<String, Long> costs, String name, Supplier<T> call) {
		long before = CommandStats.of(redis).otherCalls();
		T result = call.get();
		costs.put(name, CommandStats.of(redis).otherCalls() - before);
		return result;
	}

}

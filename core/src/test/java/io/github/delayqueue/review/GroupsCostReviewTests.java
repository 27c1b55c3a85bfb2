package io.github.delayqueue.review;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

import io.github.delayqueue.testsupport.CommandStats;
import io.github.delayqueue.store.ClaimedMessage;
import io.github.delayqueue.store.MessageFormat;
import io.github.delayqueue.store.MessageState;
import io.github.delayqueue.store.NewMessage;
import io.github.delayqueue.store.redis.RedisMessageStore;
import io.github.delayqueue.testsupport.TestStore;
import io.github.delayqueue.testsupport.Transitions;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * Part of the review of groups, step 1: the Redis commands each call of a topic without
 * groups runs (INFO commandstats before and after, the script calls themselves left out),
 * printed to compare with the same test on the commit before groups. Asserts nothing: run
 * it on both commits and compare the lines "cost:".
 */
class GroupsCostReviewTests {

	private static final String TOPIC = "plain";

	private static final Duration MINUTE = Duration.ofMinutes(1);

	@Test
	void theCallsOfATopicWithoutGroupsRunTheseCommands() {
		try (TestStore test = TestStore.create()) {
			RedisMessageStore store = test.store();
			StringRedisTemplate redis = test.redis();
			Map<String, Long> costs = new LinkedHashMap<>();
			measure(redis, costs, "promote idle", () -> Transitions.promote(store, TOPIC, 100));
			measure(redis, costs, "claim idle", () -> Transitions.claim(store, TOPIC, 10, MINUTE));
			measure(redis, costs, "send 1", () -> store.send(TOPIC, List.of(message("a"))));
			measure(redis, costs, "promote 1", () -> Transitions.promote(store, TOPIC, 100));
			ClaimedMessage a = measure(redis, costs, "claim 1", () -> Transitions.claim(store, TOPIC, 10, MINUTE))
				.get(0);
			measure(redis, costs, "ack 1", () -> Transitions.ack(store, TOPIC, "a", a.leaseToken()));
			store.send(TOPIC, List.of(message("b")));
			Transitions.promote(store, TOPIC, 100);
			ClaimedMessage b = Transitions.claim(store, TOPIC, 10, MINUTE).get(0);
			measure(redis, costs, "release 1", () -> Transitions.release(store, TOPIC, "b", b.leaseToken()));
			ClaimedMessage b2 = Transitions.claim(store, TOPIC, 10, MINUTE).get(0);
			measure(redis, costs, "retry 1",
					() -> Transitions.retry(store, TOPIC, "b", b2.leaseToken(), Duration.ZERO, "e"));
			Transitions.promote(store, TOPIC, 100);
			ClaimedMessage b3 = Transitions.claim(store, TOPIC, 10, MINUTE).get(0);
			measure(redis, costs, "dead letter 1",
					() -> Transitions.deadLetter(store, TOPIC, "b", b3.leaseToken(), "e"));
			measure(redis, costs, "replay 1", () -> store.replayDead(TOPIC, List.of("b")));
			Transitions.promote(store, TOPIC, 100);
			Transitions.claim(store, TOPIC, 10, Duration.ZERO);
			measure(redis, costs, "expire 1", () -> Transitions.expireLeases(store, TOPIC, 100, 5));
			measure(redis, costs, "cancel ready 1", () -> store.cancel(TOPIC, "b"));
			store.send(TOPIC, List.of(message("c")));
			measure(redis, costs, "reschedule 1", () -> store.reschedule(TOPIC, "c", Duration.ZERO));
			measure(redis, costs, "stats", () -> store.stats(TOPIC));
			measure(redis, costs, "page ready", () -> store.inspector(TOPIC).page(MessageState.READY, 0, 10));
			System.out.println("cost: " + costs);
		}
	}

	private static <T> T measure(StringRedisTemplate redis, Map<String, Long> costs, String name, Supplier<T> call) {
		long before = CommandStats.of(redis).otherCalls();
		T result = call.get();
		costs.put(name, CommandStats.of(redis).otherCalls() - before);
		return result;
	}

	private static NewMessage message(String id) {
		return new NewMessage(id, false, 1, MessageFormat.encodeBody(Map.of(), "x".getBytes(StandardCharsets.UTF_8)));
	}

}

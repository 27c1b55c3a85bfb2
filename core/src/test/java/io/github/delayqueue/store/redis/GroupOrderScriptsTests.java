package io.github.delayqueue.store.redis;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

import io.github.delayqueue.group.DelayQueueGroups;
import io.github.delayqueue.store.ClaimedMessage;
import io.github.delayqueue.store.GroupView;
import io.github.delayqueue.store.GroupWait;
import io.github.delayqueue.store.MessageState;
import io.github.delayqueue.testsupport.Transitions;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.core.StringRedisTemplate;

import static io.github.delayqueue.store.redis.GroupScriptsSupport.TOPIC;
import static io.github.delayqueue.store.redis.GroupScriptsSupport.claim;
import static io.github.delayqueue.store.redis.GroupScriptsSupport.message;
import static io.github.delayqueue.store.redis.GroupScriptsSupport.sendGroups;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Strict group order through the scripts on a real Redis: a message of a group that fails
 * (or slows down) waits in its group, ready at its rank, while its group waits until its
 * next attempt; then it is claimed before the group's later messages.
 */
class GroupOrderScriptsTests {

	@Test
	void aFailedMessageWaitsInItsGroupAndComesBackBeforeTheGroupsLaterMessages() {
		ScriptTest.run((template, store, redis) -> {
			sendGroups(store, 3, "g");
			ClaimedMessage first = claim(store, 10, 1).get(0);
			assertThat(first.id()).isEqualTo("g-0");
			long due = store.topic(TOPIC)
				.retry("g-0", first.leaseToken(), Duration.ofMinutes(5), "boom", GroupWait.IN_GROUP);
			assertThat(claim(store, 10, 1)).as("the group waits for g-0's next attempt").isEmpty();
			GroupView view = new DelayQueueGroups(store).group(TOPIC, "g");
			assertThat(view.pausedUntil()).isEqualTo(Instant.ofEpochMilli(due));
			assertThat(view.firstReadyIds()).containsExactly("g-0", "g-1", "g-2");
			assertThat(store.inspect(TOPIC, "g-0", 1000).state()).isEqualTo(MessageState.READY);
			assertThat(attemptsOf(redis, store, "g-0")).isEqualTo("1");
			assertThat(redis.opsForZSet().score(store.keys(TOPIC).scheduled(), "g-0")).isNull();
			endPause(store, redis);
			assertThat(handledInOrder(store)).containsExactly("g-0", "g-1", "g-2");
		});
	}

	@Test
	void aSlowDownInStrictOrderWaitsInItsGroupWithoutCountingAnAttempt() {
		ScriptTest.run((template, store, redis) -> {
			sendGroups(store, 2, "g");
			ClaimedMessage first = claim(store, 10, 1).get(0);
			store.topic(TOPIC).postpone("g-0", first.leaseToken(), Duration.ofMinutes(5), GroupWait.IN_GROUP);
			assertThat(attemptsOf(redis, store, "g-0")).isEqualTo("0");
			endPause(store, redis);
			assertThat(handledInOrder(store)).containsExactly("g-0", "g-1");
		});
	}

	@Test
	void aMessageOfNoGroupIsScheduledWhateverTheOrder() {
		ScriptTest.run((template, store, redis) -> {
			store.send(TOPIC, List.of(message("plain", 1)));
			Transitions.promote(store, TOPIC, 1000);
			ClaimedMessage plain = claim(store, 10, 0).get(0);
			long due = store.topic(TOPIC)
				.retry("plain", plain.leaseToken(), Duration.ofMinutes(5), "boom", GroupWait.IN_GROUP);
			assertThat(redis.opsForZSet().score(store.keys(TOPIC).scheduled(), "plain")).isEqualTo((double) due);
			assertThat(redis.hasKey(store.keys(TOPIC).groupPauses())).isFalse();
		});
	}

	/** The attempts in a stored message's header. */
	private static String attemptsOf(StringRedisTemplate redis, RedisMessageStore store, String id) {
		return String.valueOf(redis.opsForHash().get(store.keys(TOPIC).messages(), id)).split(":")[0];
	}

	/** As if the pause's time had come. */
	private static void endPause(RedisMessageStore store, StringRedisTemplate redis) {
		redis.opsForZSet().add(store.keys(TOPIC).groupPauses(), "g", 1);
	}

	/**
	 * Claims one message of the group at a time and acknowledges it, until none is left.
	 */
	private static List<String> handledInOrder(RedisMessageStore store) {
		List<String> handled = new ArrayList<>();
		for (int i = 0; i < 20; i++) {
			List<ClaimedMessage> claimed = claim(store, 1, 1);
			for (ClaimedMessage message : claimed) {
				handled.add(message.id());
				assertThat(Transitions.ack(store, TOPIC, message.id(), message.leaseToken())).isTrue();
			}
		}
		return handled;
	}

}

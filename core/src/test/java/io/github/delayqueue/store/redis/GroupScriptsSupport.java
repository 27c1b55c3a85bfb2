package io.github.delayqueue.store.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;
import java.util.Map;

import io.github.delayqueue.store.ClaimResult;
import io.github.delayqueue.store.ClaimedMessage;
import io.github.delayqueue.store.LeaseTokens;
import io.github.delayqueue.store.MessageFormat;
import io.github.delayqueue.store.MessageStore;
import io.github.delayqueue.store.NewMessage;
import io.github.delayqueue.testsupport.Transitions;

/**
 * What the tests of the group scripts ({@link GroupScriptsTests},
 * {@link GroupReadScriptsTests}, {@link GroupConcurrencyScriptsTests}) send and claim,
 * all on one topic.
 */
final class GroupScriptsSupport {

	static final String TOPIC = "jobs";

	static final Duration LEASE = Duration.ofMinutes(1);

	private GroupScriptsSupport() {
	}

	/**
	 * A message of no group and no priority whose body is the payload {@code x}.
	 * @param id its id
	 * @param dueMillis when it is due
	 * @return the message
	 */
	static NewMessage message(String id, long dueMillis) {
		return new NewMessage(id, false, dueMillis, body());
	}

	/**
	 * The body of every message of these tests: the payload {@code x}, without headers.
	 * @return the body, encoded
	 */
	static byte[] body() {
		return MessageFormat.encodeBody(Map.of(), "x".getBytes(StandardCharsets.UTF_8));
	}

	/**
	 * Sends twelve groups, {@code group-0} to {@code group-11}, of one to twelve messages
	 * ({@code group-g} has {@code m-g-0} to {@code m-g-g}), 78 in all, due at once.
	 * @param store the store
	 */
	static void sendGroupsOfOneToTwelveMessages(MessageStore store) {
		List<NewMessage> messages = new ArrayList<>();
		for (int g = 0; g < 12; g++) {
			for (int i = 0; i <= g; i++) {
				messages.add(message("m-" + g + "-" + i, 1).inGroup("group-" + g));
			}
		}
		store.send(TOPIC, messages);
	}

	/**
	 * Claims for a consumer of its own with a lease of {@link #LEASE}.
	 * @param store the store
	 * @param limit the most messages to take
	 * @param groupConcurrency the most messages of a group in flight, 0 for no limit
	 * @return the messages claimed
	 */
	static List<ClaimedMessage> claim(MessageStore store, int limit, int groupConcurrency) {
		return claimResult(store, limit, groupConcurrency).messages();
	}

	/**
	 * Claims as {@link #claim} does.
	 * @param store the store
	 * @param limit the most messages to take
	 * @param groupConcurrency the most messages of a group in flight, 0 for no limit
	 * @return the claim's result: the messages and whether more may be waiting
	 */
	static ClaimResult claimResult(MessageStore store, int limit, int groupConcurrency) {
		String consumer = LeaseTokens.newToken();
		return Transitions.claim(store, TOPIC, consumer, consumer + ".1", limit, 0, LEASE, null, groupConcurrency);
	}

	/**
	 * Sends messages of groups, each group's due 1 ms, 2 ms, ... after the epoch, and
	 * makes them ready.
	 * @param store the store
	 * @param each the messages of each group, {@code <group>-0} first
	 * @param groups the groups
	 */
	static void sendGroups(MessageStore store, int each, String... groups) {
		List<NewMessage> messages = new ArrayList<>();
		for (String group : groups) {
			IntStream.range(0, each).forEach((i) -> messages.add(message(group + "-" + i, i + 1).inGroup(group)));
		}
		store.send(TOPIC, messages);
		Transitions.promote(store, TOPIC, 1000);
	}

	/**
	 * The ids of messages claimed.
	 * @param claimed the messages
	 * @return their ids, in the order claimed
	 */
	static List<String> ids(List<ClaimedMessage> claimed) {
		return claimed.stream().map(ClaimedMessage::id).toList();
	}

}

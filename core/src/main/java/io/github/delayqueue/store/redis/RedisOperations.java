package io.github.delayqueue.store.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;

import io.github.delayqueue.store.LeaseTokens;
import io.github.delayqueue.store.MessageState;
import io.github.delayqueue.store.MessageStore;
import io.github.delayqueue.store.MessageSummary;
import io.github.delayqueue.store.ReplayResult;

import org.springframework.dao.QueryTimeoutException;

/**
 * The writes that find messages by id, each routed to the message's partition: cancel,
 * reschedule, and the replay and purge of dead letters. On a partitioned topic, one that
 * does not find its message in the id's partition asks the others, where messages of
 * groups are (each in its group's partition), in one more round trip.
 */
final class RedisOperations {

	private final ScriptCalls calls;

	private final PartitionRouter router;

	private final UnansweredSends unanswered;

	private final RedisQueries queries;

	RedisOperations(ScriptCalls calls, PartitionRouter router, UnansweredSends unanswered, RedisQueries queries) {
		this.calls = calls;
		this.router = router;
		this.unanswered = unanswered;
		this.queries = queries;
	}

	/**
	 * Deletes a pending message, once every earlier send of its id by this store has an
	 * outcome.
	 * @param topic the topic
	 * @param id the message id
	 * @return {@code true} if it was scheduled or ready and is now gone
	 */
	boolean cancel(String topic, String id) {
		long deadline = this.unanswered.awaitEarlier(topic, id, this.calls::deadline);
		String partition = this.router.partitionOf(topic, id, deadline);
		// One request, however often it is sent: a run of it after one that cancelled the
		// message (its reply lost) reports that, and cancels nothing else.
		String token = LeaseTokens.newToken();
		return naming(topic, id, "cancel", () -> {
			if (this.router.settlingRefusal(topic, deadline,
					() -> this.calls.run(partition, new ScriptCodecs.Cancel(id, this.router.countOf(partition), token),
							PartitionCounts.remaining(deadline)))) {
				return true;
			}
			// A message of a group is in its group's partition: every copy found is
			// cancelled.
			return this.router
				.runOnOthers(topic, partition, deadline,
						(other) -> new ScriptCodecs.Cancel(id, this.router.countOf(other), token))
				.contains(true);
		});
	}

	/**
	 * Runs a call by id, so that a timeout names the call, its topic and id: a call that
	 * waited for an earlier send of the id may have little of its deadline left.
	 */
	private static <T> T naming(String topic, String id, String call, Supplier<T> run) {
		try {
			return run.get();
		}
		catch (QueryTimeoutException ex) {
			throw new QueryTimeoutException("Topic '" + topic + "' message " + id + ": the " + call
					+ " was not confirmed in time; " + ex.getMessage(), ex);
		}
	}

	/**
	 * Gives a pending message a new due time, once every earlier send of its id by this
	 * store has an outcome.
	 * @param topic the topic
	 * @param id the message id
	 * @param delay the new delay, from Redis time
	 * @return the new due time (epoch ms), or -1 if the message is not pending
	 */
	long reschedule(String topic, String id, Duration delay) {
		long deadline = this.unanswered.awaitEarlier(topic, id, this.calls::deadline);
		String partition = this.router.partitionOf(topic, id, deadline);
		return naming(topic, id, "reschedule", () -> {
			long due = this.router.settlingRefusal(topic, deadline, () -> this.calls.run(partition,
					reschedule(id, delay, partition), PartitionCounts.remaining(deadline)));
			if (due >= 0) {
				return due;
			}
			// A message of a group is in its group's partition.
			return this.router.runOnOthers(topic, partition, deadline, (other) -> reschedule(id, delay, other))
				.stream()
				.mapToLong(Long::longValue)
				.max()
				.orElse(-1);
		});
	}

	private ScriptCodecs.Reschedule reschedule(String id, Duration delay, String partition) {
		return new ScriptCodecs.Reschedule(id, delay, this.calls.signalChannel(partition), partition,
				this.router.countOf(partition));
	}

	/**
	 * Moves dead-lettered messages back to the schedule, due at once, with their attempts
	 * reset to 0 and their last error dropped: looks at up to {@code limit} dead messages
	 * from a rank of the dead-letter set on, oldest first. Reads their ids first and then
	 * replays those ids, so that a call sent twice never replays more than the ones it
	 * read. Messages whose id was sent anew since they died, or whose stored header is
	 * unreadable, stay dead at their rank.
	 * @param topic the topic
	 * @param limit the largest number of dead messages to look at, 1 to 1000
	 * @param fromRank the rank in the dead-letter set to start at, 0 for the oldest
	 * @return the replayed ids and how many were left dead
	 */
	ReplayResult replayDead(String topic, int limit, long fromRank) {
		List<String> ids = deadIds(topic, limit, fromRank);
		return ids.isEmpty() ? new ReplayResult(List.of(), 0) : replayDead(topic, ids);
	}

	/**
	 * Moves the given dead-lettered messages back to the schedule, due at once, with
	 * their attempts reset to 0 and their last error dropped.
	 * @param topic the topic
	 * @param ids the ids, 1 to 1000
	 * @return the replayed ids and how many were left dead or not found
	 */
	ReplayResult replayDead(String topic, List<String> ids) {
		ScriptCodecs.requireIds(ids);
		long deadline = this.calls.deadline();
		List<String> replayed = new ArrayList<>();
		int skipped = 0;
		Map<String, List<String>> byPartition = this.router.byPartition(topic, ids, deadline);
		for (Map.Entry<String, List<String>> partition : byPartition.entrySet()) {
			ReplayResult result = this.router.settlingRefusal(topic, deadline,
					() -> replayDeadIn(partition.getKey(), partition.getValue(), deadline));
			replayed.addAll(result.replayed());
			skipped += result.skipped();
		}
		if (skipped > 0) {
			List<String> elsewhere = replayMissedInOthers(topic, byPartition, Set.copyOf(replayed), deadline);
			replayed.addAll(elsewhere);
			skipped = Math.max(0, skipped - elsewhere.size());
		}
		return new ReplayResult(replayed, skipped);
	}

	/**
	 * Replays, in every other partition of a partitioned topic, the ids not replayed in
	 * their own: a message of a group is in its group's partition.
	 */
	private List<String> replayMissedInOthers(String topic, Map<String, List<String>> byPartition, Set<String> replayed,
			long deadline) {
		List<String> found = new ArrayList<>();
		for (Map.Entry<String, List<String>> partition : byPartition.entrySet()) {
			List<String> missed = partition.getValue().stream().filter((id) -> !replayed.contains(id)).toList();
			if (!missed.isEmpty()) {
				this.router
					.runOnOthers(topic, partition.getKey(), deadline,
							(other) -> new ScriptCodecs.Replay(this.calls.signalChannel(other), other,
									this.router.countOf(other), missed))
					.forEach((result) -> found.addAll(result.replayed()));
			}
		}
		return found;
	}

	private ReplayResult replayDeadIn(String partition, List<String> ids, long deadline) {
		return this.calls.run(partition, new ScriptCodecs.Replay(this.calls.signalChannel(partition), partition,
				this.router.countOf(partition), ids), PartitionCounts.remaining(deadline));
	}

	/**
	 * Deletes the oldest dead-lettered messages of a topic for good. Reads their ids
	 * first and then deletes those ids, so that a call sent twice never deletes more than
	 * the ones it read.
	 * @param topic the topic
	 * @param limit the largest number of messages to delete, 1 to 1000
	 * @return how many were deleted
	 */
	long purgeDead(String topic, int limit) {
		List<String> ids = deadIds(topic, limit, 0);
		return ids.isEmpty() ? 0 : purgeDead(topic, ids);
	}

	/**
	 * Deletes the given dead-lettered messages for good; ids that are not dead are left
	 * alone.
	 * @param topic the topic
	 * @param ids the ids, 1 to 1000
	 * @return how many were deleted
	 */
	long purgeDead(String topic, List<String> ids) {
		ScriptCodecs.requireIds(ids);
		long deadline = this.calls.deadline();
		long deleted = 0;
		for (Map.Entry<String, List<String>> partition : this.router.byPartition(topic, ids, deadline).entrySet()) {
			ScriptCodecs.PurgeDead purge = new ScriptCodecs.PurgeDead(this.router.countOf(partition.getKey()),
					partition.getValue());
			long here = this.router.settlingRefusal(topic, deadline,
					() -> this.calls.run(partition.getKey(), purge, PartitionCounts.remaining(deadline)));
			deleted += here;
			if (here < partition.getValue().size()) {
				// Some were not dead here: a message of a group is in its group's
				// partition.
				deleted += this.router
					.runOnOthers(topic, partition.getKey(), deadline,
							(other) -> new ScriptCodecs.PurgeDead(this.router.countOf(other), partition.getValue()))
					.stream()
					.mapToLong(Long::longValue)
					.sum();
			}
		}
		return deleted;
	}

	private List<String> deadIds(String topic, int limit, long fromRank) {
		if (limit < 1 || limit > MessageStore.MAX_IDS_PER_CALL) {
			throw new IllegalArgumentException(
					"Limit must be 1 to " + MessageStore.MAX_IDS_PER_CALL + ", but was " + limit);
		}
		return this.queries.page(topic, MessageState.DEAD, fromRank, limit)
			.messages()
			.stream()
			.map(MessageSummary::id)
			.toList();
	}

}

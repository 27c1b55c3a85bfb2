package io.github.delayqueue.store.redis;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import io.github.delayqueue.store.ClaimResult;
import io.github.delayqueue.store.GroupWeights;
import io.github.delayqueue.store.DeadLetterRetention;
import io.github.delayqueue.store.ErrorTexts;
import io.github.delayqueue.store.GroupWait;
import io.github.delayqueue.store.LeaseExpiryResult;
import io.github.delayqueue.store.MessageStore;
import io.github.delayqueue.store.PromoteResult;
import io.github.delayqueue.store.RateLimit;
import io.github.delayqueue.store.TopicPartitions;
import io.github.delayqueue.store.TopicStore;
import io.github.delayqueue.store.WriteGate;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * One partition's transitions on Redis, each one script call.
 */
final class RedisTopicStore implements TopicStore {

	private static final Log logger = LogFactory.getLog(RedisTopicStore.class);

	/**
	 * About how many entries of the groups hash a call of {@code regroup.lua} looks at.
	 */
	private static final int REGROUP_CHUNK = 500;

	/**
	 * The most messages in flight whose groups one recount of the group slots counts.
	 */
	private static final int MAX_RECOUNTED_IN_FLIGHT = 5000;

	private final ScriptCalls calls;

	private final PartitionRouter router;

	private final WrongTypeKeys wrongTypeKeys;

	private final DeadSets deadSets;

	private final String partition;

	private final PartitionReads reads;

	RedisTopicStore(ScriptCalls calls, PartitionRouter router, WrongTypeKeys wrongTypeKeys, DeadSets deadSets,
			String partition, PartitionReads reads) {
		this.reads = reads;
		this.calls = calls;
		this.router = router;
		this.wrongTypeKeys = wrongTypeKeys;
		this.deadSets = deadSets;
		this.partition = partition;
	}

	@Override
	public String topic() {
		return this.partition;
	}

	@Override
	public @Nullable String server() {
		return this.reads.serverOf(this.partition);
	}

	@Override
	public CompletableFuture<PromoteResult> promote(int limit, Duration lookahead) {
		return this.calls.submit(this.partition, new ScriptCodecs.Promote(limit, signalChannel(), this.partition,
				lookahead, this.router.countOf(this.partition)));
	}

	@Override
	public CompletableFuture<ClaimResult> claim(String consumer, String token, int limit, int earlyLimit,
			Duration lease, @Nullable RateLimit rateLimit, int groupConcurrency, WriteGate gate) {
		return claim(consumer, token, limit, earlyLimit, lease, rateLimit, groupConcurrency, GroupWeights.NONE, null,
				gate);
	}

	@Override
	public CompletableFuture<ClaimResult> claim(String consumer, String token, int limit, int earlyLimit,
			Duration lease, @Nullable RateLimit rateLimit, int groupConcurrency, GroupWeights weights,
			@Nullable RateLimit groupRateLimit, WriteGate gate) {
		if (limit < 1 || limit > MessageStore.MAX_IDS_PER_CALL) {
			throw new IllegalArgumentException(
					"Claim limit must be 1 to " + MessageStore.MAX_IDS_PER_CALL + ", but was " + limit);
		}
		return this.calls.submit(this.partition, consumer, new ScriptCodecs.Claim(limit, lease, earlyLimit, token,
				rateLimit, groupConcurrency, weights, groupRateLimit), gate);
	}

	@Override
	public CompletableFuture<List<String>> recountGroupSlots() {
		return this.calls
			.submit(this.partition,
					new ScriptCodecs.RecountSlots(signalChannel(), this.partition, MAX_RECOUNTED_IN_FLIGHT))
			.thenApply((recount) -> {
				if (recount.skipped()) {
					logger.debug("Topic '" + this.partition + "': more than " + MAX_RECOUNTED_IN_FLIGHT
							+ " messages in flight, the group slots were not recounted");
				}
				return recount.corrected();
			});
	}

	@Override
	public CompletableFuture<List<Boolean>> ack(List<String> ids, List<String> leaseTokens) {
		return this.calls.submit(this.partition,
				new ScriptCodecs.Ack(signalChannel(), this.partition, ids, leaseTokens));
	}

	/**
	 * {@inheritDoc}
	 * <p>
	 * Sent in full ({@code EVAL}), as {@link #release(List, List)} is.
	 */
	@Override
	public CompletableFuture<List<Boolean>> ackAtStop(List<String> ids, List<String> leaseTokens) {
		return this.calls.submitInFull(this.partition,
				new ScriptCodecs.Ack(signalChannel(), this.partition, ids, leaseTokens));
	}

	@Override
	public long retry(String id, String leaseToken, Duration backoff, @Nullable String error) {
		return retry(id, leaseToken, backoff, error, GroupWait.NONE);
	}

	@Override
	public long retry(String id, String leaseToken, Duration backoff, @Nullable String error, GroupWait groupWait) {
		String kept = (error == null) ? "" : ErrorTexts.bounded(error);
		return this.calls.run(this.partition, new ScriptCodecs.Retry(id, leaseToken, backoff, signalChannel(),
				this.partition, true, kept, groupWait));
	}

	@Override
	public long postpone(String id, String leaseToken, Duration delay) {
		return postpone(id, leaseToken, delay, GroupWait.NONE);
	}

	@Override
	public long postpone(String id, String leaseToken, Duration delay, GroupWait groupWait) {
		return this.calls.run(this.partition,
				new ScriptCodecs.Retry(id, leaseToken, delay, signalChannel(), this.partition, false, "", groupWait));
	}

	/**
	 * {@inheritDoc}
	 * <p>
	 * Sent in full ({@code EVAL}), at most once in a message's life: a handler that
	 * failed on its last attempt may be cut off by a stop while it waits for the reply,
	 * and the connection close before a {@code NOSCRIPT} reply (Redis lost its scripts)
	 * could be answered by sending the script again; the message would then stay in
	 * flight until its lease expires and be buried without its error.
	 */
	@Override
	public boolean deadLetter(String id, String leaseToken, String error) {
		boolean buried = this.calls.runInFull(this.partition,
				new ScriptCodecs.DeadLetter(id, leaseToken, ErrorTexts.bounded(error),
						this.calls.signalChannel(deadLetters()), deadLetters(), retention(),
						this.deadSets.isListened(this.partition), signalChannel(), this.partition));
		this.deadSets.buried(this.partition, buried ? 1 : 0);
		return buried;
	}

	/**
	 * {@inheritDoc}
	 * <p>
	 * Sent in full ({@code EVAL}): a hand-back is most often a stop's, after which the
	 * connection may close before a {@code NOSCRIPT} reply (Redis lost its scripts) could
	 * be answered by sending the script again; in full, Redis runs it as it arrives.
	 */
	@Override
	public CompletableFuture<List<Boolean>> release(List<String> ids, List<String> leaseTokens) {
		return this.calls.submitInFull(this.partition,
				new ScriptCodecs.Release(signalChannel(), this.partition, ids, leaseTokens));
	}

	/**
	 * {@inheritDoc}
	 * <p>
	 * Sent in full ({@code EVAL}): on the connection shared by every call (the default of
	 * Spring Data Redis with Lettuce) Redis runs it after the claim even if the caller
	 * never reads either reply, e.g. because the connection closes right after.
	 */
	@Override
	public CompletableFuture<List<String>> releaseClaim(String consumer, String token, Duration lease) {
		return this.calls.submitInFull(this.partition, consumer,
				new ScriptCodecs.ReleaseClaim(signalChannel(), this.partition, token, lease));
	}

	@Override
	public CompletableFuture<List<Long>> extendLeases(List<String> ids, List<String> leaseTokens, Duration length) {
		return this.calls.submit(this.partition, new ScriptCodecs.ExtendLeases(length, ids, leaseTokens));
	}

	@Override
	public LeaseExpiryResult expireLeases(int limit, int maxAttempts) {
		LeaseExpiryResult result = this.calls.run(this.partition,
				new ScriptCodecs.ExpireLeases(limit, maxAttempts, signalChannel(), this.partition,
						this.calls.signalChannel(deadLetters()), deadLetters(), retention(),
						this.deadSets.isListened(this.partition)));
		this.deadSets.buried(this.partition, result.deadLettered().size());
		return result;
	}

	@Override
	public List<String> repairAfter(RuntimeException failure) {
		if (!WrongTypeKeys.isWrongType(failure)) {
			return List.of();
		}
		List<String> moved = this.wrongTypeKeys.quarantine(this.partition);
		String groupReady = this.calls.keys(this.partition).groupReady();
		if (moved.stream().anyMatch((key) -> key.startsWith(groupReady + " "))) {
			try {
				regroup();
			}
			catch (RuntimeException ex) {
				logger.warn("Topic '" + this.partition + "': the group ready set was moved aside, and making its "
						+ "messages ready again failed; they stay stored but are not claimed until a message of "
						+ "their group is handed back or the topic's repair runs again", ex);
			}
		}
		return moved;
	}

	/**
	 * Makes the ready messages of groups ready again in their groups, as the group ready
	 * set that indexed them was moved aside.
	 */
	private void regroup() {
		String cursor = "0";
		long madeReady = 0;
		do {
			ScriptCodecs.Regrouped regrouped = this.calls.run(this.partition,
					new ScriptCodecs.Regroup(signalChannel(), this.partition, cursor, REGROUP_CHUNK));
			cursor = regrouped.cursor();
			madeReady += regrouped.madeReady();
		}
		while (!"0".equals(cursor));
		logger.warn("Topic '" + this.partition + "': the ready messages of groups lost with the group ready set made "
				+ "ready again: " + madeReady);
	}

	/**
	 * The retention of this partition: its share of its topic's (a dead-letter queue
	 * partition shares the count of the topic whose dead letters it holds).
	 */
	private DeadLetterRetention retention() {
		String counted = TopicPartitions.isDeadLetters(this.partition)
				? this.partition.substring(0, this.partition.length() - TopicPartitions.deadLettersOf("").length())
				: this.partition;
		return this.deadSets.retentionOf(this.partition).perPartition(this.router.countOf(counted));
	}

	private String deadLetters() {
		return TopicPartitions.deadLettersOf(this.partition);
	}

	private String signalChannel() {
		return this.calls.signalChannel(this.partition);
	}

}

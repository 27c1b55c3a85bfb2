package io.github.delayqueue.store;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import org.jspecify.annotations.Nullable;

/**
 * The state transitions of one topic's messages, one method per script: the port the
 * runtime (brokers and consumers) works through. {@link MessageStore#topic(String)} gives
 * the Redis one; tests of the runtime's policies may use a fake.
 */
public interface TopicStore {

	/**
	 * The most characters of an error text kept with a message: a failed attempt's error
	 * for the next delivery, a dead letter's last error ({@link ErrorTexts}).
	 */
	int MAX_ERROR_LENGTH = 2000;

	/**
	 * @return the topic
	 */
	String topic();

	/**
	 * Tells which server holds this partition, from what the store knows without asking
	 * Redis (on a Cluster, its topology), so that a log of an outage can name it.
	 * @return the primary, as {@code host:port}, or {@code null} where the store does not
	 * know it (outside a Cluster); this default knows none
	 */
	default @Nullable String server() {
		return null;
	}

	/**
	 * Moves messages that are due, or due within the lookahead, to the ready list,
	 * without waiting for the reply: many topics' calls then share round trips. The
	 * future may complete on the Redis client's I/O thread, where nothing may block.
	 * @param limit the largest number of messages to move
	 * @param lookahead how long before their due time messages may move
	 * @return what moved, when the next message is due and when the next lease ends
	 */
	CompletableFuture<PromoteResult> promote(int limit, Duration lookahead);

	/**
	 * Leases ready messages; the same request (consumer and token) again returns what it
	 * leased. Does not wait for the reply; the future may complete on the Redis client's
	 * I/O thread, where nothing may block.
	 * @param consumer the consumer's id
	 * @param token the lease token, new for each claim request
	 * @param limit the largest number of due messages to claim
	 * @param earlyLimit the largest number of messages not yet due to claim
	 * @param lease how long the lease lasts
	 * @param rateLimit the topic's rate limit (this partition's share), or {@code null}
	 * for none; with one, the claim takes no more due messages than its window, shared by
	 * every consumer, has room for, and none early
	 * @param groupConcurrency most messages of one group in flight at once, across every
	 * consumer, or {@code 0} for no limit; a group at its limit is passed over until one
	 * of its messages leaves flight
	 * @param gate lets the claim be written to Redis, and written again if Redis lost its
	 * script; the future fails when it does not
	 * @return the claimed messages, whether more may be ready, and how long the rate
	 * limit holds the rest back
	 */
	CompletableFuture<ClaimResult> claim(String consumer, String token, int limit, int earlyLimit, Duration lease,
			@Nullable RateLimit rateLimit, int groupConcurrency, WriteGate gate);

	/**
	 * Leases ready messages as
	 * {@link #claim(String, String, int, int, Duration, RateLimit, int, WriteGate)} does,
	 * giving groups turns by their weights and holding each to a rate. This default gives
	 * every group the same turn and no rate: a store that does not weigh or pace groups.
	 * @param consumer the consumer's id
	 * @param token the lease token, new for each claim request
	 * @param limit the largest number of due messages to claim
	 * @param earlyLimit the largest number of messages not yet due to claim
	 * @param lease how long the lease lasts
	 * @param rateLimit the topic's rate limit (this partition's share), or {@code null}
	 * @param groupConcurrency most messages of one group in flight at once, or {@code 0}
	 * @param weights the weights of the groups that weigh more than 1
	 * @param groupRateLimit most messages of one group claimed in any window of its
	 * period, by every consumer together, or {@code null} for none
	 * @param gate lets the claim be written to Redis
	 * @return the claimed messages, whether more may be ready, and how long the rate
	 * limit holds the rest back
	 */
	default CompletableFuture<ClaimResult> claim(String consumer, String token, int limit, int earlyLimit,
			Duration lease, @Nullable RateLimit rateLimit, int groupConcurrency, GroupWeights weights,
			@Nullable RateLimit groupRateLimit, WriteGate gate) {
		return claim(consumer, token, limit, earlyLimit, lease, rateLimit, groupConcurrency, gate);
	}

	/**
	 * Sets each group's count of messages in flight (its slots taken, which a group
	 * concurrency limits) from the messages in flight, so that a count that drifted is
	 * set right, and lets a group parked at its limit whose count went down be claimed
	 * again. Does not wait for the reply.
	 * @return each group whose count was corrected, as {@code "<group>: <before> ->
	 * <after>"}; none when every count was right, or when too many messages are in flight
	 * to count them in one call
	 */
	default CompletableFuture<List<String>> recountGroupSlots() {
		return CompletableFuture.completedFuture(List.of());
	}

	/**
	 * Acknowledges messages in one call: each is deleted with all its data. Does not wait
	 * for the reply; the future may complete on the Redis client's I/O thread, where
	 * nothing may block.
	 * @param ids the message ids, 1 to {@value MessageStore#MAX_IDS_PER_CALL}
	 * @param leaseTokens the lease token held for each id
	 * @return for each id, whether it was acknowledged ({@code false}: its lease had been
	 * lost)
	 */
	CompletableFuture<List<Boolean>> ack(List<String> ids, List<String> leaseTokens);

	/**
	 * Acknowledges messages as {@link #ack(List, List)} does, for the last
	 * acknowledgements of a stop: sent so that the store carries them out even if their
	 * reply is never read, as the connection may close right after.
	 * @param ids the message ids, 1 to {@value MessageStore#MAX_IDS_PER_CALL}
	 * @param leaseTokens the lease token held for each id
	 * @return for each id, whether it was acknowledged
	 */
	default CompletableFuture<List<Boolean>> ackAtStop(List<String> ids, List<String> leaseTokens) {
		return ack(ids, leaseTokens);
	}

	/**
	 * Schedules the next attempt of a message whose delivery failed.
	 * @param id the message id
	 * @param leaseToken the lease token held
	 * @param backoff how long to wait before the next attempt
	 * @param error the error of the failed attempt, kept for the next delivery
	 * ({@link MessageFormat#ERROR_HEADER}), bounded by {@link ErrorTexts#bounded}, or
	 * {@code null} for none
	 * @return the due time of the next attempt (epoch ms), or -1 if the lease had been
	 * lost
	 */
	long retry(String id, String leaseToken, Duration backoff, @Nullable String error);

	/**
	 * Schedules a message again after a delay without counting an attempt: its handler
	 * asked to slow down.
	 * @param id the message id
	 * @param leaseToken the lease token held
	 * @param delay how long to wait before the next delivery
	 * @return the new due time (epoch ms), or -1 if the lease had been lost
	 */
	long postpone(String id, String leaseToken, Duration delay);

	/**
	 * Schedules a message again after a delay without counting an attempt, as
	 * {@link #postpone(String, String, Duration)} does; a message of a group may hold its
	 * group back meanwhile, for every consumer of the topic (a pause of the group that
	 * ends later, or one until resumed, is kept). This default postpones only.
	 * @param id the message id
	 * @param leaseToken the lease token held
	 * @param delay how long to wait before the next delivery
	 * @param groupWait what a message of a group does to its group meanwhile
	 * @return the new due time (epoch ms), or -1 if the lease had been lost
	 */
	default long postpone(String id, String leaseToken, Duration delay, GroupWait groupWait) {
		return postpone(id, leaseToken, delay);
	}

	/**
	 * Schedules the next attempt of a message after a backoff, counting the failed one,
	 * as {@link #retry(String, String, Duration, String)} does; a message of a group may
	 * hold its group back meanwhile, for every consumer of the topic. This default
	 * retries only.
	 * @param id the message id
	 * @param leaseToken the lease token held
	 * @param backoff how long to wait before the next attempt
	 * @param error the error of the failed attempt, or {@code null}
	 * @param groupWait what a message of a group does to its group meanwhile
	 * @return the due time of the next attempt (epoch ms), or -1 if the lease had been
	 * lost
	 */
	default long retry(String id, String leaseToken, Duration backoff, @Nullable String error, GroupWait groupWait) {
		return retry(id, leaseToken, backoff, error);
	}

	/**
	 * Moves a message to the dead-letter set.
	 * @param id the message id
	 * @param leaseToken the lease token held
	 * @param error the last error, kept bounded by {@link ErrorTexts#bounded}
	 * @return {@code true} if dead-lettered, {@code false} if the lease had been lost
	 */
	boolean deadLetter(String id, String leaseToken, String error);

	/**
	 * Hands unfinished messages back in one call, each ready again at once. Does not wait
	 * for the reply; the future may complete on the Redis client's I/O thread, where
	 * nothing may block.
	 * @param ids the message ids, 1 to {@value MessageStore#MAX_IDS_PER_CALL}
	 * @param leaseTokens the lease token held for each id
	 * @return for each id, whether it is ready again ({@code false}: its lease had been
	 * lost)
	 */
	CompletableFuture<List<Boolean>> release(List<String> ids, List<String> leaseTokens);

	/**
	 * Hands back what a claim leased, when the consumer does not take the claim's reply
	 * (it stopped while the claim was unanswered, or after the claim failed): each
	 * message of the consumer's last claim still leased to the claim's token is ready
	 * again at once. Does not wait for the reply; on a connection shared with the claim
	 * it runs after the claim even if neither reply is ever read. The future may complete
	 * on the Redis client's I/O thread, where nothing may block.
	 * @param consumer the consumer's id
	 * @param token the claim's lease token
	 * @param lease the claim's lease length: if the claim has not run yet (the hand-back
	 * went out on another connection), it is kept from leasing anything for that long
	 * @return the ids handed back; none if the consumer's last claim has another token or
	 * leased nothing
	 */
	CompletableFuture<List<String>> releaseClaim(String consumer, String token, Duration lease);

	/**
	 * Extends leases in one call. Does not wait for the reply; the future may complete on
	 * the Redis client's I/O thread, where nothing may block.
	 * @param ids the message ids, 1 to {@value MessageStore#MAX_IDS_PER_CALL}
	 * @param leaseTokens the lease token held for each id
	 * @param length the new lease length
	 * @return for each id, its new lease deadline (epoch ms), or -1 if its lease had been
	 * lost
	 */
	CompletableFuture<List<Long>> extendLeases(List<String> ids, List<String> leaseTokens, Duration length);

	/**
	 * Takes back messages whose lease has expired.
	 * @param limit the largest number of messages to take back
	 * @param maxAttempts the topic's maximum attempts
	 * @return what was taken back and when the next lease ends
	 */
	LeaseExpiryResult expireLeases(int limit, int maxAttempts);

	/**
	 * Repairs the topic after a failed call, when keys of the wrong type caused it: moves
	 * them aside so that the topic keeps moving.
	 * @param failure the failure of a call
	 * @return the keys moved aside, described; empty when the failure had another cause
	 */
	List<String> repairAfter(RuntimeException failure);

}

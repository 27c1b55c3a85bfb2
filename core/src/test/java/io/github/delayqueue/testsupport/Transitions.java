package io.github.delayqueue.testsupport;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

import io.github.delayqueue.store.ClaimResult;
import io.github.delayqueue.store.ClaimedMessage;
import io.github.delayqueue.store.LeaseExpiryResult;
import io.github.delayqueue.store.LeaseTokens;
import io.github.delayqueue.store.MessageStore;
import io.github.delayqueue.store.PromoteResult;
import io.github.delayqueue.store.RateLimit;
import io.github.delayqueue.store.TopicStore;
import io.github.delayqueue.store.WriteGate;
import org.jspecify.annotations.Nullable;

/**
 * The state transitions of a topic's messages, done by a test as the runtime does them:
 * through the port ({@link MessageStore#topic(String)}, a {@link TopicStore}), waiting
 * for each reply. The one way tests move messages by hand; the store itself has no
 * second, string-topic API for them.
 */
public final class Transitions {

	private Transitions() {
	}

	/**
	 * Moves the due messages of a topic to its ready list.
	 * @param store the store
	 * @param topic the topic (or partition)
	 * @param limit the largest number of messages to move
	 * @return what moved and when the next message is due
	 */
	public static PromoteResult promote(MessageStore store, String topic, int limit) {
		return promote(store, topic, limit, Duration.ZERO);
	}

	/**
	 * Moves the messages of a topic that are due, or due within the lookahead, to its
	 * ready list.
	 * @param store the store
	 * @param topic the topic (or partition)
	 * @param limit the largest number of messages to move
	 * @param lookahead how long before their due time messages may move
	 * @return what moved, when the next message is due and when the next lease ends
	 */
	public static PromoteResult promote(MessageStore store, String topic, int limit, Duration lookahead) {
		return await(store.topic(topic).promote(limit, lookahead));
	}

	/**
	 * Leases up to {@code limit} due ready messages of a topic for a new consumer, under
	 * a new lease token, and nothing early.
	 * @param store the store
	 * @param topic the topic (or partition)
	 * @param limit the largest number of messages to claim
	 * @param lease how long the lease lasts
	 * @return the claimed messages, possibly none
	 */
	public static List<ClaimedMessage> claim(MessageStore store, String topic, int limit, Duration lease) {
		String consumer = LeaseTokens.newToken();
		return claim(store, topic, consumer, consumer + ".0", limit, 0, lease).messages();
	}

	/**
	 * Leases ready messages of a topic, without a rate limit.
	 * @param store the store
	 * @param topic the topic (or partition)
	 * @param consumer the consumer's id
	 * @param token the lease token, new for each claim request
	 * @param limit the largest number of due messages to claim
	 * @param earlyLimit the largest number of messages not yet due to claim
	 * @param lease how long the lease lasts
	 * @return the claimed messages and whether more may be ready
	 */
	public static ClaimResult claim(MessageStore store, String topic, String consumer, String token, int limit,
			int earlyLimit, Duration lease) {
		return claim(store, topic, consumer, token, limit, earlyLimit, lease, null);
	}

	/**
	 * Leases ready messages of a topic within a rate limit.
	 * @param store the store
	 * @param topic the topic (or partition)
	 * @param consumer the consumer's id
	 * @param token the lease token, new for each claim request
	 * @param limit the largest number of due messages to claim
	 * @param earlyLimit the largest number of messages not yet due to claim
	 * @param lease how long the lease lasts
	 * @param rateLimit the rate limit, or {@code null} for none
	 * @return the claimed messages, whether more may be ready, and how long the rate
	 * limit holds the rest back
	 */
	public static ClaimResult claim(MessageStore store, String topic, String consumer, String token, int limit,
			int earlyLimit, Duration lease, @Nullable RateLimit rateLimit) {
		return claim(store, topic, consumer, token, limit, earlyLimit, lease, rateLimit, 0);
	}

	/**
	 * Leases ready messages of a topic within a rate limit and a group concurrency.
	 * @param store the store
	 * @param topic the topic (or partition)
	 * @param consumer the consumer's id
	 * @param token the lease token, new for each claim request
	 * @param limit the largest number of due messages to claim
	 * @param earlyLimit the largest number of messages not yet due to claim
	 * @param lease how long the lease lasts
	 * @param rateLimit the rate limit, or {@code null} for none
	 * @param groupConcurrency most messages of one group in flight, or {@code 0}
	 * @return the claimed messages, whether more may be ready, and how long the rate
	 * limit holds the rest back
	 */
	public static ClaimResult claim(MessageStore store, String topic, String consumer, String token, int limit,
			int earlyLimit, Duration lease, @Nullable RateLimit rateLimit, int groupConcurrency) {
		return await(store.topic(topic)
			.claim(consumer, token, limit, earlyLimit, lease, rateLimit, groupConcurrency, WriteGate.OPEN));
	}

	/**
	 * Takes every message a topic's claims give, as a listener would: claims up to 10 due
	 * messages at a time for a new consumer and acknowledges each, until a claim takes
	 * none and says no more waits (50 claims at most).
	 * @param store the store
	 * @param topic the topic (or partition)
	 * @param lease how long each lease lasts
	 * @return the ids of the messages taken, in the order claimed
	 * @throws IllegalStateException if an acknowledgement is refused (the lease lost)
	 */
	public static List<String> drain(MessageStore store, String topic, Duration lease) {
		List<String> ids = new ArrayList<>();
		for (int round = 0; round < 50; round++) {
			String consumer = LeaseTokens.newToken();
			ClaimResult result = claim(store, topic, consumer, consumer + ".1", 10, 0, lease);
			for (ClaimedMessage message : result.messages()) {
				ids.add(message.id());
				if (!ack(store, topic, message.id(), message.leaseToken())) {
					throw new IllegalStateException("The acknowledgement of " + message.id() + " was refused");
				}
			}
			if (result.messages().isEmpty() && !result.more()) {
				break;
			}
		}
		return ids;
	}

	/**
	 * Acknowledges a message.
	 * @param store the store
	 * @param topic the topic (or partition)
	 * @param id the message id
	 * @param leaseToken the lease token held
	 * @return {@code true} if acknowledged, {@code false} if the lease had been lost
	 */
	public static boolean ack(MessageStore store, String topic, String id, String leaseToken) {
		return ack(store, topic, List.of(id), List.of(leaseToken)).get(0);
	}

	/**
	 * Acknowledges messages in one call.
	 * @param store the store
	 * @param topic the topic (or partition)
	 * @param ids the message ids
	 * @param leaseTokens the lease token held for each id
	 * @return for each id, whether it was acknowledged
	 */
	public static List<Boolean> ack(MessageStore store, String topic, List<String> ids, List<String> leaseTokens) {
		return await(store.topic(topic).ack(ids, leaseTokens));
	}

	/**
	 * Schedules the next attempt of a message whose delivery failed.
	 * @param store the store
	 * @param topic the topic (or partition)
	 * @param id the message id
	 * @param leaseToken the lease token held
	 * @param backoff how long to wait before the next attempt
	 * @param error the error of the failed attempt, or {@code null} for none
	 * @return the due time of the next attempt (epoch ms), or -1 if the lease had been
	 * lost
	 */
	public static long retry(MessageStore store, String topic, String id, String leaseToken, Duration backoff,
			@Nullable String error) {
		return store.topic(topic).retry(id, leaseToken, backoff, error);
	}

	/**
	 * Schedules a message again after a delay without counting an attempt.
	 * @param store the store
	 * @param topic the topic (or partition)
	 * @param id the message id
	 * @param leaseToken the lease token held
	 * @param delay how long to wait before the next delivery
	 * @return the new due time (epoch ms), or -1 if the lease had been lost
	 */
	public static long postpone(MessageStore store, String topic, String id, String leaseToken, Duration delay) {
		return store.topic(topic).postpone(id, leaseToken, delay);
	}

	/**
	 * Moves a message to the dead-letter set.
	 * @param store the store
	 * @param topic the topic (or partition)
	 * @param id the message id
	 * @param leaseToken the lease token held
	 * @param error the last error
	 * @return {@code true} if dead-lettered, {@code false} if the lease had been lost
	 */
	public static boolean deadLetter(MessageStore store, String topic, String id, String leaseToken, String error) {
		return store.topic(topic).deadLetter(id, leaseToken, error);
	}

	/**
	 * Hands an unfinished message back: ready again at once.
	 * @param store the store
	 * @param topic the topic (or partition)
	 * @param id the message id
	 * @param leaseToken the lease token held
	 * @return {@code true} if it is ready again, {@code false} if the lease had been lost
	 */
	public static boolean release(MessageStore store, String topic, String id, String leaseToken) {
		return release(store, topic, List.of(id), List.of(leaseToken)).get(0);
	}

	/**
	 * Hands unfinished messages back in one call.
	 * @param store the store
	 * @param topic the topic (or partition)
	 * @param ids the message ids
	 * @param leaseTokens the lease token held for each id
	 * @return for each id, whether it is ready again
	 */
	public static List<Boolean> release(MessageStore store, String topic, List<String> ids, List<String> leaseTokens) {
		return await(store.topic(topic).release(ids, leaseTokens));
	}

	/**
	 * Hands back what a claim leased, from the consumer's record of its last claim.
	 * @param store the store
	 * @param topic the topic (or partition)
	 * @param consumer the consumer's id
	 * @param token the claim's lease token
	 * @param lease the claim's lease length
	 * @return the ids handed back, in the order claimed
	 */
	public static List<String> releaseClaim(MessageStore store, String topic, String consumer, String token,
			Duration lease) {
		return await(store.topic(topic).releaseClaim(consumer, token, lease));
	}

	/**
	 * Extends the lease of a message.
	 * @param store the store
	 * @param topic the topic (or partition)
	 * @param id the message id
	 * @param leaseToken the lease token held
	 * @param length the new lease length
	 * @return the new lease deadline (epoch ms), or -1 if the lease had been lost
	 */
	public static long extendLease(MessageStore store, String topic, String id, String leaseToken, Duration length) {
		return extendLeases(store, topic, List.of(id), List.of(leaseToken), length).get(0);
	}

	/**
	 * Extends leases in one call.
	 * @param store the store
	 * @param topic the topic (or partition)
	 * @param ids the message ids
	 * @param leaseTokens the lease token held for each id
	 * @param length the new lease length
	 * @return for each id, its new lease deadline (epoch ms), or -1 if its lease had been
	 * lost
	 */
	public static List<Long> extendLeases(MessageStore store, String topic, List<String> ids, List<String> leaseTokens,
			Duration length) {
		return await(store.topic(topic).extendLeases(ids, leaseTokens, length));
	}

	/**
	 * Takes back the messages of a topic whose lease has expired.
	 * @param store the store
	 * @param topic the topic (or partition)
	 * @param limit the largest number of messages to take back
	 * @param maxAttempts the topic's maximum attempts
	 * @return what was taken back and when the next lease ends
	 */
	public static LeaseExpiryResult expireLeases(MessageStore store, String topic, int limit, int maxAttempts) {
		return store.topic(topic).expireLeases(limit, maxAttempts);
	}

	/**
	 * Waits for a reply, failing with the call's own failure as the store's callers see
	 * it (not wrapped in a {@link CompletionException}).
	 */
	private static <T> T await(CompletableFuture<T> call) {
		try {
			return call.join();
		}
		catch (CompletionException ex) {
			if (ex.getCause() instanceof RuntimeException failure) {
				throw failure;
			}
			if (ex.getCause() instanceof Error error) {
				throw error;
			}
			throw ex;
		}
	}

}

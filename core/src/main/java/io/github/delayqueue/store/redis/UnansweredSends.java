package io.github.delayqueue.store.redis;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.LongSupplier;

import io.github.delayqueue.store.NewMessage;

import org.springframework.dao.QueryTimeoutException;

/**
 * The sends of this store whose outcome is not known yet, by topic and message id, so
 * that a call by id (cancel, reschedule, inspect) never overtakes a send of that id made
 * before it: a send may wait for room among the calls of its partition, for the lane, or
 * to be sent again, while a call by id goes to Redis at once. The call first waits for
 * the outcome of the last unanswered send of its id, whatever it is; once a send's call
 * is written, whatever follows it on the shared connection runs after it in Redis. One
 * map entry per message, put when it is sent and removed when it is answered.
 * Thread-safe.
 */
final class UnansweredSends {

	/**
	 * How long past its first deadline a call by id waits for an earlier send's outcome:
	 * that send's own deadline may be the same instant (made just before, with the same
	 * timeout), and its timer may fire a little after the call's.
	 */
	private static final long GRACE_NANOS = TimeUnit.MILLISECONDS.toNanos(200);

	private final Map<String, Map<String, CompletableFuture<?>>> byTopic = new ConcurrentHashMap<>();

	/**
	 * Notes the messages of a send until its outcome is known.
	 * @param messagesByTopic the messages of each topic
	 * @param outcome completes, either way, once no call of the send is left to write
	 */
	void track(Map<String, List<NewMessage>> messagesByTopic, CompletableFuture<?> outcome) {
		if (outcome.isDone()) {
			return;
		}
		// A copy: the caller may clear its map once the send returns, before the outcome
		// is handled on the I/O thread.
		Map<String, List<String>> sent = new LinkedHashMap<>();
		messagesByTopic.forEach((topic, messages) -> sent.put(topic, messages.stream().map(NewMessage::id).toList()));
		sent.forEach((topic, messageIds) -> {
			Map<String, CompletableFuture<?>> ids = this.byTopic.computeIfAbsent(topic,
					(name) -> new ConcurrentHashMap<>());
			for (String id : messageIds) {
				CompletableFuture<?> tracked = ids.merge(id, outcome, UnansweredSends::after);
				if (tracked != outcome) {
					// An earlier send of the id is unanswered too: wait for both.
					tracked.whenComplete((result, failure) -> ids.remove(id, tracked));
				}
			}
		});
		outcome.whenComplete((result, failure) -> sent.forEach((topic, messageIds) -> {
			Map<String, CompletableFuture<?>> ids = this.byTopic.get(topic);
			for (String id : messageIds) {
				ids.remove(id, outcome);
			}
		}));
	}

	private static CompletableFuture<?> after(CompletableFuture<?> earlier, CompletableFuture<?> later) {
		return (earlier == later || earlier.isDone()) ? later : CompletableFuture.allOf(earlier, later);
	}

	/**
	 * Waits until every send of a message made before by this store has an outcome, and
	 * gives the call by id its deadline: its own timeout from when it may be made. So a
	 * call right after a send that waited in this store (for room, for a thread) until
	 * its own expiry still has its whole timeout for itself, and a call by id takes at
	 * most twice its timeout in all, and a fifth of a second (the wait for the earlier
	 * send goes that much past the first deadline, as that send's timer may fire a little
	 * after the call's).
	 * @param topic the topic
	 * @param id the message id
	 * @param deadlines the deadline ({@link System#nanoTime()}) of a call made now
	 * @return the deadline of the call by id
	 * @throws QueryTimeoutException if a send of the id is still unanswered a fifth of a
	 * second past the first deadline: the call by id is not made
	 */
	long awaitEarlier(String topic, String id, LongSupplier deadlines) {
		long deadline = deadlines.getAsLong();
		Map<String, CompletableFuture<?>> ids = this.byTopic.get(topic);
		CompletableFuture<?> earlier = (ids != null) ? ids.get(id) : null;
		if (earlier == null || earlier.isDone()) {
			return deadline;
		}
		try {
			earlier.get(Math.max(0, deadline + GRACE_NANOS - System.nanoTime()), TimeUnit.NANOSECONDS);
		}
		catch (ExecutionException ex) {
			// Its outcome is known, and that is all the call by id waits for.
		}
		catch (TimeoutException ex) {
			throw new QueryTimeoutException("Topic '" + topic + "' message " + id
					+ ": an earlier send of this id by this application had no answer from Redis in time, so the call"
					+ " by id was not made (it would have run before that send)", ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new QueryTimeoutException(
					"Topic '" + topic + "' message " + id
							+ ": interrupted while waiting for an earlier send of this id; the call by id was not made",
					ex);
		}
		return deadlines.getAsLong();
	}

}

package io.github.delayqueue.producer;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.ListIterator;
import java.util.Map;
import java.util.function.UnaryOperator;

import io.github.delayqueue.metrics.DelayQueueMetrics;
import io.github.delayqueue.store.NewMessage;
import io.github.delayqueue.store.PartitionCountException;
import io.github.delayqueue.store.MessageStore;
import io.github.delayqueue.store.StoreCalls;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.util.backoff.BackOffExecution;

/**
 * The sends made inside one Spring transaction, held back until it commits and then sent
 * in one round trip; dropped if it rolls back.
 *
 * <p>
 * Sends are flushed in {@link #afterCommit()}, so that a failure reaches the committing
 * caller, and again in {@link #afterCompletion(int)} for sends made after that: from
 * another synchronization's {@code afterCommit} (Spring invokes the synchronizations
 * registered until then for {@code afterCommit}, but all of them for
 * {@code afterCompletion}). A send made once this buffer is flushed, or while
 * synchronizations complete, is not deferred at all. Bound as a transaction resource that
 * follows suspension, so that a {@code REQUIRES_NEW} transaction has sends of its own.
 *
 * <p>
 * A cancel or reschedule by the same sender in the same transaction acts on the held
 * sends of its id: a cancel drops them, a reschedule gives them its delay. It acts on
 * those an enclosing transaction of this thread holds too (suspended by a
 * {@code REQUIRES_NEW} one), at once, as it acts on what Redis stores: it is not undone
 * if the inner transaction rolls back.
 */
final class TransactionalSends implements TransactionSynchronization {

	private static final Log logger = LogFactory.getLog(TransactionalSends.class);

	private final MessageStore store;

	private final DelayQueueMetrics metrics;

	private final Object key;

	/** The held sends of this thread's transactions suspended by an inner one. */
	private static final ThreadLocal<Deque<TransactionalSends>> SUSPENDED = new ThreadLocal<>();

	private final Map<String, List<NewMessage>> byTopic = new LinkedHashMap<>();

	private boolean flushed;

	private TransactionalSends(MessageStore store, DelayQueueMetrics metrics, Object key) {
		this.store = store;
		this.metrics = metrics;
		this.key = key;
	}

	/**
	 * Whether a send on this thread is to wait for the current transaction: a transaction
	 * with synchronization is active, and the sender's sends for it are not flushed yet.
	 * @param key identifies the sender
	 * @return whether to {@link #defer} the send
	 */
	static boolean canDefer(Object key) {
		if (!TransactionSynchronizationManager.isSynchronizationActive()
				|| !TransactionSynchronizationManager.isActualTransactionActive()) {
			return false;
		}
		TransactionalSends sends = (TransactionalSends) TransactionSynchronizationManager.getResource(key);
		return sends == null || !sends.flushed;
	}

	/**
	 * Holds a message back until the current transaction commits.
	 * @param store the store that sends it then
	 * @param metrics where the send is reported
	 * @param key identifies the sender (one buffer per sender and transaction)
	 * @param topic the topic
	 * @param message the message
	 */
	static void defer(MessageStore store, DelayQueueMetrics metrics, Object key, String topic, NewMessage message) {
		TransactionalSends sends = (TransactionalSends) TransactionSynchronizationManager.getResource(key);
		if (sends == null) {
			sends = new TransactionalSends(store, metrics, key);
			TransactionSynchronizationManager.bindResource(key, sends);
			TransactionSynchronizationManager.registerSynchronization(sends);
		}
		sends.byTopic.computeIfAbsent(topic, (t) -> new ArrayList<>()).add(message);
		if (logger.isDebugEnabled()) {
			logger.debug("Topic '" + topic + "' message " + message.id() + " held back until the transaction commits");
		}
	}

	/**
	 * Drops the held sends of a message, if the sender holds any in the current
	 * transaction.
	 * @param key identifies the sender
	 * @param topic the topic
	 * @param id the message id
	 * @return whether it held any: they will not be sent
	 */
	static boolean cancelHeld(Object key, String topic, String id) {
		return changeHeld(key, topic, id, (message) -> null);
	}

	/**
	 * Gives the held sends of a message a new delay, if the sender holds any in the
	 * current transaction.
	 * @param key identifies the sender
	 * @param topic the topic
	 * @param id the message id
	 * @param delay the new delay, from the Redis time of the send at commit
	 * @return whether it held any
	 */
	static boolean rescheduleHeld(Object key, String topic, String id, Duration delay) {
		return changeHeld(key, topic, id, (message) -> message.withDelay(delay));
	}

	/**
	 * Changes the held sends of one id in the current transaction and in the enclosing
	 * ones this thread suspended.
	 * @return whether any was held
	 */
	private static boolean changeHeld(Object key, String topic, String id, UnaryOperator<@Nullable NewMessage> change) {
		boolean held = false;
		TransactionalSends current = held(key);
		if (current != null) {
			held = current.change(topic, id, change);
		}
		Deque<TransactionalSends> outer = SUSPENDED.get();
		if (outer != null) {
			for (TransactionalSends sends : outer) {
				if (sends.key.equals(key) && !sends.flushed) {
					held |= sends.change(topic, id, change);
				}
			}
		}
		return held;
	}

	/** The sender's held sends in the current transaction, unless flushed. */
	private static @Nullable TransactionalSends held(Object key) {
		if (!TransactionSynchronizationManager.isSynchronizationActive()) {
			return null;
		}
		TransactionalSends sends = (TransactionalSends) TransactionSynchronizationManager.getResource(key);
		return (sends == null || sends.flushed) ? null : sends;
	}

	/**
	 * Changes the held sends of one id.
	 * @param change the changed message, or {@code null} to drop it
	 * @return whether any was held
	 */
	private boolean change(String topic, String id, UnaryOperator<@Nullable NewMessage> change) {
		List<NewMessage> messages = this.byTopic.get(topic);
		if (messages == null) {
			return false;
		}
		boolean held = false;
		for (ListIterator<NewMessage> each = messages.listIterator(); each.hasNext();) {
			NewMessage message = each.next();
			if (message.id().equals(id)) {
				held = true;
				NewMessage changed = change.apply(message);
				if (changed == null) {
					each.remove();
				}
				else {
					each.set(changed);
				}
			}
		}
		if (messages.isEmpty()) {
			this.byTopic.remove(topic);
		}
		return held;
	}

	@Override
	public void suspend() {
		TransactionSynchronizationManager.unbindResource(this.key);
		Deque<TransactionalSends> outer = SUSPENDED.get();
		if (outer == null) {
			outer = new ArrayDeque<>();
			SUSPENDED.set(outer);
		}
		outer.push(this);
	}

	@Override
	public void resume() {
		Deque<TransactionalSends> outer = SUSPENDED.get();
		if (outer != null) {
			outer.remove(this);
			if (outer.isEmpty()) {
				SUSPENDED.remove();
			}
		}
		TransactionSynchronizationManager.bindResource(this.key, this);
	}

	@Override
	public void afterCommit() {
		sendHeldBack();
	}

	private void sendHeldBack() {
		this.flushed = true;
		if (this.byTopic.isEmpty()) {
			return;
		}
		RuntimeException failure;
		int tries = 0;
		BackOffExecution retries = StoreCalls.RETRIES.start();
		while (true) {
			tries++;
			try {
				long start = System.nanoTime();
				DelayQueueTemplate.results(this.store.send(this.byTopic)).forEach((topic, results) -> {
					DelayQueueTemplate.report(this.metrics, topic, results, start);
					if (logger.isDebugEnabled()) {
						results.forEach((result) -> logger.debug("Topic '" + topic + "' message " + result.id()
								+ " sent after commit, due at " + result.dueAt()));
					}
				});
				this.byTopic.clear();
				return;
			}
			catch (PartitionCountException ex) {
				// Sending again cannot help: this application's count is not Redis'.
				failure = ex;
				break;
			}
			catch (RuntimeException ex) {
				failure = ex;
				long wait = retries.nextBackOff();
				if (wait == BackOffExecution.STOP || !StoreCalls.pause(wait)) {
					break;
				}
			}
		}
		String reason = (failure instanceof PartitionCountException) ? failure.getMessage()
				: "Redis failed " + tries + " times (" + failure + ")";
		this.byTopic
			.forEach(
					(topic, messages) -> messages
						.forEach((message) -> logger.error(
								"Topic '" + topic + "' message " + message.id()
										+ " may NOT have been sent (the transaction committed; a message of"
										+ " another topic or partition of the same send may have been): " + reason,
								null)));
		this.byTopic.clear();
		throw failure;
	}

	@Override
	public void afterCompletion(int status) {
		TransactionSynchronizationManager.unbindResourceIfPossible(this.key);
		if (status == STATUS_COMMITTED) {
			// Sends made after afterCommit ran, or when it was not called for this
			// buffer.
			sendHeldBack();
		}
		else if (logger.isDebugEnabled()) {
			this.byTopic.forEach((topic, messages) -> messages.forEach((message) -> logger
				.debug("Topic '" + topic + "' message " + message.id() + " dropped: the transaction did not commit")));
		}
	}

}

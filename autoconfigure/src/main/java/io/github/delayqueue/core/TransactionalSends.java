package io.github.delayqueue.core;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.github.delayqueue.metrics.DelayQueueMetrics;
import io.github.delayqueue.store.NewMessage;
import io.github.delayqueue.store.RedisMessageStore;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * The sends made inside one Spring transaction, held back until it commits and then sent in one
 * round trip; dropped if it rolls back.
 */
final class TransactionalSends implements TransactionSynchronization {

	private static final Log logger = LogFactory.getLog(TransactionalSends.class);

	private static final int TRIES = 3;

	private final RedisMessageStore store;

	private final DelayQueueMetrics metrics;

	private final Object key;

	private final Map<String, List<NewMessage>> byTopic = new LinkedHashMap<>();

	private TransactionalSends(RedisMessageStore store, DelayQueueMetrics metrics, Object key) {
		this.store = store;
		this.metrics = metrics;
		this.key = key;
	}

	/**
	 * @return whether a transaction with synchronization is active on this thread
	 */
	static boolean inTransaction() {
		return TransactionSynchronizationManager.isSynchronizationActive()
				&& TransactionSynchronizationManager.isActualTransactionActive();
	}

	/**
	 * Holds a message back until the current transaction commits.
	 * @param store the store that sends it then
	 * @param metrics where the send is reported
	 * @param key identifies the sender (one buffer per sender and transaction)
	 * @param topic the topic
	 * @param message the message
	 */
	static void defer(RedisMessageStore store, DelayQueueMetrics metrics, Object key, String topic,
			NewMessage message) {
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

	@Override
	public void afterCommit() {
		RuntimeException failure = null;
		for (int i = 0; i < TRIES; i++) {
			try {
				long start = System.nanoTime();
				this.store.send(this.byTopic).forEach((topic, results) -> {
					DelayQueueTemplate.report(this.metrics, topic, results, start);
					if (logger.isDebugEnabled()) {
						results.forEach((result) -> logger.debug("Topic '" + topic + "' message " + result.id()
								+ " sent after commit, due at " + result.dueAt()));
					}
				});
				return;
			}
			catch (RuntimeException ex) {
				failure = ex;
				pause(i);
			}
		}
		this.byTopic.forEach((topic, messages) -> messages.forEach((message) -> logger.error("Topic '" + topic
				+ "' message " + message.id() + " was NOT sent: the transaction committed but Redis failed "
				+ TRIES + " times", null)));
		throw failure;
	}

	@Override
	public void afterCompletion(int status) {
		TransactionSynchronizationManager.unbindResourceIfPossible(this.key);
		if (status != STATUS_COMMITTED && logger.isDebugEnabled()) {
			this.byTopic.forEach((topic, messages) -> messages.forEach((message) -> logger
				.debug("Topic '" + topic + "' message " + message.id() + " dropped: the transaction did not commit")));
		}
	}

	private static void pause(int attempt) {
		try {
			Thread.sleep(100L << attempt);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

}

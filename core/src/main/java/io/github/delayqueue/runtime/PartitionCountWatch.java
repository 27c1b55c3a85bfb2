package io.github.delayqueue.runtime;

import java.util.Collections;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import io.github.delayqueue.store.PartitionCountException;
import io.github.delayqueue.store.MessageStore;
import io.github.delayqueue.store.StoreCalls;
import io.github.delayqueue.store.TopicPartitions;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.dao.DataAccessException;
import org.springframework.scheduling.concurrent.CustomizableThreadFactory;
import org.springframework.util.backoff.BackOffExecution;

/**
 * Keeps the listeners' topics on the number of partitions Redis spreads them over. At
 * start it agrees each topic's count with Redis (a {@link PartitionCountException} fails
 * the start); when Redis does not answer then, it agrees in the background, again and
 * again until Redis answers. While running, a broker whose partition's count marker no
 * longer has this application's count (another application changed the count, or a change
 * of it is on its way or was left half done) has the count checked again: markers left
 * behind are repaired, and a count that changed is reported as a problem of the topic (an
 * ERROR, and the {@code delayQueue} health is {@code DOWN}) until it is settled.
 * Listeners keep consuming the partitions they have meanwhile. A listener of a topic's
 * dead letters has them copied into their queue once its count is agreed, and the watch
 * that copies them is set again when Redis lost it. The checks run on a thread of their
 * own, never on the shared scheduler, at most one at a time per topic and one per
 * {@value #CHECK_INTERVAL_SECONDS} seconds.
 */
final class PartitionCountWatch implements AutoCloseable {

	private static final Log logger = LogFactory.getLog(PartitionCountWatch.class);

	private static final long CHECK_INTERVAL_SECONDS = 5;

	private final MessageStore store;

	private final ScheduledThreadPoolExecutor checks;

	private final Map<String, String> problems = new ConcurrentHashMap<>();

	/** Whether a topic's count check that found no Redis has said what happens next. */
	private final AtomicBoolean unreachableExplained = new AtomicBoolean();

	/** Topics whose dead letters are listened to here. */
	private final Set<String> watched = ConcurrentHashMap.newKeySet();

	/** Topics with a check on its way or done less than the check interval ago. */
	private final Set<String> checked = ConcurrentHashMap.newKeySet();

	PartitionCountWatch(MessageStore store) {
		this.store = store;
		CustomizableThreadFactory threads = new CustomizableThreadFactory("delay-queue-partitions-");
		threads.setDaemon(true);
		this.checks = new ScheduledThreadPoolExecutor(1, threads);
		this.checks.setRemoveOnCancelPolicy(true);
	}

	/**
	 * Agrees a topic's count with Redis, or, with Redis out of reach, starts agreeing in
	 * the background.
	 * @param topic the topic
	 * @throws PartitionCountException if Redis has another count that cannot change now
	 */
	void agree(String topic) {
		try {
			agreeNow(topic);
		}
		catch (DataAccessException ex) {
			// Explained once; the next topics that cannot be compared are named only.
			logger.warn(this.unreachableExplained.compareAndSet(false, true) ? unreachableAtStart(topic, ex)
					: "Topic '" + topic + "': could not compare its number of partitions either; again in the"
							+ " background once Redis answers");
			agreeLater(topic, StoreCalls.OUTAGE.start());
		}
	}

	/**
	 * What happens when Redis does not answer a topic's count check at start: the start
	 * goes on, but fails next if Redis refuses the listeners' subscription.
	 */
	static String unreachableAtStart(String topic, Exception failure) {
		return "Topic '" + topic + "': could not compare its number of partitions with the one in Redis ("
				+ failure.getMessage() + "). The start goes on, and the comparison is made again in the background"
				+ " once Redis answers; but if Redis refuses connections, the start fails next, when the listeners"
				+ " subscribe to their wake-up signals (a Redis that does not answer at all only delays them)";
	}

	private void agreeLater(String topic, BackOffExecution outage) {
		schedule(() -> {
			try {
				agreeNow(topic);
				logger.info("Topic '" + topic + "': its number of partitions agrees with the one in Redis");
				this.problems.remove(topic);
			}
			catch (DataAccessException ex) {
				agreeLater(topic, outage);
			}
			catch (PartitionCountException ex) {
				report(topic, ex);
			}
		}, outage.nextBackOff());
	}

	/**
	 * Agrees a topic's count; for a dead-letter queue, then has the topic's dead letters
	 * copied into it from now on.
	 */
	private void agreeNow(String topic) {
		this.store.agreePartitions(topic);
		if (TopicPartitions.isDeadLetters(topic)) {
			String source = TopicPartitions.topicOf(topic);
			this.store.watchDeadLetters(source);
			logger.info("Topic '" + source + "': its dead letters are queued for their listener in '" + topic
					+ "' from now on");
			if (this.watched.add(source) && this.watched.size() == 1) {
				schedule(this::keepWatches, TimeUnit.SECONDS.toMillis(CHECK_INTERVAL_SECONDS));
			}
		}
	}

	/**
	 * Sets again the dead-letter watches that went missing (Redis lost its data), every
	 * {@value #CHECK_INTERVAL_SECONDS} seconds, so that the dead letters of a listened
	 * topic keep reaching their listener.
	 */
	private void keepWatches() {
		for (String topic : this.watched) {
			try {
				int restored = this.store.watchDeadLetters(topic);
				if (restored > 0) {
					logger.warn("Topic '" + topic + "': the watch that queues its dead letters for their listener was"
							+ " gone from " + restored
							+ " of its partitions (Redis lost its data?): set again; messages that other applications"
							+ " dead-lettered meanwhile were not queued");
				}
			}
			catch (RuntimeException ex) {
				logger.debug("Topic '" + topic + "': could not check the watch of its dead letters", ex);
			}
		}
		schedule(this::keepWatches, TimeUnit.SECONDS.toMillis(CHECK_INTERVAL_SECONDS));
	}

	/**
	 * A broker read its partition's count marker: when it does not have this
	 * application's count, or does again while a problem is reported for the topic,
	 * checks the count again, unless it was checked a moment ago.
	 * @param topic the topic
	 * @param agreed whether the marker has this application's count
	 */
	void markerRead(String topic, boolean agreed) {
		if (agreed && !this.problems.containsKey(topic)) {
			return;
		}
		if (!this.checked.add(topic)) {
			return;
		}
		schedule(() -> {
			try {
				this.store.checkPartitions(topic);
				if (this.problems.remove(topic) != null) {
					logger.info("Topic '" + topic + "': its number of partitions agrees with the one in Redis again");
				}
			}
			catch (PartitionCountException ex) {
				report(topic, ex);
			}
			catch (DataAccessException ex) {
				logger.debug("Topic '" + topic + "': could not check its number of partitions", ex);
			}
			finally {
				schedule(() -> this.checked.remove(topic), TimeUnit.SECONDS.toMillis(CHECK_INTERVAL_SECONDS));
			}
		}, 0);
	}

	private void report(String topic, PartitionCountException ex) {
		String problem = ex.getMessage();
		if (!problem.equals(this.problems.put(topic, problem))) {
			logger.error("Topic '" + topic + "': " + problem + ". Until then this application's listener consumes"
					+ " only the " + ex.configured() + " partitions it knows, and its sends and calls by id for the"
					+ " topic fail");
		}
	}

	/**
	 * @return the topics whose count this application does not agree with Redis on, with
	 * what is wrong
	 */
	Map<String, String> problems() {
		return Collections.unmodifiableMap(this.problems);
	}

	private void schedule(Runnable task, long delayMillis) {
		try {
			this.checks.schedule(task, delayMillis, TimeUnit.MILLISECONDS);
		}
		catch (RejectedExecutionException ex) {
			// Closed: the runtime is stopping.
		}
	}

	@Override
	public void close() {
		this.checks.shutdownNow();
	}

}

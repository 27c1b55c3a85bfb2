package io.github.delayqueue.runtime;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import io.github.delayqueue.runtime.consumer.TopicConsumer;
import io.github.delayqueue.runtime.support.Nanoseconds;
import io.github.delayqueue.time.Durations;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * Finishes stopping consumers that claim no more, all together within one shutdown
 * timeout, whatever Redis does: running handlers get the timeout less a reserve; then
 * every consumer hands back what is unfinished and sends its queued acknowledgements, all
 * calls sent at once, and their replies are awaited until the timeout ends. The reserve
 * is a tenth of the timeout, at least {@value #MIN_RESERVE_MILLIS} ms (or half the
 * timeout, when that is less) and at most {@value #MAX_RESERVE_MILLIS} ms: a stop takes
 * at most the timeout, and a handler that returns just before its deadline still has its
 * acknowledgement sent while Redis answers. What Redis has not taken by then is delivered
 * again when its lease expires. Consumers whose stop another caller is finishing (a pause
 * still waiting for its handlers) are waited for within the same timeout.
 */
final class ConsumerStop {

	private static final Log logger = LogFactory.getLog(ConsumerStop.class);

	static final long MIN_RESERVE_MILLIS = 100;

	static final long MAX_RESERVE_MILLIS = 1000;

	private ConsumerStop() {
	}

	/**
	 * Finishes stopping consumers; returns by the end of the timeout.
	 * @param consumers the consumers, each claiming no more
	 * @param finishing consumers whose stop another caller is finishing, to wait for
	 * @param timeout the shutdown timeout
	 * @param what what stops, for the log, e.g. {@code Stopping the listeners}
	 */
	static void finish(List<TopicConsumer> consumers, List<TopicConsumer> finishing, Duration timeout, String what) {
		if (consumers.isEmpty() && finishing.isEmpty()) {
			return;
		}
		long started = System.nanoTime();
		long timeoutNanos = Nanoseconds.of(timeout);
		long handlersDeadline = started + timeoutNanos - Nanoseconds.of(reserve(timeout));
		long deadline = started + timeoutNanos;
		try {
			logWait(consumers, finishing, Duration.ofNanos(handlersDeadline - started), what);
			List<TopicConsumer> awaited = new ArrayList<>(consumers);
			awaited.addAll(finishing);
			List<CompletableFuture<Void>> settled = new ArrayList<>(awaited.size());
			for (TopicConsumer consumer : consumers) {
				settled.add(consumer.finishStopping(handlersDeadline, deadline));
			}
			for (TopicConsumer consumer : finishing) {
				settled.add(consumer.stopEnded());
			}
			await(awaited, settled, deadline, timeout);
		}
		finally {
			consumers.forEach(TopicConsumer::endStop);
		}
	}

	private static void await(List<TopicConsumer> consumers, List<CompletableFuture<Void>> settled, long deadline,
			Duration timeout) {
		try {
			CompletableFuture.allOf(settled.toArray(CompletableFuture[]::new))
				.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
		catch (ExecutionException | TimeoutException ex) {
			Set<String> unanswered = new LinkedHashSet<>();
			for (int c = 0; c < consumers.size(); c++) {
				if (!settled.get(c).isDone()) {
					unanswered.add(consumers.get(c).topic());
				}
			}
			unanswered.forEach((topic) -> logger.warn("Topic '" + topic + "': Redis did not answer the hand-back of "
					+ "unfinished messages and the last acknowledgements within the shutdown timeout (" + timeout
					+ "); messages it did not take are delivered again when their lease expires"));
		}
	}

	/**
	 * The part of a shutdown timeout kept for handing back and acknowledging, after the
	 * handlers' time.
	 * @param timeout the shutdown timeout
	 * @return a tenth of it, at least {@value #MIN_RESERVE_MILLIS} ms or else half of it
	 * (whichever is less), and at most {@value #MAX_RESERVE_MILLIS} ms
	 */
	static Duration reserve(Duration timeout) {
		if (timeout.isNegative()) {
			return Duration.ZERO;
		}
		Duration tenth = timeout.dividedBy(10);
		Duration least = minimum(Duration.ofMillis(MIN_RESERVE_MILLIS), timeout.dividedBy(2));
		Duration most = Duration.ofMillis(MAX_RESERVE_MILLIS);
		return minimum(most, (tenth.compareTo(least) > 0) ? tenth : least);
	}

	private static Duration minimum(Duration one, Duration other) {
		return (one.compareTo(other) <= 0) ? one : other;
	}

	private static void logWait(List<TopicConsumer> consumers, List<TopicConsumer> finishing, Duration handlersTime,
			String what) {
		Map<String, Integer> running = new LinkedHashMap<>();
		for (TopicConsumer consumer : consumers) {
			int calls = consumer.handlerCalls();
			if (calls > 0) {
				running.merge(consumer.topic(), calls, Integer::sum);
			}
		}
		if (!running.isEmpty()) {
			int calls = running.values().stream().mapToInt(Integer::intValue).sum();
			List<String> byTopic = running.entrySet()
				.stream()
				.map((topic) -> "'" + topic.getKey() + "' " + topic.getValue())
				.toList();
			logger.info(what + ": waiting up to " + Durations.format(handlersTime) + " for " + calls
					+ " handler calls to finish (by topic: " + String.join(", ", byTopic)
					+ "); messages still unfinished then are handed back");
		}
		Set<String> paused = new LinkedHashSet<>();
		finishing.forEach((consumer) -> paused.add("'" + consumer.topic() + "'"));
		if (!paused.isEmpty()) {
			logger.info(what + ": waiting for the pause of topics " + String.join(", ", paused)
					+ " to finish, within the same shutdown timeout");
		}
	}

}

package io.github.delayqueue.metrics;

import java.time.Duration;
import java.util.function.Consumer;
import java.util.function.ToDoubleFunction;

import io.github.delayqueue.store.PartialStats;
import io.github.delayqueue.store.TopicInspector;
import io.github.delayqueue.store.TopicStats;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * A topic's stats for its gauges, read from Redis at most once per refresh interval
 * however many gauges are read and however often.
 */
final class CachedTopicStats {

	private static final Log logger = LogFactory.getLog(CachedTopicStats.class);

	private final TopicInspector inspector;

	private final long refreshNanos;

	private @Nullable TopicStats stats;

	private long readAtNanos;

	private Consumer<TopicStats> onRead = (read) -> {
	};

	CachedTopicStats(TopicInspector inspector, Duration refreshInterval) {
		this.inspector = inspector;
		this.refreshNanos = refreshInterval.toNanos();
	}

	/**
	 * Sets what to do with the stats each time they are read from Redis.
	 * @param onRead called with the stats just read, before any value is taken
	 */
	synchronized void whenRead(Consumer<TopicStats> onRead) {
		this.onRead = onRead;
	}

	/**
	 * Reads one value of the current stats.
	 * @param value what to read
	 * @return the value over the partitions that answer, or NaN while none does
	 */
	synchronized double read(ToDoubleFunction<TopicStats> value) {
		long now = System.nanoTime();
		if (this.stats == null || now - this.readAtNanos >= this.refreshNanos) {
			this.readAtNanos = now;
			try {
				// The partitions that answer: a partition whose server is down leaves
				// the others' counts readable.
				PartialStats read = this.inspector.partialStats();
				this.stats = read.stats();
				if (!read.complete() && logger.isDebugEnabled()) {
					logger.debug("Topic '" + this.inspector.topic() + "': its gauges leave out partitions that did"
							+ " not answer: "
							+ read.unreachable()
								.values()
								.stream()
								.map((failure) -> failure.partition() + ": " + failure.describe())
								.toList());
				}
				if (this.stats != null) {
					this.onRead.accept(this.stats);
				}
			}
			catch (RuntimeException ex) {
				this.stats = null;
				logger.debug("Cannot read the stats of topic '" + this.inspector.topic() + "' for its gauges", ex);
			}
		}
		return (this.stats != null) ? value.applyAsDouble(this.stats) : Double.NaN;
	}

}

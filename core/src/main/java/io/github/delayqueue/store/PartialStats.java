package io.github.delayqueue.store;

import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import io.github.delayqueue.time.Durations;
import org.jspecify.annotations.Nullable;

/**
 * A topic's stats read partition by partition, as operations show them while some servers
 * are down: the stats of the partitions that answered, added up, and why each of the
 * others did not answer.
 *
 * @param stats the stats of the partitions that answered, added up; {@code null} when
 * none did
 * @param unreachable each partition that did not answer, by name, in partition order
 */
public record PartialStats(@Nullable TopicStats stats, Map<String, PartitionFailure> unreachable) {

	/**
	 * Keeps an unmodifiable copy of the partitions that did not answer.
	 * @param stats the stats of the partitions that answered, or {@code null}
	 * @param unreachable each partition that did not answer
	 */
	public PartialStats {
		unreachable = Collections.unmodifiableMap(new LinkedHashMap<>(unreachable));
	}

	/**
	 * Waits for the reads of {@link TopicInspector#readPartitions()} until a deadline; a
	 * read that has not answered by then is cancelled and counts as unreachable.
	 * @param inspector the topic's inspector, which tells where each partition is served
	 * @param reads the reads, by partition
	 * @param deadline the {@link System#nanoTime()} to wait until
	 * @param waited how long the caller waits in all, for the text of a read that did not
	 * answer in time
	 * @return what answered, and why the others did not
	 * @throws PartitionCountException if Redis spreads the topic over another number of
	 * partitions than this application
	 */
	public static PartialStats await(TopicInspector inspector, Map<String, CompletableFuture<TopicStats>> reads,
			long deadline, Duration waited) {
		TopicStats sum = null;
		Map<String, PartitionFailure> unreachable = new LinkedHashMap<>();
		for (Map.Entry<String, CompletableFuture<TopicStats>> read : reads.entrySet()) {
			String partition = read.getKey();
			try {
				TopicStats stats = read.getValue().get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
				sum = (sum != null) ? sum.plus(stats) : stats;
			}
			catch (TimeoutException | CancellationException ex) {
				read.getValue().cancel(true);
				unreachable.put(partition, new PartitionFailure(partition, inspector.serverOf(partition),
						"Redis did not answer within " + Durations.format(waited)));
			}
			catch (ExecutionException ex) {
				if (ex.getCause() instanceof PartitionCountException stale) {
					// Not an outage: this application spreads the topic over another
					// number of partitions, which its callers report as such.
					throw stale;
				}
				unreachable.put(partition, new PartitionFailure(partition, inspector.serverOf(partition),
						Failures.describe(ex.getCause())));
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				reads.values().forEach((pending) -> pending.cancel(true));
				throw new IllegalStateException(
						"Interrupted while reading the stats of topic '" + inspector.topic() + "'", ex);
			}
		}
		return new PartialStats(sum, unreachable);
	}

	/**
	 * @return whether every partition answered
	 */
	public boolean complete() {
		return this.unreachable.isEmpty();
	}

	/**
	 * One partition that did not answer.
	 *
	 * @param partition the partition's name (for partition 0, the topic)
	 * @param server the primary that serves it, as {@code host:port}, when the store
	 * knows it (on a Cluster, from its topology)
	 * @param reason why it did not answer
	 */
	public record PartitionFailure(String partition, @Nullable String server, String reason) {

		/**
		 * @return the reason with the server, such as
		 * {@code Redis did not answer within 1s (primary 10.0.0.7:6379)}
		 */
		public String describe() {
			return (this.server != null) ? this.reason + " (primary " + this.server + ")" : this.reason;
		}

	}

}

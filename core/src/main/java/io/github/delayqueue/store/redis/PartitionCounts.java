package io.github.delayqueue.store.redis;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import io.github.delayqueue.store.LeaseTokens;
import io.github.delayqueue.store.PartitionCountException;
import io.github.delayqueue.store.TopicPartitions;
import io.github.delayqueue.store.redis.ScriptRunner.ScriptCall;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.dao.DataAccessException;
import org.springframework.dao.QueryTimeoutException;

/**
 * Keeps every application of a topic on the number of partitions Redis spreads it over.
 * Redis keeps the count with partition 0 ({@link TopicKeys#partitionCount()}), and every
 * other partition a count marker of its own; the calls that store or find messages by id
 * name the caller's count and are refused by a partition whose marker names another
 * ({@code partition_refusal.lua}), so an application whose count is stale can neither
 * strand a message nor miss one.
 * <p>
 * The first call of this application for a topic {@link #agree agrees}. A send, or a
 * listener starting, changes Redis' count to this application's if it differs, in the
 * steps of {@code begin_partition_change.lua}: it marks every partition of both counts
 * with a marker that refuses every call, each only while it holds no message, so that
 * nothing can be stored where the new count would not find it; then it commits and marks
 * the new count's partitions for it. A change that would leave a message out of reach of
 * the new count is refused with a {@link PartitionCountException}: the topic must be
 * empty, or, to go down to one partition, its partitions 1 and up. Any other call (a
 * cancel, a read) never changes the count: it is refused while the counts differ. After a
 * refused call, the store {@link #settle settles} again: it repairs markers that a change
 * left behind, waits for a change on its way, or throws when the count changed. Markers
 * are always read before the count, and set only if they still hold what was read, so
 * that a repair never undoes the marks of a change that began meanwhile. Every step waits
 * for Redis at most until the deadline of the call it serves. Thread-safe.
 */
final class PartitionCounts {

	private static final Log logger = LogFactory.getLog(PartitionCounts.class);

	private static final long WAIT_STEP_NANOS = TimeUnit.MILLISECONDS.toNanos(50);

	/** Error replies of a partition that refuses a call start with this. */
	private static final String REFUSAL = "DQPARTITIONS";

	/** How many changes one agreement tries while others get in their way. */
	private static final int MAX_CHANGE_TRIES = 3;

	/** Starts the marker a change on its way sets: it refuses every call. */
	private static final String CHANGING = "?";

	private final ScriptCalls calls;

	private final TopicPartitions partitions;

	private final Set<String> agreed = ConcurrentHashMap.newKeySet();

	/**
	 * @param calls runs the scripts, each call bounded by the store's timeout
	 * @param partitions the partitions configured here
	 */
	PartitionCounts(ScriptCalls calls, TopicPartitions partitions) {
		this.calls = calls;
		this.partitions = partitions;
	}

	TopicPartitions partitions() {
		return this.partitions;
	}

	/**
	 * Whether a call failed because a partition refused this application's count.
	 * @param failure the failure of a call
	 * @return whether it is a refusal
	 */
	static boolean isRefusal(Throwable failure) {
		return ScriptRunner.causeMessageContains(failure, REFUSAL);
	}

	/**
	 * The time left until a deadline, at least a millisecond: a call made after the
	 * deadline fails at once with a timeout.
	 * @param deadline a {@link System#nanoTime()}
	 * @return the time left
	 */
	static Duration remaining(long deadline) {
		long millis = TimeUnit.NANOSECONDS
			.toMillis(deadline - System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(1) - 1);
		return Duration.ofMillis(Math.max(1, millis));
	}

	/**
	 * @return whether the topic's count is agreed, so that {@link #agree} returns at once
	 */
	boolean isAgreed(String topic) {
		return this.agreed.contains(topic);
	}

	/**
	 * Makes sure Redis spreads the topic over the count configured here; once per topic
	 * and application, later calls return at once.
	 * @param topic the topic
	 * @param mayChange whether the call may change Redis' count to this application's (a
	 * send, a listener starting) when that leaves every message within reach
	 * @param deadline the {@link System#nanoTime()} by which to be done
	 * @throws PartitionCountException if Redis has another count that this call cannot
	 * change
	 * @throws DataAccessException if Redis failed or did not answer in time
	 */
	void agree(String topic, boolean mayChange, long deadline) {
		if (this.agreed.contains(topic)) {
			return;
		}
		settle(topic, mayChange, false, deadline);
		this.agreed.add(topic);
	}

	/**
	 * Settles the topic's count after a partition refused a call of this application:
	 * repairs markers left behind by a change, or waits for a change on its way to end;
	 * then a call made again is accepted. Never changes the count.
	 * @param topic the topic
	 * @param deadline the {@link System#nanoTime()} by which to be done
	 * @throws PartitionCountException if Redis now has another count, or a change did not
	 * end by the deadline
	 * @throws DataAccessException if Redis failed or did not answer in time
	 */
	void settle(String topic, long deadline) {
		settle(topic, false, this.agreed.contains(topic), deadline);
	}

	private void settle(String topic, boolean mayChange, boolean wasAgreed, long deadline) {
		int configured = this.partitions.count(topic);
		List<String> others = others(TopicPartitions.names(topic, configured));
		boolean changed = false;
		int changes = 0;
		// The change last waited for: if time runs out while waiting, it is the reason.
		ScriptCodecs.PartitionCount.@Nullable Reply waitedFor = null;
		while (true) {
			if (System.nanoTime() - deadline > 0) {
				if (waitedFor != null) {
					throw PartitionCountException.changing(topic, waitedFor.count(), configured, waitedFor.change());
				}
				throw new QueryTimeoutException("Topic '" + topic
						+ "': the partition count could not be settled in time (its markers kept changing)");
			}
			// Markers first, then the count: a change that begins after the count was
			// read has marked none of the markers read (see the class's Javadoc).
			List<Marker> markers;
			ScriptCodecs.PartitionCount.Reply count;
			try {
				markers = read(others, deadline);
				count = readCount(topic, deadline);
			}
			catch (QueryTimeoutException ex) {
				if (waitedFor == null) {
					throw ex;
				}
				PartitionCountException refused = PartitionCountException.changing(topic, waitedFor.count(), configured,
						waitedFor.change());
				refused.addSuppressed(ex);
				throw refused;
			}
			if (!count.change().isEmpty()) {
				if (System.nanoTime() + WAIT_STEP_NANOS - deadline > 0) {
					throw PartitionCountException.changing(topic, count.count(), configured, count.change());
				}
				waitedFor = count;
				LockSupport.parkNanos(WAIT_STEP_NANOS);
				continue;
			}
			waitedFor = null;
			if (count.count() == configured) {
				if (repair(topic, configured, markers, deadline)) {
					return;
				}
				continue;
			}
			if (wasAgreed && !changed && changes == 0 && isLost(count, markers)) {
				// Redis lost its data (restarted empty, flushed, or failed over to an
				// empty replica): agree the count again, as on a first call.
				logger.error("Topic '" + topic + "': its number of partitions (" + configured
						+ ") is gone from Redis, with every partition's count marker: Redis lost its data"
						+ " (restarted without persistence, flushed, or failed over to an empty replica)."
						+ " Setting it again");
				wasAgreed = false;
				mayChange = true;
			}
			if (wasAgreed || changed) {
				throw PartitionCountException.changedElsewhere(topic, count.count(), configured);
			}
			if (!mayChange || changes == MAX_CHANGE_TRIES) {
				throw PartitionCountException.differs(topic, count.count(), configured);
			}
			changed = change(topic, count.count(), configured, deadline);
			changes++;
		}
	}

	/**
	 * Whether Redis lost the count: it reads as 1 (absent), and no partition has a count
	 * marker, where a change to 1 leaves its own on every partition it had.
	 */
	private static boolean isLost(ScriptCodecs.PartitionCount.Reply count, List<Marker> markers) {
		return count.count() == 1 && !markers.isEmpty()
				&& markers.stream().allMatch((marker) -> marker.value().isEmpty());
	}

	/**
	 * Sets the markers that do not name the topic's count to it.
	 * @return whether every marker names the count now; {@code false} if one changed
	 * since it was read
	 */
	private boolean repair(String topic, int count, List<Marker> markers, long deadline) {
		String wanted = Integer.toString(count);
		List<Marker> stale = markers.stream().filter((marker) -> marker.count() != count).toList();
		if (stale.isEmpty()) {
			return true;
		}
		List<Marker> results = mark(stale, wanted, false, false, deadline);
		boolean repaired = results.stream().allMatch((result) -> result.set() || result.value().equals(wanted));
		if (repaired) {
			logger.info("Topic '" + topic + "': count markers of partitions "
					+ stale.stream().map(Marker::partition).toList() + " set to its " + count + " partitions (were "
					+ stale.stream().map((marker) -> marker.value().isEmpty() ? "unset" : marker.value()).toList()
					+ ")");
		}
		return repaired;
	}

	/**
	 * Changes the topic's count, or leaves it to the caller to read the count again when
	 * another application got there first.
	 * @return whether the count changed
	 * @throws PartitionCountException if a message would be out of reach of the new count
	 */
	private boolean change(String topic, int from, int to, long deadline) {
		String token = LeaseTokens.newToken();
		ScriptCodecs.BeginPartitionChange.Reply begun;
		try {
			begun = this.calls.run(topic,
					new ScriptCodecs.BeginPartitionChange(from, to, token, Duration.ofMillis(expiryMillis())),
					remaining(deadline));
		}
		catch (DataAccessException ex) {
			// It may have begun: forget it rather than leave it to expire.
			abort(topic, token, to, CHANGING + to + ":" + token, List.of(), deadline);
			throw ex;
		}
		if (!begun.begun()) {
			return false;
		}
		String mark = CHANGING + to + ":" + token;
		Set<String> names = new LinkedHashSet<>(TopicPartitions.names(topic, from));
		names.addAll(TopicPartitions.names(topic, to));
		List<Marker> marked = new ArrayList<>();
		boolean committed = false;
		try {
			List<Marker> found = read(others(List.copyOf(names)), deadline);
			// While the topic's dead letters are listened to, every partition of the new
			// count copies them from before the count takes effect.
			boolean watched = begun.watched() || found.stream().anyMatch(Marker::watched);
			List<Marker> results = mark(found, mark, true, watched, deadline);
			long held = 0;
			ScriptCodecs.RememberedIds remembered = ScriptCodecs.RememberedIds.NONE;
			boolean raced = false;
			for (int i = 0; i < results.size(); i++) {
				Marker result = results.get(i);
				if (result.set() || result.value().equals(mark)) {
					marked.add(found.get(i));
				}
				else if (result.held() > 0 || result.remembered().count() > 0) {
					held += result.held();
					remembered = remembered.and(result.remembered());
				}
				else {
					raced = true;
				}
			}
			if (held > 0) {
				throw PartitionCountException.wouldStrand(topic, from, to, held);
			}
			if (remembered.count() > 0) {
				throw remembers(topic, from, to, remembered);
			}
			if (raced) {
				return false;
			}
			ScriptCodecs.CommitPartitionChange.Reply commit = this.calls.run(topic,
					new ScriptCodecs.CommitPartitionChange(from, to, token), remaining(deadline));
			committed = commit.committed();
			if (!committed && commit.held() > 0) {
				throw PartitionCountException.wouldStrand(topic, from, to, commit.held());
			}
			if (!committed && commit.remembered().count() > 0) {
				throw remembers(topic, from, to, commit.remembered());
			}
			if (!committed && readCount(topic, deadline).count() == to) {
				// Its commit ran, and the reply was lost.
				committed = true;
			}
			if (committed) {
				logger.info("Topic '" + topic + "' now has " + to + " partitions (had " + from + ")");
				open(topic, to, token, mark, deadline);
			}
			return committed;
		}
		finally {
			if (!committed) {
				abort(topic, token, to, mark, marked, deadline);
			}
		}
	}

	private static PartitionCountException remembers(String topic, int from, int to,
			ScriptCodecs.RememberedIds remembered) {
		return PartitionCountException.remembersIds(topic, from, to, remembered.count(), remembered.some(),
				Instant.ofEpochMilli(remembered.lastWindowEndMs()));
	}

	/**
	 * Marks the partitions of a count that just took effect for it, so that they accept
	 * its calls. Best effort: a marker left refusing is repaired by the first call it
	 * refuses.
	 */
	private void open(String topic, int count, String token, String mark, long deadline) {
		List<Marker> changing = others(TopicPartitions.names(topic, count)).stream()
			.map((partition) -> new Marker(partition, mark, false, 0, false, ScriptCodecs.RememberedIds.NONE))
			.toList();
		try {
			mark(changing, count + ":" + token, false, false, deadline);
		}
		catch (DataAccessException ex) {
			logger.warn("Topic '" + topic + "': could not mark its partitions for its new count " + count
					+ "; each is marked by the first call it refuses: " + ex);
		}
	}

	/**
	 * Ends a change that did not commit: puts back the markers it set, unless the count
	 * is the new one, and forgets it. Best effort: a marker left behind refuses every
	 * call there, and is repaired by the first call it refuses once the change's record
	 * is gone (at once, or when it expires).
	 */
	private void abort(String topic, String token, int to, String mark, List<Marker> marked, long deadline) {
		long abortDeadline = Math.max(deadline, System.nanoTime() + this.calls.timeout().toNanos());
		try {
			if (readCount(topic, abortDeadline).count() != to && !marked.isEmpty()) {
				List<ScriptCall> calls = marked.stream()
					.map((marker) -> this.calls.call(marker.partition(),
							new ScriptCodecs.MarkPartition(mark, marker.value(), false, false)))
					.toList();
				this.calls.runAll(calls, remaining(abortDeadline));
			}
			this.calls.run(topic, new ScriptCodecs.AbortPartitionChange(token + ":" + to), remaining(abortDeadline));
		}
		catch (DataAccessException ex) {
			logger.warn("Topic '" + topic + "': could not end a change of its number of partitions that did not"
					+ " take effect; it expires within " + expiryMillis() + " ms, and the markers it set refuse"
					+ " every call until the first call they refuse repairs them: " + ex);
		}
	}

	/**
	 * How long a change stays recorded unless it ends: four store timeouts, at least 1 s.
	 */
	private long expiryMillis() {
		return Math.max(1000, 4 * this.calls.timeout().toMillis());
	}

	/** The markers of partitions, read in one round trip. */
	private List<Marker> read(List<String> partitions, long deadline) {
		List<Marker> unread = partitions.stream()
			.map((partition) -> new Marker(partition, "?", false, 0, false, ScriptCodecs.RememberedIds.NONE))
			.toList();
		return mark(unread, "", false, false, deadline);
	}

	/**
	 * Sets markers that still hold what was read, in one round trip; a marker value of
	 * {@code "?"} only reads.
	 * @return for each, whether it was set, the value found, the messages held and
	 * whether it copied dead letters; with {@code watch}, each marker set has its
	 * partition copy them from then on
	 */
	private List<Marker> mark(List<Marker> markers, String value, boolean onlyIfEmpty, boolean watch, long deadline) {
		if (markers.isEmpty()) {
			return List.of();
		}
		ScriptCodecs.MarkPartition[] marks = markers.stream()
			.map((marker) -> new ScriptCodecs.MarkPartition(marker.value(), value, onlyIfEmpty, watch))
			.toArray(ScriptCodecs.MarkPartition[]::new);
		List<ScriptCall> calls = new ArrayList<>(markers.size());
		for (int i = 0; i < markers.size(); i++) {
			calls.add(this.calls.call(markers.get(i).partition(), marks[i]));
		}
		List<Object> replies = this.calls.runAll(calls, remaining(deadline));
		List<Marker> results = new ArrayList<>(markers.size());
		for (int i = 0; i < markers.size(); i++) {
			ScriptCodecs.MarkPartition.Reply reply = marks[i].read(replies.get(i));
			results.add(new Marker(markers.get(i).partition(), reply.found(), reply.set(), reply.held(),
					reply.watched(), reply.remembered()));
		}
		return results;
	}

	/**
	 * @throws PartitionCountException if Redis holds no count for the topic (something
	 * else wrote its key)
	 */
	private ScriptCodecs.PartitionCount.Reply readCount(String topic, long deadline) {
		ScriptCodecs.PartitionCount.Reply count = this.calls.run(topic, new ScriptCodecs.PartitionCount(),
				remaining(deadline));
		if (count.count() < 1) {
			throw PartitionCountException.unreadable(topic, this.calls.keys(topic).partitionCount(), count.stored(),
					this.partitions.count(topic));
		}
		return count;
	}

	private static List<String> others(List<String> names) {
		return names.subList(1, names.size());
	}

	/**
	 * A partition's count marker as read or set.
	 *
	 * @param partition the partition's name
	 * @param value the marker, empty when unset
	 * @param set whether a call set it
	 * @param held the messages the partition holds, stored or dead
	 * @param watched whether the partition copied dead letters into its dead-letter queue
	 * @param remembered the ids it remembers whose deduplication window has not ended
	 */
	private record Marker(String partition, String value, boolean set, long held, boolean watched,
			ScriptCodecs.RememberedIds remembered) {

		/**
		 * The count the marker names, as the scripts read it: 1 when unset, -1 while a
		 * change marked it (it then refuses every count).
		 */
		int count() {
			if (this.value.isEmpty()) {
				return 1;
			}
			if (this.value.startsWith(CHANGING)) {
				return -1;
			}
			// A marker that names no count (written by something else) is stale:
			// repaired.
			return ScriptCodecs.countOf(this.value);
		}

	}

}

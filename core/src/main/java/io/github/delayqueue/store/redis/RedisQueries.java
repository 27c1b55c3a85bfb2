package io.github.delayqueue.store.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;

import io.github.delayqueue.store.FoundTopics;
import io.github.delayqueue.store.GroupView;
import io.github.delayqueue.store.MessagePage;
import io.github.delayqueue.store.MessageSnapshot;
import io.github.delayqueue.store.MessageState;
import io.github.delayqueue.store.MessageSummary;
import io.github.delayqueue.store.NewMessage;
import io.github.delayqueue.store.Failures;
import io.github.delayqueue.store.PartialStats.PartitionFailure;
import io.github.delayqueue.store.PartitionCountException;
import io.github.delayqueue.store.TopicPartitions;
import io.github.delayqueue.store.TopicStats;
import io.github.delayqueue.time.Durations;
import io.lettuce.core.KeyScanCursor;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanCursor;
import io.lettuce.core.api.async.RedisAsyncCommands;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.api.async.RedisAdvancedClusterAsyncCommands;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;
import org.jspecify.annotations.Nullable;

import org.springframework.dao.DataAccessException;
import org.springframework.dao.QueryTimeoutException;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.RedisTemplate;

/**
 * The reads of operations: a topic's counts, pages of its messages, one message, the
 * topics there are; each over every partition of a topic, and none changes anything.
 */
final class RedisQueries {

	/** The end of a partition's schedules key, after its tag. */
	static final String SCHEDULES = "sc";

	/** Most ids at the head of each ready list the stats look at for the oldest one. */
	private static final int READY_HEAD_LOOKUP = 1000;

	/**
	 * How far into a partitioned topic's messages of one state a page may end: each
	 * partition is read up to there, to merge their pages in order.
	 */
	static final int MAX_MERGED_PAGE_END = 10_000;

	private final ScriptCalls calls;

	private final PartitionRouter router;

	private final UnansweredSends unanswered;

	private final RedisTemplate<String, byte[]> redis;

	private final PartitionReads reads;

	RedisQueries(ScriptCalls calls, PartitionRouter router, UnansweredSends unanswered,
			RedisTemplate<String, byte[]> redis, PartitionReads reads) {
		this.calls = calls;
		this.router = router;
		this.unanswered = unanswered;
		this.redis = redis;
		this.reads = reads;
	}

	/**
	 * Counts a topic's messages in each state and reads its next and oldest waiting due
	 * times, at one instant, over every partition; changes nothing.
	 * @param topic the topic
	 * @return the counts and times
	 * @throws PartitionCountException if Redis spreads the topic over another number of
	 * partitions than this application (its counts would miss partitions)
	 */
	TopicStats stats(String topic) {
		this.router.agree(TopicPartitions.topicOf(topic), false, this.calls.deadline());
		return this.router.partitions()
			.names(topic)
			.stream()
			.map(this::partitionStats)
			.reduce(TopicStats::plus)
			.orElseThrow();
	}

	/**
	 * @return the longest wait of any read for Redis
	 */
	Duration timeout() {
		return this.calls.timeout();
	}

	/**
	 * Starts reading the stats of each partition of a topic at once; each read fails
	 * within the store's timeout.
	 * @param topic the topic
	 * @return the reads, by partition, partition 0 first
	 */
	Map<String, CompletableFuture<TopicStats>> readPartitions(String topic) {
		return this.reads.stats(topic, new ScriptCodecs.Stats(READY_HEAD_LOOKUP));
	}

	/**
	 * Tells which primary serves a partition, from the Cluster topology the client holds.
	 * @param partition the partition
	 * @return {@code host:port}, or {@code null} outside a Cluster
	 */
	@Nullable String serverOf(String partition) {
		return this.reads.serverOf(partition);
	}

	/** The stats of one partition, or of a topic without partitions. */
	TopicStats partitionStats(String topic) {
		return this.calls.run(topic, new ScriptCodecs.Stats(READY_HEAD_LOOKUP));
	}

	/**
	 * Reads one page of a topic's messages in one state, oldest first (by due time, lease
	 * deadline or time of death; ready messages by due time), without their payloads;
	 * changes nothing. Ready ids that claim would drop are left out of a ready page. A
	 * partitioned topic's pages are in that order across its partitions, and end at most
	 * {@value #MAX_MERGED_PAGE_END} messages in.
	 * @param topic the topic
	 * @param state the state
	 * @param offset the rank of the first message, 0-based
	 * @param limit the largest number of messages
	 * @return the page
	 * @throws IllegalArgumentException for a limit under 1, a negative offset, or a page
	 * of a partitioned topic that ends too far in
	 */
	MessagePage page(String topic, MessageState state, long offset, int limit) {
		return page(topic, state, offset, limit, this.calls.timeout(), false);
	}

	/**
	 * Reads one page as {@link #page(String, MessageState, long, int)} does, waiting at
	 * most a given time (never longer than the store's timeout); the partitions of a
	 * partitioned topic that do not answer are left out and named in the page.
	 * @param topic the topic
	 * @param state the state
	 * @param offset the rank of the first message, 0-based
	 * @param limit the largest number of messages
	 * @param within the longest wait
	 * @return the page
	 * @throws DataAccessException if no partition answered
	 */
	MessagePage page(String topic, MessageState state, long offset, int limit, Duration within) {
		return page(topic, state, offset, limit, within, true);
	}

	/**
	 * A page; with {@code partial}, of the partitions that answer (for a look), else of
	 * all or none (for the actions that work through the oldest dead letters).
	 */
	private MessagePage page(String topic, MessageState state, long offset, int limit, Duration within,
			boolean partial) {
		Duration wait = (within.compareTo(this.calls.timeout()) < 0) ? within : this.calls.timeout();
		if (limit < 1 || offset < 0) {
			throw new IllegalArgumentException("A page needs a limit of 1 or more and an offset of 0 or more, but was "
					+ "limit " + limit + ", offset " + offset);
		}
		long deadline = System.nanoTime() + wait.toNanos();
		this.router.agree(TopicPartitions.topicOf(topic), false, deadline);
		List<String> names = this.router.partitions().names(topic);
		if (names.size() == 1) {
			return partitionPage(topic, state, offset, limit, PartitionCounts.remaining(deadline));
		}
		if (offset + limit > MAX_MERGED_PAGE_END) {
			throw new IllegalArgumentException(
					"A page of a topic with " + names.size() + " partitions ends at most " + MAX_MERGED_PAGE_END
							+ " messages in (offset + limit), but was offset " + offset + ", limit " + limit);
		}
		// Each partition's first offset + limit messages, each in its partition's order,
		// merged without reordering any of them: every page of the topic then holds the
		// next messages of the one before, none twice. The partitions are read at once;
		// one that does not answer is left out and named.
		Map<String, CompletableFuture<MessagePage>> reads = new LinkedHashMap<>();
		for (String name : names) {
			ScriptCodecs.Page codec = new ScriptCodecs.Page(state, 0, (int) (offset + limit));
			reads.put(name,
					this.calls
						.submit(this.calls.call(codec, pageKeys(name, state)), PartitionCounts.remaining(deadline))
						.thenApply(codec::read));
		}
		long total = 0;
		List<List<MessageSummary>> slices = new ArrayList<>();
		Map<String, PartitionFailure> unreachable = new LinkedHashMap<>();
		DataAccessException failure = null;
		for (Map.Entry<String, CompletableFuture<MessagePage>> read : reads.entrySet()) {
			try {
				MessagePage page = ScriptRunner.awaitFuture(read.getValue(), deadline, wait);
				total += page.total();
				slices.add(page.messages());
			}
			catch (DataAccessException ex) {
				failure = ex;
				unreachable.put(read.getKey(),
						new PartitionFailure(read.getKey(), serverOf(read.getKey()), Failures.describe(ex)));
			}
		}
		if (failure != null && (!partial || slices.isEmpty())) {
			throw failure;
		}
		List<MessageSummary> merged = merge(slices, mergeOrder(state), (int) (offset + limit));
		int from = (int) Math.min(offset, merged.size());
		return new MessagePage(total, List.copyOf(merged.subList(from, merged.size())), unreachable);
	}

	/**
	 * The order in which the messages of several partitions take turns: the order of each
	 * partition's page (ready: by priority, most urgent first, then as queued, close to
	 * due order; else by score).
	 */
	private static Comparator<MessageSummary> mergeOrder(MessageState state) {
		if (state == MessageState.READY) {
			return Comparator.comparingInt(MessageSummary::priority)
				.reversed()
				.thenComparingLong(MessageSummary::dueAtMillis);
		}
		return Comparator.comparingLong(MessageSummary::score);
	}

	/**
	 * The first messages of the slices merged: each step takes the head that comes first
	 * in the order, so each slice's own order is kept.
	 */
	private static List<MessageSummary> merge(List<List<MessageSummary>> slices, Comparator<MessageSummary> order,
			int max) {
		List<MessageSummary> merged = new ArrayList<>();
		int[] next = new int[slices.size()];
		while (merged.size() < max) {
			int best = -1;
			for (int i = 0; i < slices.size(); i++) {
				if (next[i] < slices.get(i).size() && (best < 0
						|| order.compare(slices.get(i).get(next[i]), slices.get(best).get(next[best])) < 0)) {
					best = i;
				}
			}
			if (best < 0) {
				break;
			}
			merged.add(slices.get(best).get(next[best]++));
		}
		return merged;
	}

	private MessagePage partitionPage(String topic, MessageState state, long offset, int limit, Duration timeout) {
		return this.calls.run(new ScriptCodecs.Page(state, offset, limit), pageKeys(topic, state), timeout);
	}

	private Function<Script.Key, String> pageKeys(String partition, MessageState state) {
		TopicKeys keys = this.calls.keys(partition);
		String index = switch (state) {
			case SCHEDULED -> keys.scheduled();
			case READY -> keys.ready();
			case IN_FLIGHT -> keys.inFlight();
			case DEAD -> keys.dead();
		};
		String messages = (state == MessageState.DEAD) ? keys.deadMessages() : keys.messages();
		return (role) -> switch (role) {
			case STATE_INDEX -> index;
			case STATE_MESSAGES -> messages;
			default -> keys.key(role);
		};
	}

	/**
	 * Finds one message in whatever state it is, once every earlier send of its id by
	 * this store has an outcome; changes nothing.
	 * @param topic the topic
	 * @param id the message id
	 * @param maxBytes the most bytes of the stored message to read
	 * @return the message, or {@code null} if the topic has no message with that id
	 */
	@Nullable MessageSnapshot inspect(String topic, String id, int maxBytes) {
		long deadline = this.unanswered.awaitEarlier(topic, id, this.calls::deadline);
		String partition = this.router.partitionOf(topic, id, deadline);
		MessageSnapshot found = this.router.settlingRefusal(topic, deadline,
				() -> this.calls.run(partition, new ScriptCodecs.Inspect(id, maxBytes, this.router.countOf(partition)),
						PartitionCounts.remaining(deadline)));
		if (found != null) {
			return found;
		}
		// A message of a group is in its group's partition.
		return this.router
			.runOnOthers(topic, partition, deadline,
					(other) -> new ScriptCodecs.Inspect(id, maxBytes, this.router.countOf(other)))
			.stream()
			.filter(Objects::nonNull)
			.findFirst()
			.orElse(null);
	}

	/**
	 * Reads one group of a topic by name, in its partition; changes nothing.
	 * @param topic the topic
	 * @param group the group's name
	 * @return the group, empty if the topic does not know it
	 * @throws IllegalArgumentException if the name cannot be a group's
	 */
	GroupView group(String topic, String group) {
		NewMessage.checkGroup(group);
		long deadline = this.calls.deadline();
		String partition = this.router.partitionOfGroup(topic, group, deadline);
		return this.router.settlingRefusal(topic, deadline,
				() -> this.calls.run(partition,
						new ScriptCodecs.Group(group, GroupView.FIRST_READY_IDS, this.router.countOf(partition)),
						PartitionCounts.remaining(deadline)));
	}

	/**
	 * Finds the topics that have messages under this store's prefix, with {@code SCAN}:
	 * for operations, never for a hot path. The whole scan waits at most the store's
	 * timeout (a {@code SCAN} is a plain command, which would otherwise wait for the
	 * client's own timeout, a minute on Lettuce).
	 * @param max the most topics to return
	 * @return topic names in alphabetical order, at most {@code max}
	 * @throws QueryTimeoutException naming the scan if Redis does not finish it in time
	 */
	List<String> findTopics(int max) {
		return findTopics(max, "*[mzd]");
	}

	/**
	 * Finds the topics under this store's prefix that have a key whose name after the
	 * topic's tag matches a glob, as {@link #findTopics(int)} does.
	 * @param max the most topics to return
	 * @param glob the end of the key names, e.g. {@code sc} for schedules
	 * @return topic names in alphabetical order, at most {@code max}
	 */
	List<String> findTopics(int max, String glob) {
		return findTopics(max, glob, this.calls.timeout());
	}

	private List<String> findTopics(int max, String glob, Duration within) {
		// The schedules key, or a key of one letter: what the globs name.
		long deadline = System.nanoTime() + within.toNanos();
		String prefix = this.calls.prefix();
		ScanArgs args = ScanArgs.Builder.matches(globEscape(prefix) + ":{*}:" + glob).limit(1000);
		List<String> found = this.redis.execute((RedisCallback<List<String>>) (connection) -> {
			RedisClusterAsyncCommands<byte[], byte[]> commands = asyncCommands(connection);
			Set<String> topics = new TreeSet<>();
			KeyScanCursor<byte[]> cursor = awaitScan(commands.scan(args), deadline, within);
			while (true) {
				for (byte[] key : cursor.getKeys()) {
					String topic = topicOfKey(prefix, new String(key, StandardCharsets.UTF_8));
					if (topic != null && topics.size() < max) {
						topics.add(topic);
					}
				}
				if (cursor.isFinished() || topics.size() >= max) {
					return new ArrayList<>(topics);
				}
				cursor = awaitScan(commands.scan(cursor, args), deadline, within);
			}
		});
		return (found != null) ? found : List.of();
	}

	/**
	 * Finds the topics that have messages as {@link #findTopics(int)} does, within a
	 * given time; on a Cluster, every primary at once, naming those that do not answer.
	 * @param max the most topics to return
	 * @param within the longest wait
	 * @return the topics found and the primaries that did not answer
	 */
	FoundTopics searchTopics(int max, Duration within) {
		long deadline = System.nanoTime() + within.toNanos();
		String prefix = this.calls.prefix();
		ScanArgs args = ScanArgs.Builder.matches(globEscape(prefix) + ":{*}:*[mzd]").limit(1000);
		FoundTopics found = this.redis.execute((RedisCallback<FoundTopics>) (connection) -> {
			if (!(connection.getNativeConnection() instanceof RedisAdvancedClusterAsyncCommands<?, ?> cluster)) {
				return null;
			}
			@SuppressWarnings("unchecked")
			StatefulRedisClusterConnection<byte[], byte[]> nodes = (StatefulRedisClusterConnection<byte[], byte[]>) cluster
				.getStatefulConnection();
			Map<String, CompletableFuture<Set<String>>> scans = new TreeMap<>();
			for (RedisClusterNode node : nodes.getPartitions()) {
				if (node.is(RedisClusterNode.NodeFlag.UPSTREAM) && !node.getSlots().isEmpty()) {
					scans.put(node.getUri().getHost() + ":" + node.getUri().getPort(), nodes
						.getConnectionAsync(node.getNodeId())
						.thenCompose(
								(server) -> scanNode(server.async(), ScanCursor.INITIAL, args, new TreeSet<>(), max)));
				}
			}
			Set<String> topics = new TreeSet<>();
			Map<String, String> unreachable = new LinkedHashMap<>();
			scans.forEach((address, scan) -> {
				try {
					topics.addAll(ScriptRunner.awaitFuture(scan, deadline, within));
				}
				catch (DataAccessException ex) {
					unreachable.put(address,
							"the SCAN for the topics under '" + prefix + "' failed: " + Failures.describe(ex));
				}
			});
			return new FoundTopics(topics.stream().limit(max).toList(), unreachable);
		});
		return (found != null) ? found : new FoundTopics(findTopics(max, "*[mzd]", within), Map.of());
	}

	private CompletableFuture<Set<String>> scanNode(RedisAsyncCommands<byte[], byte[]> server, ScanCursor cursor,
			ScanArgs args, Set<String> topics, int max) {
		return server.scan(cursor, args).toCompletableFuture().thenCompose((next) -> {
			for (byte[] key : next.getKeys()) {
				String topic = topicOfKey(this.calls.prefix(), new String(key, StandardCharsets.UTF_8));
				if (topic != null && topics.size() < max) {
					topics.add(topic);
				}
			}
			return (next.isFinished() || topics.size() >= max) ? CompletableFuture.completedFuture(topics)
					: scanNode(server, next, args, topics, max);
		});
	}

	@SuppressWarnings("unchecked")
	private static RedisClusterAsyncCommands<byte[], byte[]> asyncCommands(RedisConnection connection) {
		Object commands = connection.getNativeConnection();
		if (!(commands instanceof RedisClusterAsyncCommands<?, ?>)) {
			throw new IllegalStateException("Not a Lettuce connection: " + commands.getClass().getName());
		}
		// A Cluster's (RedisAdvancedClusterAsyncCommands) scans every primary in turn.
		return (RedisClusterAsyncCommands<byte[], byte[]>) commands;
	}

	private KeyScanCursor<byte[]> awaitScan(RedisFuture<KeyScanCursor<byte[]>> reply, long deadline, Duration within) {
		try {
			return ScriptRunner.await(reply, deadline, within);
		}
		catch (QueryTimeoutException ex) {
			throw new QueryTimeoutException("The SCAN for the topics under '" + this.calls.prefix()
					+ "' did not finish within " + Durations.format(within)
					+ (within.equals(this.calls.timeout()) ? " (delay-queue.producer.send-timeout)" : ""), ex);
		}
	}

	/**
	 * The topic (or dead-letter queue) whose messages, schedule or dead letters a key
	 * holds: {@code <prefix>:{<partition>}:} then {@code x:} once per dead-letter queue,
	 * then {@code m}, {@code z} or {@code d}.
	 */
	private static @Nullable String topicOfKey(String prefix, String key) {
		int start = prefix.length() + 2;
		int tagEnd = key.lastIndexOf("}:");
		if (!key.startsWith(prefix + ":{") || tagEnd < start) {
			return null;
		}
		String suffix = key.substring(tagEnd + 2);
		StringBuilder topic = new StringBuilder(TopicPartitions.topicOf(key.substring(start, tagEnd)));
		while (suffix.startsWith("x:")) {
			suffix = suffix.substring(2);
			topic.append(TopicPartitions.DEAD_LETTERS);
		}
		return (suffix.length() == 1 || suffix.equals(SCHEDULES)) ? topic.toString() : null;
	}

	private static String globEscape(String text) {
		StringBuilder escaped = new StringBuilder(text.length());
		for (char c : text.toCharArray()) {
			if (c == '*' || c == '?' || c == '[' || c == ']' || c == '\\') {
				escaped.append('\\');
			}
			escaped.append(c);
		}
		return escaped.toString();
	}

}

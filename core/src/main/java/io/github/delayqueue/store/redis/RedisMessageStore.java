package io.github.delayqueue.store.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.Function;
import java.util.function.Supplier;

import io.github.delayqueue.store.ClaimResult;
import io.github.delayqueue.store.ClaimedMessage;
import io.github.delayqueue.store.LeaseExpiryResult;
import io.github.delayqueue.store.LeaseTokens;
import io.github.delayqueue.store.MessagePage;
import io.github.delayqueue.store.MessageSnapshot;
import io.github.delayqueue.store.MessageState;
import io.github.delayqueue.store.MessageStore;
import io.github.delayqueue.store.MessageSummary;
import io.github.delayqueue.store.NewMessage;
import io.github.delayqueue.store.NotReplicatedException;
import io.github.delayqueue.store.PartitionCountException;
import io.github.delayqueue.store.PromoteResult;
import io.github.delayqueue.store.RateLimit;
import io.github.delayqueue.store.ReplayResult;
import io.github.delayqueue.store.Sent;
import io.github.delayqueue.store.TopicInspector;
import io.github.delayqueue.store.TopicPartitions;
import io.github.delayqueue.store.TopicStats;
import io.github.delayqueue.store.TopicStore;
import io.github.delayqueue.store.WakeUpListener;
import io.github.delayqueue.store.WriteGate;
import io.github.delayqueue.store.redis.ScriptRunner.ScriptCall;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import org.jspecify.annotations.Nullable;

import org.springframework.dao.DataAccessException;
import org.springframework.data.redis.connection.DataType;
import org.springframework.data.redis.connection.RedisClusterConnection;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.core.Cursor;
import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.RedisTemplate;
import org.springframework.data.redis.core.ScanOptions;
import org.springframework.data.redis.serializer.RedisSerializer;

/**
 * Runs the queue's state transitions against Redis, each as one Lua script, so that no
 * message is lost or duplicated between two steps. Thread-safe.
 */
public class RedisMessageStore implements MessageStore, AutoCloseable {

	private static final int READY_HEAD_LOOKUP = 1000;

	/** Default of the longest wait for Redis. */
	public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(5);

	/** Most messages in one send script call: about a millisecond of Redis time. */
	static final int MAX_SEND_CHUNK = 250;

	/** Most body bytes in one send script call. */
	static final int MAX_SEND_CHUNK_BYTES = 512 * 1024;

	/**
	 * How far into a partitioned topic's messages of one state a page may end: each
	 * partition is read up to there, to merge their pages in order.
	 */
	static final int MAX_MERGED_PAGE_END = 10_000;

	private final RedisTemplate<String, byte[]> redis;

	private final String prefix;

	private final String channel;

	private final ScriptRunner runner;

	private final Duration timeout;

	private final ScriptClock clock;

	private final RedisConnectionFactory connectionFactory;

	private @Nullable ReplicatedWrites replicatedWrites;

	private volatile PartitionCounts partitionCounts;

	private volatile boolean shardedSignals;

	/**
	 * Creates a store that waits at most {@link #DEFAULT_TIMEOUT} for Redis.
	 * @param connectionFactory the Redis connection factory
	 * @param prefix the prefix of every key
	 */
	public RedisMessageStore(RedisConnectionFactory connectionFactory, String prefix) {
		this(connectionFactory, prefix, DEFAULT_TIMEOUT);
	}

	/**
	 * Creates a store.
	 * @param connectionFactory the Redis connection factory
	 * @param prefix the prefix of every key
	 * @param timeout the longest wait for Redis of any script call, whatever the client's
	 * own command timeout
	 */
	public RedisMessageStore(RedisConnectionFactory connectionFactory, String prefix, Duration timeout) {
		this(connectionFactory, prefix, timeout, ScriptClock.server());
	}

	/**
	 * Creates a store whose scripts read another clock than the Redis server's: for
	 * tests.
	 * @param connectionFactory the Redis connection factory
	 * @param prefix the prefix of every key
	 * @param timeout the longest wait for Redis of any script call, whatever the client's
	 * own command timeout
	 * @param clock the clock of the scripts
	 */
	public RedisMessageStore(RedisConnectionFactory connectionFactory, String prefix, Duration timeout,
			ScriptClock clock) {
		RedisTemplate<String, byte[]> template = new RedisTemplate<>();
		template.setConnectionFactory(connectionFactory);
		template.setKeySerializer(RedisSerializer.string());
		template.setValueSerializer(RedisSerializer.byteArray());
		template.setHashKeySerializer(RedisSerializer.string());
		template.setHashValueSerializer(RedisSerializer.byteArray());
		template.afterPropertiesSet();
		this.redis = template;
		this.prefix = prefix;
		this.channel = TopicKeys.signalChannel(prefix);
		this.runner = new ScriptRunner(connectionFactory);
		this.timeout = timeout;
		this.clock = clock;
		this.connectionFactory = connectionFactory;
		this.partitionCounts = new PartitionCounts(this, TopicPartitions.NONE);
	}

	/**
	 * Spreads topics over partitions: every call that names a topic and a message id goes
	 * to the message's partition, and every call that names only a topic covers all of
	 * its partitions, except the transitions of {@link #topic(String)}, which belong to
	 * one partition each. Call once, before the first send.
	 * @param partitions the partitions of the topics
	 */
	public void usePartitions(TopicPartitions partitions) {
		this.partitionCounts = new PartitionCounts(this, partitions);
	}

	/**
	 * @return how topics are spread over partitions
	 */
	@Override
	public TopicPartitions partitions() {
		return this.partitionCounts.partitions();
	}

	/**
	 * Makes sure that Redis spreads a topic over the number of partitions configured
	 * here, as a listener starting does: the first call for a topic reads the count kept
	 * in Redis and, if it differs, changes it if every message stays within reach of the
	 * calls that find it by id; later calls return at once. Every call of this store that
	 * stores or finds messages by id agrees first (only a send may change the count), and
	 * names the count, which each partition checks.
	 * @param topic the topic
	 * @throws PartitionCountException if the counts differ and the count cannot change
	 * now
	 * @throws DataAccessException if Redis failed or did not answer in time
	 */
	@Override
	public void agreePartitions(String topic) {
		this.partitionCounts.agree(topic, true, deadline());
	}

	/**
	 * Checks again that Redis spreads a topic over the number of partitions configured
	 * here, as after a partition refused a call of this application: repairs the count
	 * markers a change left behind, or waits for a change on its way to end. Never
	 * changes the count.
	 * @param topic the topic
	 * @throws PartitionCountException if Redis has another count, or a change did not end
	 * within this store's timeout
	 * @throws DataAccessException if Redis failed or did not answer in time
	 */
	@Override
	public void checkPartitions(String topic) {
		this.partitionCounts.settle(topic, deadline());
	}

	/** When a call that starts now must be done: this store's timeout from now. */
	private long deadline() {
		return System.nanoTime() + this.timeout.toNanos();
	}

	/**
	 * The partition of a message, once the topic's count is agreed (by a call that does
	 * not change it).
	 */
	private String partitionOf(String topic, String id, long deadline) {
		this.partitionCounts.agree(topic, false, deadline);
		return partitions().nameFor(topic, id);
	}

	/** The number of partitions of the topic a partition (or topic) belongs to. */
	private int countOf(String partition) {
		return partitions().count(TopicPartitions.topicOf(partition));
	}

	/**
	 * Runs one script call on a partition of a topic; if the partition refused this
	 * application's count (which changed nothing), settles the count and runs it once
	 * more.
	 * @throws PartitionCountException if Redis has another count, or the call is refused
	 * again
	 */
	private <T> T settlingRefusal(String topic, long deadline, Supplier<T> call) {
		try {
			return call.get();
		}
		catch (RuntimeException ex) {
			if (!PartitionCounts.isRefusal(ex)) {
				throw ex;
			}
		}
		this.partitionCounts.settle(topic, deadline);
		try {
			return call.get();
		}
		catch (RuntimeException ex) {
			if (PartitionCounts.isRefusal(ex)) {
				throw PartitionCountException.refusedAgain(topic, partitions().count(topic));
			}
			throw ex;
		}
	}

	/**
	 * Makes every send return only once Redis confirms its writes on the given number of
	 * replicas ({@code WAIT}), over connections of its own (Lettuce only). Call once,
	 * before the first send.
	 * @param replicas the replicas that must confirm, at least 1
	 * @param timeout the longest wait for them, on top of the send's own
	 * @throws IllegalStateException if the connection factory is not Lettuce's
	 */
	public void confirmReplication(int replicas, Duration timeout) {
		this.replicatedWrites = new ReplicatedWrites(this.connectionFactory, replicas, timeout);
	}

	/**
	 * Closes the connections of confirmed replication, if any.
	 */
	@Override
	public void close() {
		if (this.replicatedWrites != null) {
			this.replicatedWrites.close();
		}
	}

	/**
	 * @return the longest wait for Redis of a script call
	 */
	@Override
	public Duration timeout() {
		return this.timeout;
	}

	/**
	 * @return the clock the scripts read
	 */
	public ScriptClock clock() {
		return this.clock;
	}

	/**
	 * @return the key prefix
	 */
	@Override
	public String prefix() {
		return this.prefix;
	}

	/**
	 * Makes scripts send wake-up signals with {@code SPUBLISH} on each topic's own
	 * channel ({@link #signalChannel(String)}), which stays on the node of the topic,
	 * rather than with {@code PUBLISH} on the prefix's channel, which a Redis Cluster
	 * passes to every node. Needs a Redis 7 Cluster ({@link #shardedSignalsAvailable()});
	 * call once, before the first script runs, and subscribe to the topics' channels with
	 * {@code SSUBSCRIBE}.
	 */
	public void useShardedSignals() {
		this.shardedSignals = true;
	}

	/**
	 * @return whether scripts send signals with {@code SPUBLISH} on each topic's channel
	 */
	public boolean shardedSignals() {
		return this.shardedSignals;
	}

	/**
	 * Tells whether the Redis behind the connection factory is a Cluster that knows
	 * sharded pub/sub ({@code SPUBLISH}, Redis 7): it sends an empty signal, which
	 * receivers ignore, on a channel of its own.
	 * @return whether {@link #useShardedSignals()} can be used
	 */
	public boolean shardedSignalsAvailable() {
		try (RedisConnection connection = this.connectionFactory.getConnection()) {
			if (!(connection instanceof RedisClusterConnection)
					|| !(connection.getNativeConnection() instanceof RedisClusterAsyncCommands<?, ?> commands)) {
				return false;
			}
			@SuppressWarnings("unchecked")
			RedisClusterAsyncCommands<byte[], byte[]> async = (RedisClusterAsyncCommands<byte[], byte[]>) commands;
			byte[] channel = TopicKeys.shardedSignalChannel(this.prefix, "probe").getBytes(StandardCharsets.UTF_8);
			ScriptRunner.await(async.spublish(channel, new byte[0]), System.nanoTime() + this.timeout.toNanos(),
					this.timeout);
			return true;
		}
		catch (DataAccessException ex) {
			// An unknown command (Redis 6.2), or Redis out of reach now: PUBLISH works on
			// every version.
			return false;
		}
	}

	/**
	 * The channel on which the scripts of a topic send wake-up signals.
	 * @param topic the topic
	 * @return the topic's own channel with sharded signals, else the prefix's channel
	 */
	public String signalChannel(String topic) {
		return this.shardedSignals ? TopicKeys.shardedSignalChannel(this.prefix, topic) : this.channel;
	}

	/**
	 * @return the pub/sub channel on which scripts publish wake-up signals, unless they
	 * are sharded
	 */
	public String signalChannel() {
		return this.channel;
	}

	@Override
	public AutoCloseable subscribe(Collection<String> partitions, WakeUpListener listener) {
		return this.shardedSignals
				? ShardedSignalSubscription.subscribe(this.connectionFactory,
						partitions.stream().map(this::signalChannel).toList(), listener, this.timeout)
				: RedisSignals.subscribe(this.connectionFactory, this.channel, listener);
	}

	/**
	 * One topic's transitions, for the runtime.
	 * @param topic the topic
	 * @return the topic's store
	 */
	@Override
	public TopicStore topic(String topic) {
		return new RedisTopicStore(this, topic);
	}

	/**
	 * One topic's read-only view, for operations.
	 * @param topic the topic
	 * @return the topic's inspector
	 */
	@Override
	public TopicInspector inspector(String topic) {
		return new RedisTopicStore(this, topic);
	}

	/**
	 * The keys of a topic.
	 * @param topic the topic
	 * @return its keys
	 */
	public TopicKeys keys(String topic) {
		return new TopicKeys(this.prefix, topic);
	}

	/**
	 * Stores and schedules messages of one topic; ids already stored are reported as
	 * duplicates and left unchanged. A large batch goes out in several script calls, all
	 * sent before the first reply is awaited, so that no call keeps Redis busy for long.
	 * @param topic the topic
	 * @param messages the messages, in send order
	 * @return one result per message, in the same order
	 */
	@Override
	public List<Sent> send(String topic, List<NewMessage> messages) {
		return send(Map.of(topic, messages)).get(topic);
	}

	/**
	 * Stores and schedules messages of several topics: at most {@value #MAX_SEND_CHUNK}
	 * messages (and about {@value #MAX_SEND_CHUNK_BYTES} bytes) per script call, all
	 * calls sent before the first reply is awaited, so the whole batch costs one round
	 * trip. A call that fails because Redis lost the script is sent again alone; the
	 * others are not repeated.
	 * @param messagesByTopic the messages of each topic, in send order
	 * @return the results of each topic, in the same order as its messages
	 * @throws DataAccessException if Redis failed or did not answer in time; any subset
	 * of the messages may have been stored, and a retry with the same ids stores the rest
	 * @throws NotReplicatedException if replication is confirmed and too few replicas
	 * confirmed the writes in time
	 */
	@Override
	public Map<String, List<Sent>> send(Map<String, List<NewMessage>> messagesByTopic) {
		long deadline = deadline();
		messagesByTopic.keySet().forEach((topic) -> this.partitionCounts.agree(topic, true, deadline));
		TopicPartitions partitions = partitions();
		if (!partitions.any()) {
			return sendToPartitions(messagesByTopic, deadline);
		}
		Map<String, List<NewMessage>> byPartition = new LinkedHashMap<>();
		messagesByTopic.forEach((topic,
				messages) -> messages.forEach((message) -> byPartition
					.computeIfAbsent(partitions.nameFor(topic, message.id()), (name) -> new ArrayList<>())
					.add(message)));
		Map<String, Iterator<Sent>> sent = new LinkedHashMap<>();
		sendToPartitions(byPartition, deadline).forEach((name, results) -> sent.put(name, results.iterator()));
		Map<String, List<Sent>> results = new LinkedHashMap<>();
		messagesByTopic.forEach((topic, messages) -> results.put(topic,
				messages.stream().map((message) -> sent.get(partitions.nameFor(topic, message.id())).next()).toList()));
		return results;
	}

	/**
	 * Sends messages to partitions (or topics), all script calls before the first reply
	 * is awaited. The calls a partition refused (they stored nothing) are sent once more,
	 * alone, after the count is settled; the others are not repeated.
	 */
	private Map<String, List<Sent>> sendToPartitions(Map<String, List<NewMessage>> messagesByTopic, long deadline) {
		List<String> topics = new ArrayList<>();
		List<ScriptCodecs.Send> sends = new ArrayList<>();
		List<ScriptCall> calls = new ArrayList<>();
		messagesByTopic.forEach((topic, messages) -> {
			for (List<NewMessage> chunk : chunks(messages)) {
				ScriptCodecs.Send send = new ScriptCodecs.Send(signalChannel(topic), topic, countOf(topic), chunk);
				topics.add(topic);
				sends.add(send);
				calls.add(call(topic, send));
			}
		});
		List<Object> replies = new ArrayList<>(runSends(calls, deadline));
		List<Integer> refused = refused(replies);
		if (!refused.isEmpty()) {
			refused.stream()
				.map((i) -> TopicPartitions.topicOf(topics.get(i)))
				.distinct()
				.forEach((topic) -> this.partitionCounts.settle(topic, deadline));
			List<Object> again = runSends(refused.stream().map(calls::get).toList(), deadline);
			for (int r = 0; r < refused.size(); r++) {
				if (again.get(r) instanceof RuntimeException) {
					String topic = TopicPartitions.topicOf(topics.get(refused.get(r)));
					throw PartitionCountException.refusedAgain(topic, partitions().count(topic));
				}
				replies.set(refused.get(r), again.get(r));
			}
		}
		Map<String, List<Sent>> results = new LinkedHashMap<>();
		messagesByTopic.keySet().forEach((topic) -> results.put(topic, new ArrayList<>()));
		for (int i = 0; i < calls.size(); i++) {
			results.get(topics.get(i)).addAll(sends.get(i).read(replies.get(i)));
		}
		return results;
	}

	/**
	 * Runs send calls, all sent before the first reply is awaited, with confirmed
	 * replication if it is on.
	 * @return the replies, in order; the failure of a call that a partition refused
	 */
	private List<Object> runSends(List<ScriptCall> calls, long deadline) {
		ReplicatedWrites replicated = this.replicatedWrites;
		Duration timeout = PartitionCounts.remaining(deadline);
		return (replicated != null) ? replicated.runAll(calls, timeout, PartitionCounts::isRefusal)
				: this.runner.runAll(calls, timeout, PartitionCounts::isRefusal);
	}

	/** The indexes of the calls a partition refused. */
	private static List<Integer> refused(List<Object> replies) {
		List<Integer> refused = new ArrayList<>();
		for (int i = 0; i < replies.size(); i++) {
			if (replies.get(i) instanceof RuntimeException) {
				refused.add(i);
			}
		}
		return refused;
	}

	private static List<List<NewMessage>> chunks(List<NewMessage> messages) {
		List<List<NewMessage>> chunks = new ArrayList<>();
		int from = 0;
		while (from < messages.size()) {
			int to = from;
			long bytes = 0;
			while (to < messages.size() && to - from < MAX_SEND_CHUNK
					&& (to == from || bytes + messages.get(to).body().length <= MAX_SEND_CHUNK_BYTES)) {
				bytes += messages.get(to).body().length;
				to++;
			}
			chunks.add(messages.subList(from, to));
			from = to;
		}
		return chunks;
	}

	/**
	 * Moves due messages of a topic to its ready list.
	 * @param topic the topic
	 * @param limit the largest number of messages to move
	 * @return what moved and when the next message is due
	 */
	public PromoteResult promote(String topic, int limit) {
		return promote(topic, limit, Duration.ZERO);
	}

	/**
	 * Moves messages of a topic that are due, or due within the lookahead, to its ready
	 * list.
	 * @param topic the topic
	 * @param limit the largest number of messages to move
	 * @param lookahead how long before their due time messages may move
	 * @return what moved, when the next message is due and when the next lease ends
	 */
	public PromoteResult promote(String topic, int limit, Duration lookahead) {
		return await(promoteAsync(topic, limit, lookahead));
	}

	/**
	 * Moves messages of a topic that are due, or due within the lookahead, to its ready
	 * list, without waiting for Redis: the future completes on the Redis client's I/O
	 * thread, where nothing may block.
	 * @param topic the topic
	 * @param limit the largest number of messages to move
	 * @param lookahead how long before their due time messages may move
	 * @return what moved, when the next message is due and when the next lease ends
	 */
	public CompletableFuture<PromoteResult> promoteAsync(String topic, int limit, Duration lookahead) {
		return submit(topic, new ScriptCodecs.Promote(limit, signalChannel(topic), topic, lookahead, countOf(topic)));
	}

	/**
	 * Leases up to {@code limit} ready messages of a topic that are due, under a new
	 * lease token.
	 * @param topic the topic
	 * @param limit the largest number of messages to claim
	 * @param lease how long the lease lasts
	 * @return the claimed messages, possibly none
	 */
	public List<ClaimedMessage> claim(String topic, int limit, Duration lease) {
		String consumer = LeaseTokens.newToken();
		return claim(topic, consumer, consumer + ".0", limit, 0, lease).messages();
	}

	/**
	 * Leases ready messages of a topic: up to {@code limit} that are due, and up to
	 * {@code earlyLimit} that the broker made ready before their due time. A request
	 * whose reply was lost may be sent again with the same consumer and token: it then
	 * returns the messages the first one leased (those still leased to the token) and
	 * claims nothing new.
	 * @param topic the topic
	 * @param consumer the consumer's id, the same for all its claims
	 * @param token the lease token, new for each claim request of the consumer
	 * @param limit the largest number of due messages to claim, 1 to 1000
	 * @param earlyLimit the largest number of messages not yet due to claim
	 * @param lease how long the lease lasts
	 * @return the claimed messages, possibly none, and whether more may be ready
	 */
	public ClaimResult claim(String topic, String consumer, String token, int limit, int earlyLimit, Duration lease) {
		return claim(topic, consumer, token, limit, earlyLimit, lease, null);
	}

	/**
	 * Leases ready messages of a topic as
	 * {@link #claim(String, String, String, int, int, Duration)} does, within a rate
	 * limit.
	 * @param topic the topic
	 * @param consumer the consumer's id, the same for all its claims
	 * @param token the lease token, new for each claim request of the consumer
	 * @param limit the largest number of due messages to claim, 1 to 1000
	 * @param earlyLimit the largest number of messages not yet due to claim
	 * @param lease how long the lease lasts
	 * @param rateLimit the topic's rate limit, or {@code null} for none
	 * @return the claimed messages, possibly none, whether more may be ready, and how
	 * long the rate limit holds the rest back
	 */
	public ClaimResult claim(String topic, String consumer, String token, int limit, int earlyLimit, Duration lease,
			@Nullable RateLimit rateLimit) {
		return await(claimAsync(topic, consumer, token, limit, earlyLimit, lease, rateLimit));
	}

	/**
	 * Leases ready messages of a topic as
	 * {@link #claim(String, String, String, int, int, Duration, RateLimit)} does, without
	 * waiting for Redis: the future completes on the Redis client's I/O thread, where
	 * nothing may block. With a rate limit, no more due messages are taken than its
	 * sliding window (the topic's {@link TopicKeys#rateWindow()}, shared by every
	 * consumer) has room for, and none before it is due; without one, the window is not
	 * touched.
	 * @param topic the topic
	 * @param consumer the consumer's id, the same for all its claims
	 * @param token the lease token, new for each claim request of the consumer
	 * @param limit the largest number of due messages to claim, 1 to 1000
	 * @param earlyLimit the largest number of messages not yet due to claim
	 * @param lease how long the lease lasts
	 * @param rateLimit the topic's rate limit, or {@code null} for none
	 * @return the claimed messages, possibly none, whether more may be ready, and how
	 * long the rate limit holds the rest back
	 */
	public CompletableFuture<ClaimResult> claimAsync(String topic, String consumer, String token, int limit,
			int earlyLimit, Duration lease, @Nullable RateLimit rateLimit) {
		return claimAsync(topic, consumer, token, limit, earlyLimit, lease, rateLimit, WriteGate.OPEN);
	}

	/**
	 * Leases ready messages of a topic as
	 * {@link #claimAsync(String, String, String, int, int, Duration, RateLimit)} does,
	 * writing the claim (and the script in full, if Redis lost it) only through a gate.
	 * @param topic the topic
	 * @param consumer the consumer's id, the same for all its claims
	 * @param token the lease token, new for each claim request of the consumer
	 * @param limit the largest number of due messages to claim, 1 to 1000
	 * @param earlyLimit the largest number of messages not yet due to claim
	 * @param lease how long the lease lasts
	 * @param rateLimit the topic's rate limit, or {@code null} for none
	 * @param gate lets the claim be written; when it does not, the future fails
	 * @return the claimed messages, possibly none, whether more may be ready, and how
	 * long the rate limit holds the rest back
	 */
	public CompletableFuture<ClaimResult> claimAsync(String topic, String consumer, String token, int limit,
			int earlyLimit, Duration lease, @Nullable RateLimit rateLimit, WriteGate gate) {
		if (limit < 1 || limit > MAX_IDS_PER_CALL) {
			throw new IllegalArgumentException("Claim limit must be 1 to " + MAX_IDS_PER_CALL + ", but was " + limit);
		}
		ScriptCodecs.Claim claim = new ScriptCodecs.Claim(limit, lease, earlyLimit, token, rateLimit);
		return this.runner.submit(call(claim, consumerKeys(topic, consumer)), this.timeout, gate)
			.thenApply(claim::read);
	}

	/** The keys of a topic, with the claim record of one consumer. */
	private Function<Script.Key, String> consumerKeys(String topic, String consumer) {
		TopicKeys keys = keys(topic);
		return (role) -> (role == Script.Key.CLAIM_RECORD) ? keys.claimRecord(consumer) : keys.key(role);
	}

	/**
	 * Acknowledges a message: it is deleted with all its data.
	 * @param topic the topic
	 * @param id the message id
	 * @param leaseToken the lease token the caller holds
	 * @return {@code true} if acknowledged, {@code false} if the lease had been lost
	 */
	public boolean ack(String topic, String id, String leaseToken) {
		return ack(topic, List.of(id), List.of(leaseToken)).get(0);
	}

	/**
	 * Acknowledges messages in one script call: each is deleted with all its data.
	 * @param topic the topic
	 * @param ids the message ids, 1 to 1000
	 * @param leaseTokens the lease token the caller holds for each id, in the same order
	 * @return for each id, {@code true} if acknowledged, {@code false} if its lease had
	 * been lost
	 */
	public List<Boolean> ack(String topic, List<String> ids, List<String> leaseTokens) {
		return await(ackAsync(topic, ids, leaseTokens));
	}

	/**
	 * Acknowledges messages in one script call as {@link #ack(String, List, List)} does,
	 * without waiting for Redis: the future completes on the Redis client's I/O thread,
	 * where nothing may block.
	 * @param topic the topic
	 * @param ids the message ids, 1 to 1000
	 * @param leaseTokens the lease token the caller holds for each id, in the same order
	 * @return for each id, {@code true} if acknowledged, {@code false} if its lease had
	 * been lost
	 */
	public CompletableFuture<List<Boolean>> ackAsync(String topic, List<String> ids, List<String> leaseTokens) {
		return submit(topic, new ScriptCodecs.Ack(ids, leaseTokens));
	}

	/**
	 * Schedules the next attempt of a message whose delivery failed.
	 * @param topic the topic
	 * @param id the message id
	 * @param leaseToken the lease token the caller holds
	 * @param backoff how long to wait before the next attempt
	 * @return the due time of the next attempt (epoch ms), or -1 if the lease had been
	 * lost
	 */
	public long retry(String topic, String id, String leaseToken, Duration backoff) {
		return run(topic, new ScriptCodecs.Retry(id, leaseToken, backoff, signalChannel(topic), topic, true));
	}

	/**
	 * Schedules a message its handler asked to slow down for again after a delay, without
	 * counting an attempt (the retry script, counting none).
	 * @param topic the topic
	 * @param id the message id
	 * @param leaseToken the token of the lease
	 * @param delay the delay from now (Redis time)
	 * @return the new due time (epoch ms), or -1 if the lease was lost
	 */
	public long postpone(String topic, String id, String leaseToken, Duration delay) {
		return run(topic, new ScriptCodecs.Retry(id, leaseToken, delay, signalChannel(topic), topic, false));
	}

	/**
	 * Moves a message to the topic's dead-letter set.
	 * @param topic the topic
	 * @param id the message id
	 * @param leaseToken the lease token the caller holds
	 * @param error the last error, kept with the message
	 * @return {@code true} if dead-lettered, {@code false} if the lease had been lost
	 */
	public boolean deadLetter(String topic, String id, String leaseToken, String error) {
		return run(topic, new ScriptCodecs.DeadLetter(id, leaseToken, error));
	}

	/**
	 * Hands an unfinished message back: it is ready again at once, its attempts
	 * unchanged.
	 * @param topic the topic
	 * @param id the message id
	 * @param leaseToken the lease token the caller holds
	 * @return {@code true} if it is ready again, {@code false} if the lease had been lost
	 */
	public boolean release(String topic, String id, String leaseToken) {
		return release(topic, List.of(id), List.of(leaseToken)).get(0);
	}

	/**
	 * Hands unfinished messages back in one script call: each is ready again at once, at
	 * the head of its ready list in the order given, its attempts unchanged.
	 * @param topic the topic
	 * @param ids the message ids, 1 to 1000
	 * @param leaseTokens the lease token the caller holds for each id, in the same order
	 * @return for each id, {@code true} if it is ready again, {@code false} if its lease
	 * had been lost
	 */
	public List<Boolean> release(String topic, List<String> ids, List<String> leaseTokens) {
		return await(releaseAsync(topic, ids, leaseTokens));
	}

	/**
	 * Hands unfinished messages back as {@link #release(String, List, List)} does,
	 * without waiting for Redis: the future completes on the Redis client's I/O thread,
	 * where nothing may block.
	 * @param topic the topic
	 * @param ids the message ids, 1 to 1000
	 * @param leaseTokens the lease token the caller holds for each id, in the same order
	 * @return for each id, {@code true} if it is ready again, {@code false} if its lease
	 * had been lost
	 */
	public CompletableFuture<List<Boolean>> releaseAsync(String topic, List<String> ids, List<String> leaseTokens) {
		return submit(topic, new ScriptCodecs.Release(signalChannel(topic), topic, ids, leaseTokens));
	}

	/**
	 * Hands back what a claim leased, from the consumer's record of its last claim, when
	 * the consumer does not take the claim's reply (it stopped while the claim was
	 * unanswered, or after it failed): each message still leased to the claim's token is
	 * ready again at once, attempts unchanged.
	 * @param topic the topic
	 * @param consumer the consumer's id
	 * @param token the claim's lease token
	 * @param lease the claim's lease length: if the claim has not run yet (the hand-back
	 * went out on another connection), it is kept from leasing anything for that long
	 * @return the ids handed back, in the order claimed; none if the consumer's last
	 * claim has another token or leased nothing
	 */
	public List<String> releaseClaim(String topic, String consumer, String token, Duration lease) {
		return await(releaseClaimAsync(topic, consumer, token, lease));
	}

	/**
	 * Hands back what a claim leased as
	 * {@link #releaseClaim(String, String, String, Duration)} does, without waiting for
	 * Redis, and with the script sent in full: on the connection shared by every call
	 * (the default of Spring Data Redis with Lettuce) Redis runs it after the claim even
	 * if the caller never reads either reply, e.g. because the connection closes right
	 * after. The future completes on the Redis client's I/O thread, where nothing may
	 * block.
	 * @param topic the topic
	 * @param consumer the consumer's id
	 * @param token the claim's lease token
	 * @param lease the claim's lease length: if the claim has not run yet, it is kept
	 * from leasing anything for that long
	 * @return the ids handed back, in the order claimed
	 */
	public CompletableFuture<List<String>> releaseClaimAsync(String topic, String consumer, String token,
			Duration lease) {
		ScriptCodecs.ReleaseClaim release = new ScriptCodecs.ReleaseClaim(signalChannel(topic), topic, token, lease);
		return this.runner.submitInFull(call(release, consumerKeys(topic, consumer)), this.timeout)
			.thenApply(release::read);
	}

	/**
	 * Extends the lease of a message whose handler is still working.
	 * @param topic the topic
	 * @param id the message id
	 * @param leaseToken the lease token the caller holds
	 * @param length the new lease length, from Redis time
	 * @return the new lease deadline (epoch ms), or -1 if the lease had been lost
	 */
	public long extendLease(String topic, String id, String leaseToken, Duration length) {
		return extendLeases(topic, List.of(id), List.of(leaseToken), length).get(0);
	}

	/**
	 * Extends the leases of messages whose handlers are still working, in one script
	 * call.
	 * @param topic the topic
	 * @param ids the message ids, 1 to 1000
	 * @param leaseTokens the lease token the caller holds for each id, in the same order
	 * @param length the new lease length, from Redis time
	 * @return for each id, its new lease deadline (epoch ms; never earlier than the one
	 * it had), or -1 if its lease had been lost
	 */
	public List<Long> extendLeases(String topic, List<String> ids, List<String> leaseTokens, Duration length) {
		return await(extendLeasesAsync(topic, ids, leaseTokens, length));
	}

	/**
	 * Extends leases as {@link #extendLeases(String, List, List, Duration)} does, without
	 * waiting for Redis: the future completes on the Redis client's I/O thread, where
	 * nothing may block.
	 * @param topic the topic
	 * @param ids the message ids, 1 to 1000
	 * @param leaseTokens the lease token the caller holds for each id, in the same order
	 * @param length the new lease length, from Redis time
	 * @return for each id, its new lease deadline (epoch ms; never earlier than the one
	 * it had), or -1 if its lease had been lost
	 */
	public CompletableFuture<List<Long>> extendLeasesAsync(String topic, List<String> ids, List<String> leaseTokens,
			Duration length) {
		return submit(topic, new ScriptCodecs.ExtendLeases(length, ids, leaseTokens));
	}

	/**
	 * Takes back messages whose lease has expired.
	 * @param topic the topic
	 * @param limit the largest number of messages to take back
	 * @param maxAttempts the topic's maximum attempts: a message that reaches it is
	 * dead-lettered
	 * @return what was taken back and when the next lease ends
	 */
	public LeaseExpiryResult expireLeases(String topic, int limit, int maxAttempts) {
		return run(topic, new ScriptCodecs.ExpireLeases(limit, maxAttempts, signalChannel(topic), topic));
	}

	/**
	 * Deletes a pending message.
	 * @param topic the topic
	 * @param id the message id
	 * @return {@code true} if it was scheduled or ready and is now gone
	 */
	@Override
	public boolean cancel(String topic, String id) {
		long deadline = deadline();
		String partition = partitionOf(topic, id, deadline);
		return settlingRefusal(topic, deadline,
				() -> run(partition, new ScriptCodecs.Cancel(id, countOf(partition)), remaining(deadline)));
	}

	/**
	 * Gives a pending message a new due time.
	 * @param topic the topic
	 * @param id the message id
	 * @param delay the new delay, from Redis time
	 * @return the new due time (epoch ms), or -1 if the message is not pending
	 */
	@Override
	public long reschedule(String topic, String id, Duration delay) {
		long deadline = deadline();
		String partition = partitionOf(topic, id, deadline);
		return settlingRefusal(topic, deadline,
				() -> run(partition,
						new ScriptCodecs.Reschedule(id, delay, signalChannel(partition), partition, countOf(partition)),
						remaining(deadline)));
	}

	/**
	 * Moves aside the keys of a topic that hold the wrong Redis type (written by
	 * something else), so that they no longer stall the topic: each is renamed to
	 * {@code <key>:quarantined:<epoch ms>} and kept for inspection.
	 * @param topic the topic
	 * @return the keys that were moved aside
	 */
	public List<String> quarantineWrongTypes(String topic) {
		List<String> moved = new ArrayList<>();
		keys(topic).types().forEach((key, expected) -> {
			DataType actual = this.redis.type(key);
			if (actual != null && actual != DataType.NONE && actual != expected) {
				this.redis.rename(key, key + ":quarantined:" + System.currentTimeMillis());
				moved.add(key + " (" + actual.code() + ", expected " + expected.code() + ")");
			}
		});
		return moved;
	}

	/**
	 * Whether a failure is Redis refusing a command for a key of the wrong type.
	 * @param ex the failure
	 * @return {@code true} for a WRONGTYPE error
	 */
	public static boolean isWrongType(Throwable ex) {
		return ScriptRunner.causeMessageContains(ex, "WRONGTYPE");
	}

	/**
	 * Moves dead-lettered messages back to the schedule, due at once, with their attempts
	 * reset to 0 and their last error dropped: looks at up to {@code limit} dead messages
	 * from a rank of the dead-letter set on, oldest first. Reads their ids first and then
	 * replays those ids, so that a call sent twice never replays more than the ones it
	 * read. Messages whose id was sent anew since they died, or whose stored header is
	 * unreadable, stay dead at their rank.
	 * @param topic the topic
	 * @param limit the largest number of dead messages to look at, 1 to 1000
	 * @param fromRank the rank in the dead-letter set to start at, 0 for the oldest
	 * @return the replayed ids and how many were left dead
	 */
	@Override
	public ReplayResult replayDead(String topic, int limit, long fromRank) {
		List<String> ids = deadIds(topic, limit, fromRank);
		return ids.isEmpty() ? new ReplayResult(List.of(), 0) : replayDead(topic, ids);
	}

	/**
	 * Moves the given dead-lettered messages back to the schedule, due at once, with
	 * their attempts reset to 0 and their last error dropped.
	 * @param topic the topic
	 * @param ids the ids, 1 to 1000
	 * @return the replayed ids and how many were left dead or not found
	 */
	@Override
	public ReplayResult replayDead(String topic, List<String> ids) {
		ScriptCodecs.requireIds(ids);
		long deadline = deadline();
		List<String> replayed = new ArrayList<>();
		int skipped = 0;
		for (Map.Entry<String, List<String>> partition : byPartition(topic, ids, deadline).entrySet()) {
			ReplayResult result = settlingRefusal(topic, deadline,
					() -> replayDeadIn(partition.getKey(), partition.getValue(), deadline));
			replayed.addAll(result.replayed());
			skipped += result.skipped();
		}
		return new ReplayResult(replayed, skipped);
	}

	private Map<String, List<String>> byPartition(String topic, List<String> ids, long deadline) {
		Map<String, List<String>> byPartition = new LinkedHashMap<>();
		ids.forEach((id) -> byPartition.computeIfAbsent(partitionOf(topic, id, deadline), (name) -> new ArrayList<>())
			.add(id));
		return byPartition;
	}

	private ReplayResult replayDeadIn(String partition, List<String> ids, long deadline) {
		return run(partition, new ScriptCodecs.Replay(signalChannel(partition), partition, countOf(partition), ids),
				remaining(deadline));
	}

	/**
	 * Deletes the oldest dead-lettered messages of a topic for good. Reads their ids
	 * first and then deletes those ids, so that a call sent twice never deletes more than
	 * the ones it read.
	 * @param topic the topic
	 * @param limit the largest number of messages to delete, 1 to 1000
	 * @return how many were deleted
	 */
	@Override
	public long purgeDead(String topic, int limit) {
		List<String> ids = deadIds(topic, limit, 0);
		return ids.isEmpty() ? 0 : purgeDead(topic, ids);
	}

	/**
	 * Deletes the given dead-lettered messages for good; ids that are not dead are left
	 * alone.
	 * @param topic the topic
	 * @param ids the ids, 1 to 1000
	 * @return how many were deleted
	 */
	@Override
	public long purgeDead(String topic, List<String> ids) {
		ScriptCodecs.requireIds(ids);
		long deadline = deadline();
		long deleted = 0;
		for (Map.Entry<String, List<String>> partition : byPartition(topic, ids, deadline).entrySet()) {
			ScriptCodecs.PurgeDead purge = new ScriptCodecs.PurgeDead(countOf(partition.getKey()),
					partition.getValue());
			deleted += settlingRefusal(topic, deadline, () -> run(partition.getKey(), purge, remaining(deadline)));
		}
		return deleted;
	}

	private List<String> deadIds(String topic, int limit, long fromRank) {
		if (limit < 1 || limit > MAX_IDS_PER_CALL) {
			throw new IllegalArgumentException("Limit must be 1 to " + MAX_IDS_PER_CALL + ", but was " + limit);
		}
		return page(topic, MessageState.DEAD, fromRank, limit).messages().stream().map(MessageSummary::id).toList();
	}

	/**
	 * Counts a topic's messages in each state and reads its next and oldest waiting due
	 * times, at one instant, over every partition; changes nothing.
	 * @param topic the topic
	 * @return the counts and times
	 * @throws PartitionCountException if Redis spreads the topic over another number of
	 * partitions than this application (its counts would miss partitions)
	 */
	@Override
	public TopicStats stats(String topic) {
		this.partitionCounts.agree(TopicPartitions.topicOf(topic), false, deadline());
		return partitions().names(topic).stream().map(this::partitionStats).reduce(TopicStats::plus).orElseThrow();
	}

	/** The stats of one partition, or of a topic without partitions. */
	TopicStats partitionStats(String topic) {
		return run(topic, new ScriptCodecs.Stats(READY_HEAD_LOOKUP));
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
	public MessagePage page(String topic, MessageState state, long offset, int limit) {
		if (limit < 1 || offset < 0) {
			throw new IllegalArgumentException("A page needs a limit of 1 or more and an offset of 0 or more, but was "
					+ "limit " + limit + ", offset " + offset);
		}
		this.partitionCounts.agree(TopicPartitions.topicOf(topic), false, deadline());
		List<String> names = partitions().names(topic);
		if (names.size() == 1) {
			return partitionPage(topic, state, offset, limit);
		}
		if (offset + limit > MAX_MERGED_PAGE_END) {
			throw new IllegalArgumentException(
					"A page of a topic with " + names.size() + " partitions ends at most " + MAX_MERGED_PAGE_END
							+ " messages in (offset + limit), but was offset " + offset + ", limit " + limit);
		}
		// Each partition's first offset + limit messages, merged in order: the page of
		// the
		// topic is then in order across its partitions too.
		long total = 0;
		List<MessageSummary> merged = new ArrayList<>();
		for (String name : names) {
			MessagePage page = partitionPage(name, state, 0, (int) (offset + limit));
			total += page.total();
			merged.addAll(page.messages());
		}
		merged.sort(Comparator.comparingLong(
				(MessageSummary message) -> (state == MessageState.READY) ? message.dueAtMillis() : message.score()));
		int from = (int) Math.min(offset, merged.size());
		return new MessagePage(total, List.copyOf(merged.subList(from, Math.min(merged.size(), from + limit))));
	}

	private MessagePage partitionPage(String topic, MessageState state, long offset, int limit) {
		TopicKeys keys = keys(topic);
		String index = switch (state) {
			case SCHEDULED -> keys.scheduled();
			case READY -> keys.ready();
			case IN_FLIGHT -> keys.inFlight();
			case DEAD -> keys.dead();
		};
		String messages = (state == MessageState.DEAD) ? keys.deadMessages() : keys.messages();
		return run(new ScriptCodecs.Page(state, offset, limit), (role) -> switch (role) {
			case STATE_INDEX -> index;
			case STATE_MESSAGES -> messages;
			default -> keys.key(role);
		}, this.timeout);
	}

	/**
	 * Finds one message in whatever state it is; changes nothing.
	 * @param topic the topic
	 * @param id the message id
	 * @param maxBytes the most bytes of the stored message to read
	 * @return the message, or {@code null} if the topic has no message with that id
	 */
	@Override
	public @Nullable MessageSnapshot inspect(String topic, String id, int maxBytes) {
		long deadline = deadline();
		String partition = partitionOf(topic, id, deadline);
		return settlingRefusal(topic, deadline,
				() -> run(partition, new ScriptCodecs.Inspect(id, maxBytes, countOf(partition)), remaining(deadline)));
	}

	/**
	 * Finds the topics that have messages under this store's prefix, with {@code SCAN}:
	 * for operations, never for a hot path.
	 * @param max the most topics to return
	 * @return topic names in alphabetical order, at most {@code max}
	 */
	@Override
	public List<String> findTopics(int max) {
		String pattern = globEscape(this.prefix) + ":{*}:[mzd]";
		Set<String> topics = new TreeSet<>();
		int start = this.prefix.length() + 2;
		try (Cursor<String> keys = this.redis.scan(ScanOptions.scanOptions().match(pattern).count(1000).build())) {
			while (keys.hasNext() && topics.size() < max) {
				String key = keys.next();
				if (key.length() > start + 3 && key.startsWith(this.prefix + ":{")
						&& key.startsWith("}:", key.length() - 3)) {
					topics.add(TopicPartitions.topicOf(key.substring(start, key.length() - 3)));
				}
			}
		}
		return new ArrayList<>(topics);
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

	/**
	 * Checks that Redis answers.
	 * @throws DataAccessException if it does not
	 */
	@Override
	public void ping() {
		this.redis.execute((RedisCallback<String>) (connection) -> connection.ping());
	}

	/** Sends one call to a partition without waiting for its reply. */
	private <R> CompletableFuture<R> submit(String partition, ScriptCodec<R> codec) {
		return this.runner.submit(call(partition, codec), this.timeout).thenApply(codec::read);
	}

	/** Waits for a call sent with {@link #submit}; its own timeout bounds the wait. */
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

	/**
	 * Runs one call on a partition, waiting for its reply at most this store's timeout.
	 * @param partition the partition (for partition 0, the topic)
	 * @param codec the call
	 * @return its reply
	 */
	<R> R run(String partition, ScriptCodec<R> codec) {
		return run(partition, codec, this.timeout);
	}

	/**
	 * Runs one call on a partition, waiting for its reply at most a given time.
	 * @param partition the partition (for partition 0, the topic)
	 * @param codec the call
	 * @param timeout the longest wait
	 * @return its reply
	 */
	<R> R run(String partition, ScriptCodec<R> codec, Duration timeout) {
		return run(codec, keys(partition)::key, timeout);
	}

	private <R> R run(ScriptCodec<R> codec, Function<Script.Key, String> keys, Duration timeout) {
		return codec.read(this.runner.run(call(codec, keys), timeout));
	}

	/**
	 * A call on a partition, on this store's clock.
	 * @param partition the partition (for partition 0, the topic)
	 * @param codec the call
	 * @return the call, to run
	 */
	ScriptCall call(String partition, ScriptCodec<?> codec) {
		return call(codec, keys(partition)::key);
	}

	private ScriptCall call(ScriptCodec<?> codec, Function<Script.Key, String> keys) {
		return this.clock.call(codec.script(), keys, codec.arguments(), this.shardedSignals);
	}

	/**
	 * Runs calls, all sent before the first reply is awaited.
	 * @param calls the calls
	 * @param timeout the longest wait for all replies
	 * @return their replies, in order, to be read by their codecs
	 */
	List<Object> runAll(List<ScriptCall> calls, Duration timeout) {
		return this.runner.runAll(calls, timeout);
	}

	private static Duration remaining(long deadline) {
		return PartitionCounts.remaining(deadline);
	}

}

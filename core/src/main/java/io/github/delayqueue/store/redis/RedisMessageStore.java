package io.github.delayqueue.store.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;

import io.github.delayqueue.store.DeadLetterRetention;
import io.github.delayqueue.store.LeaseTokens;
import io.github.delayqueue.store.FoundTopics;
import io.github.delayqueue.store.MessagePage;
import io.github.delayqueue.store.MessageSnapshot;
import io.github.delayqueue.store.MessageState;
import io.github.delayqueue.store.MessageStore;
import io.github.delayqueue.store.NewMessage;
import io.github.delayqueue.store.NotReplicatedException;
import io.github.delayqueue.store.PartitionCountException;
import io.github.delayqueue.store.ScheduleStore;
import io.github.delayqueue.store.ReplayResult;
import io.github.delayqueue.store.Sent;
import io.github.delayqueue.store.TopicInspector;
import io.github.delayqueue.store.TopicPartitions;
import io.github.delayqueue.store.TopicStats;
import io.github.delayqueue.store.TopicStore;
import io.github.delayqueue.store.WakeUpListener;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import org.jspecify.annotations.Nullable;

import org.springframework.dao.DataAccessException;
import org.springframework.data.redis.connection.RedisClusterConnection;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.RedisTemplate;
import org.springframework.data.redis.serializer.RedisSerializer;

/**
 * The Redis {@link MessageStore}: every state change of a message is one Lua script, so
 * that no message is lost or duplicated between two steps. A facade over the parts that
 * do the work: {@link RedisSends} (sends), {@link RedisTopicStore} (a partition's
 * transitions), {@link RedisOperations} (cancel, reschedule, replay, purge),
 * {@link RedisQueries} (reads), {@link PartitionRouter} and {@link PartitionCounts}
 * (partitions), all running their scripts through {@link ScriptCalls}. Its configuration
 * (partitions, confirmed replication, sharded signals) is set once, before the first
 * call. A message's transitions go through {@link #topic(String)}, as the runtime's do;
 * the store has no other way to perform them. Thread-safe.
 */
public class RedisMessageStore implements MessageStore, AutoCloseable {

	/** Default of the longest wait for Redis. */
	public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(5);

	private final RedisConnectionFactory connectionFactory;

	private final RedisTemplate<String, byte[]> redis;

	private final ScheduleStore schedules;

	private final ScriptCalls calls;

	private final PartitionRouter router;

	private final RedisSends sends;

	private final PartitionReads partitionReads;

	private final RedisQueries queries;

	private final RedisGroupPauses groupPauses;

	private final RedisOperations operations;

	private final WrongTypeKeys wrongTypeKeys;

	private final DeadSets deadSets = new DeadSets(System::nanoTime);

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
		this.connectionFactory = connectionFactory;
		this.calls = new ScriptCalls(connectionFactory, prefix, timeout, clock);
		this.router = new PartitionRouter(this.calls);
		UnansweredSends unanswered = new UnansweredSends();
		this.sends = new RedisSends(this.calls, this.router, unanswered);
		this.partitionReads = new PartitionReads(this.calls, this.router, connectionFactory);
		this.queries = new RedisQueries(this.calls, this.router, unanswered, template, this.partitionReads);
		this.operations = new RedisOperations(this.calls, this.router, unanswered, this.queries);
		this.groupPauses = new RedisGroupPauses(this.calls, this.router);
		this.wrongTypeKeys = new WrongTypeKeys(template, this.calls);
		this.schedules = new RedisScheduleStore(this.calls, this.router, this.wrongTypeKeys,
				() -> this.queries.findTopics(RedisScheduleStore.MAX_FOUND_TOPICS, RedisQueries.SCHEDULES));
	}

	/**
	 * Spreads topics over partitions: every call that names a topic and a message id goes
	 * to the message's partition, and every call that names only a topic covers all of
	 * its partitions, except the transitions of {@link #topic(String)}, which belong to
	 * one partition each. Call once, before the first send.
	 * @param partitions the partitions of the topics
	 */
	public void usePartitions(TopicPartitions partitions) {
		this.router.use(partitions);
	}

	/**
	 * @return how topics are spread over partitions
	 */
	@Override
	public TopicPartitions partitions() {
		return this.router.partitions();
	}

	/**
	 * Makes sure that Redis spreads a topic over the number of partitions configured
	 * here, as a listener starting does: the first call for a topic reads the count kept
	 * in Redis and, if it differs, changes it if every message stays within reach of the
	 * calls that find it by id; later calls return at once. Every call of this store that
	 * stores or finds messages by id agrees first (only a send may change the count), and
	 * names the count, which each partition checks. For a dead-letter queue
	 * ({@code <topic>#dead}) it agrees the topic's count and never changes it.
	 * @param topic the topic
	 * @throws PartitionCountException if the counts differ and the count cannot change
	 * now, or the topic is a dead-letter queue
	 * @throws DataAccessException if Redis failed or did not answer in time
	 */
	@Override
	public void agreePartitions(String topic) {
		// A dead-letter queue's listener never changes the topic's count.
		this.router.agree(topic, !TopicPartitions.isDeadLetters(topic), this.calls.deadline());
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
		this.router.settle(topic, this.calls.deadline());
	}

	/**
	 * Reads the marker of the queue's data under this store's prefix
	 * ({@link TopicKeys#datasetMarker(String)}), writing a new one when there is none.
	 * @return the marker
	 * @throws DataAccessException if Redis failed or did not answer in time
	 */
	@Override
	public String datasetMarker() {
		String key = TopicKeys.datasetMarker(this.calls.prefix());
		return this.calls.run(new ScriptCodecs.DatasetMarker(LeaseTokens.newToken()), (role) -> key,
				this.calls.timeout());
	}

	/**
	 * @return where recurring schedules are kept, beside their tick messages
	 */
	@Override
	public ScheduleStore schedules() {
		return this.schedules;
	}

	/**
	 * Starts copying a topic's dead letters into its dead-letter queue: sets the watch
	 * key ({@link TopicKeys#deadLettersWatch()}) of every partition, which the scripts
	 * that dead-letter a message read, in one round trip. From now on those scripts, run
	 * by this store, also set a watch Redis lost again before they bury.
	 * @param topic the topic whose dead letters are listened to
	 * @return the partitions whose watch was absent
	 * @throws DataAccessException if Redis failed or did not answer in time
	 */
	@Override
	public int watchDeadLetters(String topic) {
		this.deadSets.listen(topic);
		List<ScriptRunner.ScriptCall> calls = partitions().names(topic)
			.stream()
			.map((partition) -> this.calls.call(partition, new ScriptCodecs.WatchDeadLetters()))
			.toList();
		return (int) this.calls.runAll(calls, this.calls.timeout())
			.stream()
			.filter((reply) -> new ScriptCodecs.WatchDeadLetters().read(reply))
			.count();
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
		this.sends.confirmReplication(this.connectionFactory, replicas, timeout);
	}

	/**
	 * Sets the most ids of handled messages sent with a deduplication window that each
	 * partition of a topic remembers; past it, the ids whose windows end first are
	 * forgotten. Call before the first send.
	 * @param maxRemembered the most ids, at least 1
	 */
	public void rememberAtMost(int maxRemembered) {
		if (maxRemembered < 1) {
			throw new IllegalArgumentException("At least 1 id must be remembered, but was " + maxRemembered);
		}
		this.calls.rememberAtMost(maxRemembered);
	}

	/**
	 * Sets how many dead letters each topic keeps, and how long: the scripts that bury a
	 * dead letter delete the oldest beyond either bound, at most 100 a call. Without it,
	 * every dead letter is kept until it is replayed or purged.
	 * @param retention the retention of each topic (of a dead-letter queue too, by its
	 * name {@code <topic>#dead})
	 */
	public void useDeadLetterRetention(Function<String, DeadLetterRetention> retention) {
		this.deadSets.useRetention(retention);
	}

	/**
	 * Closes the connections of confirmed replication, if any.
	 */
	@Override
	public void close() {
		this.sends.close();
	}

	/**
	 * @return the longest wait for Redis of a script call
	 */
	@Override
	public Duration timeout() {
		return this.calls.timeout();
	}

	/**
	 * @return the clock the scripts read
	 */
	public ScriptClock clock() {
		return this.calls.clock();
	}

	/**
	 * @return the key prefix
	 */
	@Override
	public String prefix() {
		return this.calls.prefix();
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
		this.calls.useShardedSignals();
	}

	/**
	 * @return whether scripts send signals with {@code SPUBLISH} on each topic's channel
	 */
	public boolean shardedSignals() {
		return this.calls.shardedSignals();
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
			byte[] channel = TopicKeys.shardedSignalChannel(prefix(), "probe").getBytes(StandardCharsets.UTF_8);
			ScriptRunner.await(async.spublish(channel, new byte[0]), this.calls.deadline(), timeout());
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
		return this.calls.signalChannel(topic);
	}

	/**
	 * @return the pub/sub channel on which scripts publish wake-up signals, unless they
	 * are sharded
	 */
	public String signalChannel() {
		return this.calls.signalChannel();
	}

	@Override
	public AutoCloseable subscribe(Collection<String> partitions, WakeUpListener listener) {
		return shardedSignals()
				? ShardedSignalSubscription.subscribe(this.connectionFactory,
						partitions.stream().map(this::signalChannel).toList(), listener, timeout())
				: RedisSignals.subscribe(this.connectionFactory, signalChannel(), listener, timeout());
	}

	/**
	 * One topic's transitions, for the runtime.
	 * @param topic the topic
	 * @return the topic's store
	 */
	@Override
	public TopicStore topic(String topic) {
		return partition(topic);
	}

	/**
	 * One topic's read-only view, for operations.
	 * @param topic the topic
	 * @return the topic's inspector
	 */
	@Override
	public TopicInspector inspector(String topic) {
		return new RedisTopicInspector(this.queries, topic);
	}

	/**
	 * The keys of a topic.
	 * @param topic the topic
	 * @return its keys
	 */
	public TopicKeys keys(String topic) {
		return this.calls.keys(topic);
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
	 * Stores and schedules messages of several topics: at most 250 messages (and about
	 * 512 KiB) per script call, all calls sent before the first reply is awaited, so the
	 * whole batch costs one round trip. A call that fails because Redis lost the script
	 * is sent again alone; the others are not repeated.
	 * @param messagesByTopic the messages of each topic, in send order
	 * @return the results of each topic, in the same order as its messages
	 * @throws DataAccessException if Redis failed or did not answer in time; any subset
	 * of the messages may have been stored, and a retry with the same ids stores the rest
	 * @throws NotReplicatedException if replication is confirmed and too few replicas
	 * confirmed the writes in time
	 */
	@Override
	public Map<String, List<Sent>> send(Map<String, List<NewMessage>> messagesByTopic) {
		return this.sends.send(messagesByTopic);
	}

	/**
	 * Stores and schedules messages as {@link #send(Map)} does, pipelined: the script
	 * calls go out at once and the future completes, on the Redis client's I/O thread,
	 * when Redis answered them all. The first send to a topic (which reads its partition
	 * count), a send with confirmed replication, and the calls a partition refused go on
	 * on one of a few threads of the store, as they wait for Redis.
	 * @param messagesByTopic the messages of each topic, in send order
	 * @return the results of each topic, in the same order as its messages
	 */
	@Override
	public CompletableFuture<Map<String, List<Sent>>> sendAsync(Map<String, List<NewMessage>> messagesByTopic) {
		return this.sends.sendAsync(messagesByTopic);
	}

	private RedisTopicStore partition(String partition) {
		return new RedisTopicStore(this.calls, this.router, this.wrongTypeKeys, this.deadSets, partition,
				this.partitionReads);
	}

	@Override
	public boolean cancel(String topic, String id) {
		return this.operations.cancel(topic, id);
	}

	@Override
	public long reschedule(String topic, String id, Duration delay) {
		return this.operations.reschedule(topic, id, delay);
	}

	@Override
	public @Nullable Instant pauseGroup(String topic, String group, @Nullable Duration length) {
		return this.groupPauses.pause(topic, group, length);
	}

	@Override
	public boolean resumeGroup(String topic, String group) {
		return this.groupPauses.resume(topic, group);
	}

	@Override
	public ReplayResult replayDead(String topic, int limit, long fromRank) {
		return this.operations.replayDead(topic, limit, fromRank);
	}

	@Override
	public ReplayResult replayDead(String topic, List<String> ids) {
		return this.operations.replayDead(topic, ids);
	}

	@Override
	public long purgeDead(String topic, int limit) {
		return this.operations.purgeDead(topic, limit);
	}

	@Override
	public long purgeDead(String topic, List<String> ids) {
		return this.operations.purgeDead(topic, ids);
	}

	@Override
	public TopicStats stats(String topic) {
		return this.queries.stats(topic);
	}

	/**
	 * Reads one page of a topic's messages in one state, oldest first, without their
	 * payloads; changes nothing. A partitioned topic's pages are merged in order across
	 * its partitions, and end at most 10,000 messages in.
	 * @param topic the topic
	 * @param state the state
	 * @param offset the rank of the first message, 0-based
	 * @param limit the largest number of messages
	 * @return the page
	 * @throws IllegalArgumentException for a limit under 1, a negative offset, or a page
	 * of a partitioned topic that ends too far in
	 */
	public MessagePage page(String topic, MessageState state, long offset, int limit) {
		return this.queries.page(topic, state, offset, limit);
	}

	@Override
	public @Nullable MessageSnapshot inspect(String topic, String id, int maxBytes) {
		return this.queries.inspect(topic, id, maxBytes);
	}

	@Override
	public List<String> findTopics(int max) {
		return this.queries.findTopics(max);
	}

	@Override
	public FoundTopics searchTopics(int max, Duration within) {
		return this.queries.searchTopics(max, within);
	}

	/**
	 * Checks that Redis answers.
	 * @throws DataAccessException if it does not
	 */
	@Override
	public void ping() {
		this.redis.execute((RedisCallback<String>) (connection) -> connection.ping());
	}

}

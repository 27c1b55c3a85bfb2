package io.github.delayqueue.store.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import io.github.delayqueue.store.NewMessage;
import io.github.delayqueue.store.NotReplicatedException;
import io.github.delayqueue.store.PartitionCountException;
import io.github.delayqueue.store.Sent;
import io.github.delayqueue.store.TopicPartitions;
import io.github.delayqueue.store.redis.ScriptRunner.ScriptCall;
import org.jspecify.annotations.Nullable;

import org.springframework.dao.DataAccessException;
import org.springframework.dao.DataAccessResourceFailureException;
import org.springframework.dao.QueryTimeoutException;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.scheduling.concurrent.CustomizableThreadFactory;

/**
 * Sends messages: each partition's share in chunks of one script call, all calls of a
 * batch sent before the first reply is awaited, with confirmed replication if it is on.
 */
final class RedisSends implements AutoCloseable {

	/** Most messages in one send script call: about a millisecond of Redis time. */
	static final int MAX_SEND_CHUNK = 250;

	/** Most body bytes in one send script call. */
	static final int MAX_SEND_CHUNK_BYTES = 512 * 1024;

	private final ScriptCalls calls;

	private final PartitionRouter router;

	private volatile @Nullable ReplicatedWrites replicatedWrites;

	/**
	 * Most threads on which asynchronous sends with confirmed replication wait for Redis,
	 * and counts are settled before sends a partition refused are sent again.
	 */
	static final int WAITING_THREADS = 4;

	/**
	 * Where asynchronous sends with confirmed replication are sent and confirmed, and
	 * counts are settled before sends that a partition refused are sent again: at most
	 * {@value #WAITING_THREADS} threads, gone after 10 s idle, and a queue.
	 */
	private final ThreadPoolExecutor waiting = threads(WAITING_THREADS);

	/**
	 * Fails, at its deadline, an asynchronous send with confirmed replication that no
	 * thread of {@link #waiting} took by then: one thread, started by the first such
	 * send.
	 */
	private final ScheduledThreadPoolExecutor expiry = expiry();

	/**
	 * The lane: one thread, on which the sends that must wait for Redis before they are
	 * written (see {@link #sendAsync}) are written in order.
	 */
	private final ThreadPoolExecutor lane = threads(1);

	/**
	 * The writer: one thread, from which a partition's calls are written after a reply
	 * while the I/O thread of its connection is not known (see {@link SendCoalescer}).
	 */
	private final ThreadPoolExecutor writer = threads(1);

	/** How many sends to each topic are on the lane; guards the choice of the lane. */
	private final Map<String, Integer> inLane = new HashMap<>();

	private final SendCoalescer coalescer;

	private final UnansweredSends unanswered;

	RedisSends(ScriptCalls calls, PartitionRouter router, UnansweredSends unanswered) {
		this.calls = calls;
		this.router = router;
		this.unanswered = unanswered;
		this.coalescer = new SendCoalescer(calls, router, this.writer, this.waiting);
	}

	/**
	 * Makes every send return only once Redis confirms its writes on replicas.
	 * @see RedisMessageStore#confirmReplication(int, Duration)
	 */
	void confirmReplication(RedisConnectionFactory connectionFactory, int replicas, Duration timeout) {
		this.replicatedWrites = new ReplicatedWrites(connectionFactory, replicas, timeout);
	}

	private static ThreadPoolExecutor threads(int count) {
		CustomizableThreadFactory threads = new CustomizableThreadFactory("delay-queue-send-");
		threads.setDaemon(true);
		ThreadPoolExecutor executor = new ThreadPoolExecutor(count, count, 10, TimeUnit.SECONDS,
				new LinkedBlockingQueue<>(), threads);
		executor.allowCoreThreadTimeOut(true);
		return executor;
	}

	private static ScheduledThreadPoolExecutor expiry() {
		CustomizableThreadFactory threads = new CustomizableThreadFactory("delay-queue-send-expiry-");
		threads.setDaemon(true);
		ScheduledThreadPoolExecutor executor = new ScheduledThreadPoolExecutor(1, threads);
		executor.setRemoveOnCancelPolicy(true);
		executor.setKeepAliveTime(10, TimeUnit.SECONDS);
		executor.allowCoreThreadTimeOut(true);
		return executor;
	}

	@Override
	public void close() {
		this.lane.shutdown();
		this.writer.shutdown();
		this.waiting.shutdown();
		this.expiry.shutdown();
		ReplicatedWrites replicated = this.replicatedWrites;
		if (replicated != null) {
			replicated.close();
		}
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
	Map<String, List<Sent>> send(Map<String, List<NewMessage>> messagesByTopic) {
		if (this.replicatedWrites != null) {
			return sendReplicated(messagesByTopic, this.calls.deadline());
		}
		return ScriptCalls.await(sendAsync(messagesByTopic));
	}

	/**
	 * Stores and schedules messages as {@link #send(Map)} does, without waiting: the
	 * script calls are written at once (see {@link SendCoalescer}), and the future
	 * completes on the Redis client's I/O thread once Redis answered them all. Calls are
	 * written in the order of the sends. A send to a topic whose partition count is not
	 * agreed yet (the first send to it, which reads the count) and the sends behind it to
	 * the same topic go through the lane, one thread on which they are written one after
	 * the other, in order; never on the caller's thread, which may be the Redis client's
	 * I/O thread. With confirmed replication, each send is written and confirmed on one
	 * of {@value #WAITING_THREADS} threads of the store, in no set order; one that no
	 * thread took by its deadline (all held by sends waiting for Redis or for replicas)
	 * fails then, not sent. Until the future completes, a call by id of these messages
	 * waits for it (see {@link UnansweredSends}).
	 * @param messagesByTopic the messages of each topic, in send order
	 * @return the results of each topic, in the same order as its messages; or a failure
	 * with the exceptions {@link #send(Map)} throws
	 */
	CompletableFuture<Map<String, List<Sent>>> sendAsync(Map<String, List<NewMessage>> messagesByTopic) {
		CompletableFuture<Map<String, List<Sent>>> sent = write(messagesByTopic);
		this.unanswered.track(messagesByTopic, sent);
		return sent;
	}

	/** Writes the calls of a send (see {@link #sendAsync(Map)}). */
	private CompletableFuture<Map<String, List<Sent>>> write(Map<String, List<NewMessage>> messagesByTopic) {
		long deadline = this.calls.deadline();
		if (this.replicatedWrites != null) {
			return replicated(messagesByTopic, deadline);
		}
		Set<String> topics = messagesByTopic.keySet();
		boolean direct;
		synchronized (this.inLane) {
			direct = topics.stream()
				.allMatch((topic) -> this.router.isAgreed(topic) && !this.inLane.containsKey(topic));
			if (!direct) {
				topics.forEach((topic) -> this.inLane.merge(topic, 1, Integer::sum));
			}
		}
		if (direct) {
			return submitAll(messagesByTopic, deadline);
		}
		try {
			return CompletableFuture.supplyAsync(() -> inLane(messagesByTopic, deadline), this.lane)
				.thenCompose((sent) -> sent);
		}
		catch (RejectedExecutionException ex) {
			leaveLane(topics);
			return CompletableFuture
				.failedFuture(new DataAccessResourceFailureException("The message store is closed", ex));
		}
	}

	/**
	 * A send on the lane: the topics' counts agreed, then the calls written.
	 */
	private CompletableFuture<Map<String, List<Sent>>> inLane(Map<String, List<NewMessage>> messagesByTopic,
			long deadline) {
		try {
			messagesByTopic.keySet().forEach((topic) -> this.router.agree(topic, true, deadline));
			return submitAll(messagesByTopic, deadline);
		}
		catch (RuntimeException ex) {
			return CompletableFuture.failedFuture(ex);
		}
		finally {
			leaveLane(messagesByTopic.keySet());
		}
	}

	private void leaveLane(Set<String> topics) {
		synchronized (this.inLane) {
			topics.forEach(
					(topic) -> this.inLane.computeIfPresent(topic, (name, sends) -> (sends > 1) ? sends - 1 : null));
		}
	}

	/**
	 * Sends with confirmed replication: all calls written before the first reply is
	 * awaited, then the replicas' confirmation.
	 */
	private Map<String, List<Sent>> sendReplicated(Map<String, List<NewMessage>> messagesByTopic, long deadline) {
		messagesByTopic.keySet().forEach((topic) -> this.router.agree(topic, true, deadline));
		TopicPartitions partitions = this.router.partitions();
		SendCalls sends = new SendCalls(byPartition(messagesByTopic, partitions));
		List<Object> replies = sendRefusedAgain(sends, runSends(sends.calls(), deadline), deadline);
		return byTopic(messagesByTopic, partitions, sends.results(replies));
	}

	/**
	 * Writes every script call of a send to topics whose partition counts are agreed.
	 */
	private CompletableFuture<Map<String, List<Sent>>> submitAll(Map<String, List<NewMessage>> messagesByTopic,
			long deadline) {
		TopicPartitions partitions;
		SendCalls sends;
		try {
			partitions = this.router.partitions();
			sends = new SendCalls(byPartition(messagesByTopic, partitions));
		}
		catch (RuntimeException ex) {
			return CompletableFuture.failedFuture(ex);
		}
		List<CompletableFuture<Object>> submitted = new ArrayList<>(sends.size());
		int from = 0;
		while (from < sends.size()) {
			// The chunks of one partition, together.
			String partition = sends.partitions.get(from);
			List<List<NewMessage>> chunks = new ArrayList<>();
			while (from < sends.size() && sends.partitions.get(from).equals(partition)) {
				chunks.add(sends.sends.get(from++).messages());
			}
			submitted.addAll(this.coalescer.submit(partition, chunks, deadline));
		}
		return CompletableFuture.allOf(submitted.toArray(CompletableFuture[]::new))
			.handle((all, failure) -> byTopic(messagesByTopic, partitions, sends.results(replies(submitted))));
	}

	/**
	 * Sends with confirmed replication on a thread of the store's few for that; the send
	 * queues while they are busy. Its deadline counts from when it was made, not from
	 * when a thread takes it: a send still queued at its deadline fails then, unsent, by
	 * its timer or, if that is late, by the thread that takes it (its calls could not be
	 * answered in time), rather than when a thread is free, which, with every thread
	 * holding a send that waits for replicas, may be the replication timeout later, after
	 * the sends queued before it that are late too.
	 */
	private CompletableFuture<Map<String, List<Sent>>> replicated(Map<String, List<NewMessage>> messagesByTopic,
			long deadline) {
		CompletableFuture<Map<String, List<Sent>>> sent = new CompletableFuture<>();
		AtomicBoolean taken = new AtomicBoolean();
		try {
			this.waiting.execute(() -> {
				if (!taken.compareAndSet(false, true)) {
					return;
				}
				if (System.nanoTime() - deadline >= 0) {
					// Its timer is late (its thread busy): it fails as if on time.
					sent.completeExceptionally(unsent());
					return;
				}
				try {
					sent.complete(sendReplicated(messagesByTopic, deadline));
				}
				catch (Throwable ex) {
					sent.completeExceptionally(ex);
				}
			});
		}
		catch (RejectedExecutionException ex) {
			return CompletableFuture
				.failedFuture(new DataAccessResourceFailureException("The message store is closed", ex));
		}
		try {
			ScheduledFuture<?> timer = this.expiry.schedule(() -> {
				if (taken.compareAndSet(false, true)) {
					sent.completeExceptionally(unsent());
				}
			}, Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
			sent.whenComplete((result, failure) -> timer.cancel(false));
		}
		catch (RejectedExecutionException ex) {
			// The store closed between the two: a send no thread took yet fails now,
			// unsent, as one made after the close does.
			if (taken.compareAndSet(false, true)) {
				sent.completeExceptionally(new DataAccessResourceFailureException("The message store is closed", ex));
			}
		}
		return sent;
	}

	/** The failure of a send that no thread took by its deadline. */
	private static QueryTimeoutException unsent() {
		return new QueryTimeoutException("Redis did not answer in time: the send waited for a thread of the store, all "
				+ "held by sends waiting for Redis or for replicas, and was not sent");
	}

	/**
	 * The replies of calls that all completed.
	 * @throws RuntimeException the first failure
	 */
	private static List<Object> replies(List<CompletableFuture<Object>> submitted) {
		List<Object> replies = new ArrayList<>(submitted.size());
		for (CompletableFuture<Object> call : submitted) {
			replies.add(ScriptCalls.await(call));
		}
		return replies;
	}

	/** The messages of each partition (or topic), in send order. */
	private static Map<String, List<NewMessage>> byPartition(Map<String, List<NewMessage>> messagesByTopic,
			TopicPartitions partitions) {
		if (!partitions.any()) {
			return messagesByTopic;
		}
		Map<String, List<NewMessage>> byPartition = new LinkedHashMap<>();
		messagesByTopic.forEach((topic,
				messages) -> messages.forEach((message) -> byPartition
					.computeIfAbsent(partitions.nameFor(topic, message), (name) -> new ArrayList<>())
					.add(message)));
		return byPartition;
	}

	/** The results of each topic, in the order of its messages. */
	private static Map<String, List<Sent>> byTopic(Map<String, List<NewMessage>> messagesByTopic,
			TopicPartitions partitions, Map<String, List<Sent>> byPartition) {
		if (!partitions.any()) {
			return byPartition;
		}
		Map<String, Iterator<Sent>> sent = new LinkedHashMap<>();
		byPartition.forEach((name, results) -> sent.put(name, results.iterator()));
		Map<String, List<Sent>> results = new LinkedHashMap<>();
		messagesByTopic.forEach((topic, messages) -> results.put(topic,
				messages.stream().map((message) -> sent.get(partitions.nameFor(topic, message)).next()).toList()));
		return results;
	}

	/**
	 * Sends once more, alone, the calls a partition refused (they stored nothing), after
	 * the count is settled; the others are not repeated.
	 * @param replies the replies of the calls, a refusal in place of a refused call's
	 * @return the replies, each refusal replaced by the reply of its call sent again
	 * @throws PartitionCountException if a partition refused a call again
	 */
	private List<Object> sendRefusedAgain(SendCalls sends, List<Object> replies, long deadline) {
		List<Integer> refused = refused(replies);
		if (refused.isEmpty()) {
			return replies;
		}
		List<Object> answered = new ArrayList<>(replies);
		refused.stream()
			.map((i) -> TopicPartitions.topicOf(sends.partitions.get(i)))
			.distinct()
			.forEach((topic) -> this.router.settle(topic, deadline));
		List<Object> again = runSends(refused.stream().map(sends::call).toList(), deadline);
		for (int r = 0; r < refused.size(); r++) {
			if (again.get(r) instanceof RuntimeException) {
				String topic = TopicPartitions.topicOf(sends.partitions.get(refused.get(r)));
				throw PartitionCountException.refusedAgain(topic, this.router.partitions().count(topic));
			}
			answered.set(refused.get(r), again.get(r));
		}
		return answered;
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
				: this.calls.runAll(calls, timeout, PartitionCounts::isRefusal);
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

	/**
	 * The script calls of a send: each partition's (or topic's) messages in chunks of one
	 * call, in order.
	 */
	private final class SendCalls {

		private final List<String> partitions = new ArrayList<>();

		private final List<ScriptCodecs.Send> sends = new ArrayList<>();

		private final Set<String> names;

		SendCalls(Map<String, List<NewMessage>> messagesByPartition) {
			this.names = messagesByPartition.keySet();
			messagesByPartition.forEach((partition, messages) -> {
				for (List<NewMessage> chunk : chunks(messages)) {
					this.partitions.add(partition);
					this.sends.add(new ScriptCodecs.Send(RedisSends.this.calls.signalChannel(partition), partition,
							RedisSends.this.router.countOf(partition), RedisSends.this.calls.maxRemembered(), chunk));
				}
			});
		}

		int size() {
			return this.sends.size();
		}

		/** The script call of one chunk, to be run on its own. */
		ScriptCall call(int chunk) {
			return RedisSends.this.calls.call(this.partitions.get(chunk), this.sends.get(chunk));
		}

		List<ScriptCall> calls() {
			List<ScriptCall> calls = new ArrayList<>(size());
			for (int i = 0; i < size(); i++) {
				calls.add(call(i));
			}
			return calls;
		}

		/** The results of each partition, read from the replies of its calls. */
		Map<String, List<Sent>> results(List<Object> replies) {
			Map<String, List<Sent>> results = new LinkedHashMap<>();
			this.names.forEach((name) -> results.put(name, new ArrayList<>()));
			for (int i = 0; i < size(); i++) {
				results.get(this.partitions.get(i)).addAll(this.sends.get(i).read(replies.get(i)));
			}
			return results;
		}

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

}

package io.github.delayqueue.store.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Predicate;

import io.github.delayqueue.store.NotReplicatedException;
import io.github.delayqueue.store.redis.ScriptRunner.ScriptCall;
import io.github.delayqueue.time.Durations;
import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.SlotHash;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;
import io.lettuce.core.codec.ByteArrayCodec;

import org.springframework.dao.QueryTimeoutException;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * Runs script calls that write, then waits until Redis confirms the writes on a number of
 * replicas ({@code WAIT}). {@code WAIT} holds its connection until the replicas answer
 * and counts the writes of that connection only, so the calls and the {@code WAIT} go
 * over a connection of their own, taken from a small pool and never shared with other
 * threads' commands. On a Cluster, the calls of each node and that node's {@code WAIT} go
 * over the node's connection, every node's calls before the first reply is awaited and
 * every node's {@code WAIT} before the first confirmation is awaited: a send waits at
 * most the send timeout plus the replication timeout, however many nodes it writes to.
 */
final class ReplicatedWrites implements AutoCloseable {

	private final AbstractRedisClient client;

	private final int replicas;

	private final Duration waitTimeout;

	private final ConcurrentLinkedQueue<StatefulConnection<byte[], byte[]>> idle = new ConcurrentLinkedQueue<>();

	private volatile boolean closed;

	ReplicatedWrites(RedisConnectionFactory connectionFactory, int replicas, Duration waitTimeout) {
		if (!(connectionFactory instanceof LettuceConnectionFactory lettuce)) {
			throw new IllegalStateException("Confirmed replication (delay-queue.producer.replication.min-replicas) "
					+ "needs Lettuce, but the Redis connection factory is a " + connectionFactory.getClass().getName());
		}
		if (replicas < 1 || waitTimeout.isNegative() || waitTimeout.isZero()) {
			throw new IllegalArgumentException(
					"Confirmed replication needs at least one replica and a positive timeout, but got " + replicas
							+ " and " + Durations.format(waitTimeout));
		}
		this.client = lettuce.getRequiredNativeClient();
		this.replicas = replicas;
		this.waitTimeout = waitTimeout;
	}

	/**
	 * Runs the calls and waits for their replication: all calls are sent before the first
	 * reply is awaited, and once they are answered, every node written to is asked to
	 * confirm at once, so that the whole wait is at most {@code timeout} plus the
	 * replication timeout, however many nodes the calls go to.
	 * @param calls the calls, all sent before the first reply is awaited
	 * @param timeout the longest wait for a connection and the calls' replies; the
	 * replication wait comes on top
	 * @param kept which failures of a call take the place of its reply instead of being
	 * thrown
	 * @return the replies, in the order of the calls
	 * @throws NotReplicatedException if fewer replicas than required confirmed the writes
	 * in time: the calls ran on the primary
	 */
	List<Object> runAll(List<ScriptCall> calls, Duration timeout, Predicate<Throwable> kept) {
		long callsDeadline = System.nanoTime() + timeout.toNanos();
		StatefulConnection<byte[], byte[]> connection = borrow(timeout);
		boolean healthy = false;
		try {
			List<RedisClusterAsyncCommands<byte[], byte[]>> nodes = new ArrayList<>();
			List<RedisClusterAsyncCommands<byte[], byte[]>> commandsOfCalls = new ArrayList<>(calls.size());
			if (connection instanceof StatefulRedisClusterConnection<byte[], byte[]> cluster) {
				Map<String, RedisClusterAsyncCommands<byte[], byte[]>> byNode = new LinkedHashMap<>();
				for (ScriptCall call : calls) {
					commandsOfCalls.add(byNode.computeIfAbsent(nodeOf(cluster, call),
							(node) -> connect(cluster, node, callsDeadline, timeout)));
				}
				nodes.addAll(byNode.values());
			}
			else {
				nodes.add(((StatefulRedisConnection<byte[], byte[]>) connection).async());
				calls.forEach((call) -> commandsOfCalls.add(nodes.get(0)));
			}
			List<Object> replies = ScriptRunner.runAsync(commandsOfCalls, calls, callsDeadline, timeout, kept);
			confirm(nodes, callsDeadline, timeout);
			healthy = true;
			return replies;
		}
		finally {
			giveBack(connection, healthy);
		}
	}

	private static String nodeOf(StatefulRedisClusterConnection<byte[], byte[]> cluster, ScriptCall call) {
		int slot = SlotHash.getSlot(call.keys().get(0));
		RedisClusterNode node = cluster.getPartitions().getPartitionBySlot(slot);
		if (node == null) {
			throw new IllegalStateException("No cluster node serves slot " + slot + " right now");
		}
		return node.getNodeId();
	}

	/** The connection to a cluster node, connecting within the calls' deadline. */
	private static RedisClusterAsyncCommands<byte[], byte[]> connect(
			StatefulRedisClusterConnection<byte[], byte[]> cluster, String nodeId, long deadline, Duration timeout) {
		CompletableFuture<StatefulRedisConnection<byte[], byte[]>> connecting = cluster.getConnectionAsync(nodeId);
		try {
			return connecting.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS).async();
		}
		catch (TimeoutException ex) {
			throw new QueryTimeoutException("Could not connect to Redis within " + timeout, ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new QueryTimeoutException("Interrupted while connecting to Redis", ex);
		}
		catch (ExecutionException ex) {
			throw ScriptRunner.translate(ex.getCause());
		}
	}

	/**
	 * Asks every node written to for its replicas' confirmation ({@code WAIT}) at once,
	 * then awaits the answers until the replication timeout after the calls' deadline.
	 */
	private void confirm(List<RedisClusterAsyncCommands<byte[], byte[]>> nodes, long callsDeadline, Duration timeout) {
		List<RedisFuture<Long>> waits = new ArrayList<>(nodes.size());
		for (RedisClusterAsyncCommands<byte[], byte[]> node : nodes) {
			waits.add(node.waitForReplication(this.replicas, this.waitTimeout.toMillis()));
		}
		long deadline = callsDeadline + this.waitTimeout.toNanos();
		for (RedisFuture<Long> wait : waits) {
			Long confirmed = ScriptRunner.await(wait, deadline, timeout.plus(this.waitTimeout));
			if (confirmed < this.replicas) {
				throw new NotReplicatedException(this.replicas, confirmed, this.waitTimeout);
			}
		}
	}

	/**
	 * An idle connection, else a new one; connecting waits at most the timeout, whatever
	 * the client's connect timeout (a connection that comes later is closed).
	 */
	private StatefulConnection<byte[], byte[]> borrow(Duration timeout) {
		StatefulConnection<byte[], byte[]> idleConnection = this.idle.poll();
		if (idleConnection != null) {
			return idleConnection;
		}
		CompletableFuture<StatefulConnection<byte[], byte[]>> connecting = CompletableFuture.supplyAsync(
				() -> (this.client instanceof RedisClusterClient cluster) ? cluster.connect(ByteArrayCodec.INSTANCE)
						: ((RedisClient) this.client).connect(ByteArrayCodec.INSTANCE));
		try {
			return connecting.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
		}
		catch (TimeoutException ex) {
			connecting.thenAccept(StatefulConnection::closeAsync);
			throw new QueryTimeoutException("Could not connect to Redis within " + timeout, ex);
		}
		catch (InterruptedException ex) {
			connecting.thenAccept(StatefulConnection::closeAsync);
			Thread.currentThread().interrupt();
			throw new QueryTimeoutException("Interrupted while connecting to Redis", ex);
		}
		catch (ExecutionException ex) {
			throw ScriptRunner.translate(ex.getCause());
		}
	}

	/**
	 * Keeps a connection for the next call, unless the call failed: a timed-out command
	 * may still hold it, so it is closed.
	 */
	private void giveBack(StatefulConnection<byte[], byte[]> connection, boolean healthy) {
		if (healthy && !this.closed && connection.isOpen()) {
			this.idle.add(connection);
			if (this.closed) {
				close();
			}
			return;
		}
		connection.closeAsync();
	}

	@Override
	public void close() {
		this.closed = true;
		for (StatefulConnection<byte[], byte[]> connection; (connection = this.idle.poll()) != null;) {
			connection.closeAsync();
		}
	}

}

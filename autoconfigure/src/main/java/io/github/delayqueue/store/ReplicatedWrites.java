package io.github.delayqueue.store;

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

import io.github.delayqueue.store.ScriptRunner.ScriptCall;
import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.RedisClient;
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
 * over the node's connection.
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
							+ " and " + waitTimeout);
		}
		this.client = lettuce.getRequiredNativeClient();
		this.replicas = replicas;
		this.waitTimeout = waitTimeout;
	}

	/**
	 * Runs the calls and waits for their replication.
	 * @param calls the calls, all sent before the first reply is awaited
	 * @param timeout the longest wait for the calls' replies; the replication wait comes
	 * on top
	 * @return the replies, in the order of the calls
	 * @throws NotReplicatedException if fewer replicas than required confirmed the writes
	 * in time: the calls ran on the primary
	 */
	List<Object> runAll(List<ScriptCall> calls, Duration timeout) {
		StatefulConnection<byte[], byte[]> connection = borrow(timeout);
		boolean healthy = false;
		try {
			List<Object> replies = (connection instanceof StatefulRedisClusterConnection<byte[], byte[]> cluster)
					? runOnNodes(cluster, calls, timeout)
					: runOn(((StatefulRedisConnection<byte[], byte[]>) connection).async(), calls, timeout);
			healthy = true;
			return replies;
		}
		finally {
			giveBack(connection, healthy);
		}
	}

	private List<Object> runOnNodes(StatefulRedisClusterConnection<byte[], byte[]> cluster, List<ScriptCall> calls,
			Duration timeout) {
		Map<String, List<Integer>> callsByNode = new LinkedHashMap<>();
		for (int i = 0; i < calls.size(); i++) {
			int slot = SlotHash.getSlot(calls.get(i).keys().get(0));
			RedisClusterNode node = cluster.getPartitions().getPartitionBySlot(slot);
			if (node == null) {
				throw new IllegalStateException("No cluster node serves slot " + slot + " right now");
			}
			callsByNode.computeIfAbsent(node.getNodeId(), (id) -> new ArrayList<>()).add(i);
		}
		Object[] replies = new Object[calls.size()];
		for (Map.Entry<String, List<Integer>> node : callsByNode.entrySet()) {
			List<ScriptCall> nodeCalls = node.getValue().stream().map(calls::get).toList();
			List<Object> nodeReplies = runOn(cluster.getConnection(node.getKey()).async(), nodeCalls, timeout);
			for (int i = 0; i < nodeCalls.size(); i++) {
				replies[node.getValue().get(i)] = nodeReplies.get(i);
			}
		}
		return List.of(replies);
	}

	private List<Object> runOn(RedisClusterAsyncCommands<byte[], byte[]> commands, List<ScriptCall> calls,
			Duration timeout) {
		List<Object> replies = ScriptRunner.runAsync(commands, calls, System.nanoTime() + timeout.toNanos(), timeout);
		Long confirmed = ScriptRunner.await(commands.waitForReplication(this.replicas, this.waitTimeout.toMillis()),
				System.nanoTime() + this.waitTimeout.plus(timeout).toNanos(), this.waitTimeout.plus(timeout));
		if (confirmed < this.replicas) {
			throw new NotReplicatedException(this.replicas, confirmed, this.waitTimeout);
		}
		return replies;
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

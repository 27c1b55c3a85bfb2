package io.github.delayqueue.test.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

import org.jspecify.annotations.Nullable;

/**
 * A Redis Cluster of {@code redis-server} processes on free loopback ports, built the way
 * {@code redis-cli --cluster create} builds one: slots split evenly over the primaries
 * ({@code CLUSTER ADDSLOTS}), every node introduced to the first ({@code CLUSTER MEET}),
 * each replica attached to its primary ({@code CLUSTER REPLICATE}). Nodes can be killed
 * and started again (they keep their cluster configuration), for failover tests. Closing
 * it stops every node.
 */
public final class TestRedisCluster implements AutoCloseable {

	/** The number of hash slots of a Redis Cluster. */
	public static final int SLOTS = 16384;

	private static final Duration FORM_TIMEOUT = Duration.ofSeconds(30);

	private static final long POLL_MILLIS = 50;

	private final List<RedisServerProcess> primaries;

	private final List<RedisServerProcess> replicas;

	private TestRedisCluster(List<RedisServerProcess> primaries, List<RedisServerProcess> replicas) {
		this.primaries = List.copyOf(primaries);
		this.replicas = List.copyOf(replicas);
	}

	/**
	 * Starts a cluster and waits until every node reports it healthy.
	 * @param primaryCount the number of primaries, at least 3 as Redis requires for
	 * failover
	 * @param replicasPerPrimary replicas of each primary, 0 for none
	 * @param nodeTimeout how long a node may be unreachable before it counts as failed
	 * (Redis' {@code cluster-node-timeout})
	 * @return the running cluster
	 * @throws IllegalStateException if no {@code redis-server} binary is available or the
	 * cluster does not form in time
	 */
	public static TestRedisCluster start(int primaryCount, int replicasPerPrimary, Duration nodeTimeout) {
		if (primaryCount < 1 || replicasPerPrimary < 0) {
			throw new IllegalArgumentException("A cluster needs at least one primary and no negative number of "
					+ "replicas, but got " + primaryCount + " and " + replicasPerPrimary);
		}
		List<RedisServerProcess> started = new ArrayList<>();
		try {
			List<RedisServerProcess> primaries = new ArrayList<>();
			List<RedisServerProcess> replicas = new ArrayList<>();
			for (int i = 0; i < primaryCount * (1 + replicasPerPrimary); i++) {
				RedisServerProcess node = TestRedis.startPrivateServer("--cluster-enabled", "yes",
						"--cluster-config-file", "nodes.conf", "--cluster-node-timeout",
						String.valueOf(nodeTimeout.toMillis()));
				started.add(node);
				((i < primaryCount) ? primaries : replicas).add(node);
			}
			TestRedisCluster cluster = new TestRedisCluster(primaries, replicas);
			cluster.form(replicasPerPrimary);
			return cluster;
		}
		catch (RuntimeException ex) {
			started.forEach(RedisServerProcess::close);
			throw ex;
		}
	}

	private void form(int replicasPerPrimary) {
		int count = this.primaries.size();
		for (int i = 0; i < count; i++) {
			List<String> command = new ArrayList<>(List.of("CLUSTER", "ADDSLOTS"));
			for (int slot = i * SLOTS / count; slot < (i + 1) * SLOTS / count; slot++) {
				command.add(String.valueOf(slot));
			}
			this.primaries.get(i).command(command.toArray(String[]::new));
		}
		RedisServerProcess first = this.primaries.get(0);
		for (RedisServerProcess node : nodes()) {
			if (node != first) {
				node.command("CLUSTER", "MEET", first.host(), String.valueOf(first.port()));
			}
		}
		awaitKnownNodes();
		for (int i = 0; i < this.replicas.size(); i++) {
			RedisServerProcess primary = this.primaries.get(i / replicasPerPrimary);
			String primaryId = primary.command("CLUSTER", "MYID");
			this.replicas.get(i).command("CLUSTER", "REPLICATE", primaryId);
		}
		awaitHealthy(FORM_TIMEOUT);
	}

	private void awaitKnownNodes() {
		long deadline = System.nanoTime() + FORM_TIMEOUT.toNanos();
		int total = nodes().size();
		while (!nodes().stream().allMatch((node) -> total == infoField(node, "cluster_known_nodes"))) {
			pause(deadline, "the nodes to learn of each other");
		}
	}

	/**
	 * Waits until every running node reports {@code cluster_state:ok} with all slots
	 * assigned, and every running replica is connected to its primary.
	 * @param timeout the longest wait
	 * @throws IllegalStateException if that does not happen in time
	 */
	public void awaitHealthy(Duration timeout) {
		long deadline = System.nanoTime() + timeout.toNanos();
		while (!isHealthy()) {
			pause(deadline, "the cluster to be healthy (" + describe() + ")");
		}
	}

	private boolean isHealthy() {
		for (RedisServerProcess node : running()) {
			String info = node.command("CLUSTER", "INFO");
			if (!info.contains("cluster_state:ok") || !info.contains("cluster_slots_ok:" + SLOTS)) {
				return false;
			}
			String replication = node.command("INFO", "replication");
			if (replication.contains("role:slave") && !replication.contains("master_link_status:up")) {
				return false;
			}
		}
		return true;
	}

	private String describe() {
		return running().stream()
			.map((node) -> node.port() + ": "
					+ node.command("CLUSTER", "INFO")
						.lines()
						.filter((line) -> line.startsWith("cluster_state:"))
						.findFirst()
						.orElse("?"))
			.collect(Collectors.joining(", "));
	}

	private static void pause(long deadlineNanos, String waitingFor) {
		if (System.nanoTime() - deadlineNanos > 0) {
			throw new IllegalStateException("Timed out waiting for " + waitingFor);
		}
		try {
			Thread.sleep(POLL_MILLIS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("Interrupted while waiting for " + waitingFor, ex);
		}
	}

	private static long infoField(RedisServerProcess node, String field) {
		return node.command("CLUSTER", "INFO")
			.lines()
			.filter((line) -> line.startsWith(field + ":"))
			.map((line) -> Long.parseLong(line.substring(field.length() + 1).strip()))
			.findFirst()
			.orElse(-1L);
	}

	/**
	 * Returns the nodes that were primaries when the cluster formed.
	 * @return the primaries
	 */
	public List<RedisServerProcess> primaries() {
		return this.primaries;
	}

	/**
	 * Returns the nodes that were replicas when the cluster formed.
	 * @return the replicas
	 */
	public List<RedisServerProcess> replicas() {
		return this.replicas;
	}

	/**
	 * Returns every node.
	 * @return primaries first, then replicas
	 */
	public List<RedisServerProcess> nodes() {
		List<RedisServerProcess> nodes = new ArrayList<>(this.primaries);
		nodes.addAll(this.replicas);
		return nodes;
	}

	private List<RedisServerProcess> running() {
		return nodes().stream().filter(RedisServerProcess::isRunning).toList();
	}

	/**
	 * Returns the node serving a hash slot now, a replica promoted after a failover
	 * included.
	 * @param slot the hash slot
	 * @return the running primary that owns it, or {@code null} if none does
	 */
	public @Nullable RedisServerProcess primaryOf(int slot) {
		for (RedisServerProcess node : running()) {
			String replication = node.command("INFO", "replication");
			if (replication.contains("role:master") && ownsSlot(node, slot)) {
				return node;
			}
		}
		return null;
	}

	private static boolean ownsSlot(RedisServerProcess node, int slot) {
		String myself = node.command("CLUSTER", "NODES")
			.lines()
			.filter((line) -> line.contains("myself"))
			.findFirst()
			.orElse("");
		String[] fields = myself.split(" ");
		for (int i = 8; i < fields.length; i++) {
			String[] range = fields[i].split("-");
			if (range[0].startsWith("[")) {
				continue;
			}
			int from = Integer.parseInt(range[0]);
			int to = (range.length > 1) ? Integer.parseInt(range[1]) : from;
			if (slot >= from && slot <= to) {
				return true;
			}
		}
		return false;
	}

	/**
	 * Returns Spring Boot properties pointing at the cluster.
	 * @return {@code spring.data.redis.cluster.nodes} with every node, as a
	 * {@code name=value} string
	 */
	public String[] springProperties() {
		return new String[] { "spring.data.redis.cluster.nodes="
				+ nodes().stream().map((node) -> node.host() + ":" + node.port()).collect(Collectors.joining(",")) };
	}

	/**
	 * Stops every node and deletes its files.
	 */
	@Override
	public void close() {
		nodes().forEach(RedisServerProcess::close);
	}

}

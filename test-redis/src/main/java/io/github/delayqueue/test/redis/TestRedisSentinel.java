package io.github.delayqueue.test.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

import org.jspecify.annotations.Nullable;

/**
 * A primary, its replicas and the Sentinels that watch them, all {@code redis-server}
 * processes on free loopback ports: for failover tests. Any node can be killed like
 * {@code kill -9} ({@link RedisServerProcess#stop()}); the Sentinels then promote a
 * replica. Closing it stops every process.
 */
public final class TestRedisSentinel implements AutoCloseable {

	/** The name under which the Sentinels know the primary. */
	public static final String MASTER_NAME = "delay-queue";

	private static final Duration START_TIMEOUT = Duration.ofSeconds(30);

	private static final long POLL_MILLIS = 50;

	private final RedisServerProcess firstPrimary;

	private final List<RedisServerProcess> replicas;

	private final List<RedisServerProcess> sentinels;

	private TestRedisSentinel(RedisServerProcess firstPrimary, List<RedisServerProcess> replicas,
			List<RedisServerProcess> sentinels) {
		this.firstPrimary = firstPrimary;
		this.replicas = List.copyOf(replicas);
		this.sentinels = List.copyOf(sentinels);
	}

	/**
	 * Starts a primary, its replicas and the Sentinels (a majority of them must agree
	 * that the primary is down), and waits until the replicas are in sync and every
	 * Sentinel knows them all.
	 * @param replicaCount the number of replicas, at least 1 for a failover
	 * @param sentinelCount the number of Sentinels
	 * @param downAfter how long the primary must be unreachable before the Sentinels
	 * consider it down ({@code down-after-milliseconds})
	 * @return the running set
	 */
	public static TestRedisSentinel start(int replicaCount, int sentinelCount, Duration downAfter) {
		List<RedisServerProcess> started = new ArrayList<>();
		try {
			RedisServerProcess primary = TestRedis.startPrivateServer();
			started.add(primary);
			List<RedisServerProcess> replicas = new ArrayList<>();
			for (int i = 0; i < replicaCount; i++) {
				RedisServerProcess replica = TestRedis.startPrivateServer("--replicaof", primary.host(),
						String.valueOf(primary.port()));
				started.add(replica);
				replicas.add(replica);
			}
			String config = "sentinel monitor " + MASTER_NAME + " " + primary.host() + " " + primary.port() + " "
					+ (sentinelCount / 2 + 1) + "\n" + "sentinel down-after-milliseconds " + MASTER_NAME + " "
					+ downAfter.toMillis() + "\n" + "sentinel failover-timeout " + MASTER_NAME + " 10000\n"
					+ "sentinel parallel-syncs " + MASTER_NAME + " 1\n";
			List<RedisServerProcess> sentinels = new ArrayList<>();
			for (int i = 0; i < sentinelCount; i++) {
				RedisServerProcess sentinel = TestRedis.startPrivateSentinel(config);
				started.add(sentinel);
				sentinels.add(sentinel);
			}
			TestRedisSentinel set = new TestRedisSentinel(primary, replicas, sentinels);
			set.awaitReady();
			return set;
		}
		catch (RuntimeException ex) {
			started.forEach(RedisServerProcess::close);
			throw ex;
		}
	}

	private void awaitReady() {
		long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
		while (!isReady()) {
			if (System.nanoTime() - deadline > 0) {
				throw new IllegalStateException(
						"The Sentinels did not see the primary and its " + this.replicas.size() + " replicas in time");
			}
			sleep();
		}
	}

	private boolean isReady() {
		for (RedisServerProcess replica : this.replicas) {
			if (!replica.command("INFO", "replication").contains("master_link_status:up")) {
				return false;
			}
		}
		for (RedisServerProcess sentinel : this.sentinels) {
			String primary = sentinel.command("SENTINEL", "MASTER", MASTER_NAME);
			if (field(primary, "num-slaves") != this.replicas.size()
					|| field(primary, "num-other-sentinels") != this.sentinels.size() - 1) {
				return false;
			}
		}
		return true;
	}

	/**
	 * Reads a field of a {@code SENTINEL MASTER} reply, whose lines alternate names and
	 * values.
	 */
	private static long field(String reply, String name) {
		String[] lines = reply.split("\n");
		for (int i = 0; i + 1 < lines.length; i += 2) {
			if (lines[i].equals(name)) {
				return Long.parseLong(lines[i + 1]);
			}
		}
		return -1;
	}

	/**
	 * Returns the node the Sentinels name as the primary now.
	 * @return the primary, or {@code null} if no running Sentinel names a running node of
	 * this set
	 */
	public @Nullable RedisServerProcess currentPrimary() {
		for (RedisServerProcess sentinel : this.sentinels) {
			if (!sentinel.isRunning()) {
				continue;
			}
			String[] address = sentinel.command("SENTINEL", "GET-MASTER-ADDR-BY-NAME", MASTER_NAME).split("\n");
			if (address.length == 2) {
				int port = Integer.parseInt(address[1]);
				return servers().stream().filter((node) -> node.port() == port).findFirst().orElse(null);
			}
		}
		return null;
	}

	/**
	 * Waits until the Sentinels have promoted another node than the given one, and that
	 * node acts as a primary.
	 * @param old the primary that was killed
	 * @param timeout the longest wait
	 * @return the new primary
	 * @throws IllegalStateException if no failover happens in time
	 */
	public RedisServerProcess awaitFailoverFrom(RedisServerProcess old, Duration timeout) {
		long deadline = System.nanoTime() + timeout.toNanos();
		while (true) {
			RedisServerProcess primary = currentPrimary();
			if (primary != null && primary != old && primary.isRunning()
					&& primary.command("INFO", "replication").contains("role:master")) {
				return primary;
			}
			if (System.nanoTime() - deadline > 0) {
				throw new IllegalStateException("No failover from port " + old.port() + " within " + timeout);
			}
			sleep();
		}
	}

	/**
	 * Starts a killed node again, empty, as a replica of the given primary (as the
	 * Sentinels would make it, only sooner), and waits until it is in sync.
	 * @param replica the node, stopped
	 * @param primary the primary it must replicate from
	 * @param timeout the longest wait
	 * @throws IllegalStateException if that does not happen in time
	 */
	public void restartAsReplica(RedisServerProcess replica, RedisServerProcess primary, Duration timeout) {
		replica.start();
		replica.command("REPLICAOF", primary.host(), String.valueOf(primary.port()));
		replica.awaitReplicaOf(primary, timeout);
	}

	private static void sleep() {
		try {
			Thread.sleep(POLL_MILLIS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("Interrupted while waiting for the Sentinels", ex);
		}
	}

	/**
	 * Returns the node that was the primary when the set started.
	 * @return the first primary
	 */
	public RedisServerProcess firstPrimary() {
		return this.firstPrimary;
	}

	/**
	 * Returns the nodes that were replicas when the set started.
	 * @return the replicas
	 */
	public List<RedisServerProcess> replicas() {
		return this.replicas;
	}

	/**
	 * Returns the Sentinels.
	 * @return the Sentinels
	 */
	public List<RedisServerProcess> sentinels() {
		return this.sentinels;
	}

	private List<RedisServerProcess> servers() {
		List<RedisServerProcess> servers = new ArrayList<>();
		servers.add(this.firstPrimary);
		servers.addAll(this.replicas);
		return servers;
	}

	/**
	 * Returns Spring Boot properties pointing at the Sentinels.
	 * @return {@code spring.data.redis.sentinel.master} and
	 * {@code spring.data.redis.sentinel.nodes} as {@code name=value} strings
	 */
	public String[] springProperties() {
		return new String[] { "spring.data.redis.sentinel.master=" + MASTER_NAME,
				"spring.data.redis.sentinel.nodes=" + this.sentinels.stream()
					.map((sentinel) -> sentinel.host() + ":" + sentinel.port())
					.collect(Collectors.joining(",")) };
	}

	/**
	 * Stops every process and deletes its files.
	 */
	@Override
	public void close() {
		this.sentinels.forEach(RedisServerProcess::close);
		servers().forEach(RedisServerProcess::close);
	}

}

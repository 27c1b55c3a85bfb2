package io.github.delayqueue.store.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import io.github.delayqueue.store.ServerInspector;
import io.github.delayqueue.store.ServerReport;
import io.github.delayqueue.store.ServerReport.Primary;
import io.github.delayqueue.time.Durations;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.api.async.RedisAdvancedClusterAsyncCommands;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;
import org.jspecify.annotations.Nullable;

import org.springframework.core.NestedExceptionUtils;
import org.springframework.dao.QueryTimeoutException;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * Reads what the Redis servers of the queue say of themselves with {@code INFO},
 * {@code CONFIG GET save} and {@code CLIENT INFO}: every primary of a Cluster at once,
 * else the one the connection factory reaches, all within one timeout, so that a primary
 * that does not answer is marked as such without holding back the others. Warns of
 * settings that lose messages (a {@code maxmemory-policy} other than {@code noeviction};
 * AOF off, which loses what changed since the last RDB snapshot, or everything when there
 * are no snapshots either) or soon refuse writes (memory nine tenths full).
 */
public final class RedisServerInspector implements ServerInspector {

	/** How long an inspection waits for the servers unless told otherwise. */
	public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(2);

	/** The share of {@code maxmemory} in use from which a warning is given. */
	private static final double MEMORY_WARNING_SHARE = 0.9;

	private final RedisConnectionFactory connectionFactory;

	private final Duration timeout;

	/**
	 * Creates an inspector that waits at most {@link #DEFAULT_TIMEOUT}.
	 * @param connectionFactory the Redis connection factory of the queue
	 */
	public RedisServerInspector(RedisConnectionFactory connectionFactory) {
		this(connectionFactory, DEFAULT_TIMEOUT);
	}

	/**
	 * Creates an inspector.
	 * @param connectionFactory the Redis connection factory of the queue
	 * @param timeout the longest an inspection waits for the servers' answers
	 */
	public RedisServerInspector(RedisConnectionFactory connectionFactory, Duration timeout) {
		this.connectionFactory = connectionFactory;
		this.timeout = timeout;
	}

	@Override
	public ServerReport inspect() {
		long deadline = System.nanoTime() + this.timeout.toNanos();
		try (RedisConnection connection = this.connectionFactory.getConnection()) {
			Object commands = connection.getNativeConnection();
			if (commands instanceof RedisAdvancedClusterAsyncCommands<?, ?> cluster) {
				return report("cluster", primaries(cluster.getStatefulConnection(), deadline));
			}
			if (!(commands instanceof RedisClusterAsyncCommands<?, ?> server)) {
				throw new IllegalStateException("Not a Lettuce connection: " + commands.getClass().getName());
			}
			boolean sentinel = this.connectionFactory instanceof LettuceConnectionFactory lettuce
					&& lettuce.isRedisSentinelAware();
			Reading reading = new Reading(server.info().toCompletableFuture(),
					server.configGet("save").toCompletableFuture(), server.clientInfo().toCompletableFuture());
			Properties info = info(awaitOrThrow(reading.info(), deadline));
			String address = address(reading, info, deadline);
			return report(sentinel ? "sentinel" : "standalone",
					List.of(primary(address, info, saveRules(reading.save(), deadline))));
		}
	}

	/** Every primary that serves slots, read at once. */
	private List<Primary> primaries(StatefulRedisClusterConnection<?, ?> cluster, long deadline) {
		List<String> addresses = new ArrayList<>();
		List<Reading> readings = new ArrayList<>();
		for (RedisClusterNode node : cluster.getPartitions()) {
			if (!node.is(RedisClusterNode.NodeFlag.UPSTREAM) || node.getSlots().isEmpty()) {
				continue;
			}
			RedisURI uri = node.getUri();
			addresses.add(uri.getHost() + ":" + uri.getPort());
			CompletableFuture<? extends StatefulRedisConnection<?, ?>> connecting = cluster
				.getConnectionAsync(node.getNodeId());
			readings.add(new Reading(connecting.thenCompose((server) -> server.async().info()),
					connecting.thenCompose((server) -> server.async().configGet("save")), null));
		}
		List<Primary> primaries = new ArrayList<>();
		for (int i = 0; i < readings.size(); i++) {
			String address = addresses.get(i);
			Reading reading = readings.get(i);
			try {
				Properties info = info(awaitOrThrow(reading.info(), deadline));
				primaries.add(primary(address, info, saveRules(reading.save(), deadline)));
			}
			catch (RuntimeException ex) {
				primaries.add(new Primary(address, null, 0, 0, 0, null, "unknown", problem(ex)));
			}
		}
		primaries.sort(Comparator.comparing(Primary::address));
		return primaries;
	}

	private Primary primary(String address, Properties info, @Nullable String saveRules) {
		boolean aof = "1".equals(info.getProperty("aof_enabled"));
		String persistence;
		if (saveRules == null) {
			persistence = aof ? "AOF" : "unknown";
		}
		else {
			boolean rdb = !saveRules.isBlank();
			persistence = (aof && rdb) ? "AOF and RDB" : aof ? "AOF" : rdb ? "RDB" : "none";
		}
		return new Primary(address, info.getProperty("redis_version"), (int) number(info, "connected_slaves"),
				number(info, "used_memory"), number(info, "maxmemory"), info.getProperty("maxmemory_policy"),
				persistence, null);
	}

	private static ServerReport report(String mode, List<Primary> primaries) {
		List<String> warnings = new ArrayList<>();
		for (Primary primary : primaries) {
			String where = (primaries.size() > 1) ? " (" + primary.address() + ")" : "";
			if (primary.error() != null) {
				warnings.add("Redis" + where + " could not be read: " + primary.error());
				continue;
			}
			String policy = primary.evictionPolicy();
			if (policy != null && !"noeviction".equals(policy)) {
				warnings.add("Redis maxmemory-policy is '" + policy + "'" + where + ": when memory runs out Redis may"
						+ " evict delay queue keys and lose messages. Use 'noeviction' for the Redis that holds the"
						+ " queue.");
			}
			String persistenceWarning = persistenceWarning(primary.persistence(), where);
			if (persistenceWarning != null) {
				warnings.add(persistenceWarning);
			}
			if (primary.maxMemoryBytes() > 0
					&& primary.usedMemoryBytes() >= MEMORY_WARNING_SHARE * primary.maxMemoryBytes()) {
				warnings.add("Redis memory is " + (100 * primary.usedMemoryBytes() / primary.maxMemoryBytes())
						+ "% full" + where + " (" + primary.usedMemoryBytes() + " of " + primary.maxMemoryBytes()
						+ " bytes): at the limit Redis refuses new messages"
						+ ("noeviction".equals(policy) ? "" : " or evicts queue keys") + ".");
			}
		}
		return new ServerReport(mode, primaries, warnings);
	}

	/**
	 * The warning for a primary without AOF: stronger when it keeps nothing on disk at
	 * all; {@code null} with AOF on.
	 */
	private static @Nullable String persistenceWarning(String persistence, String where) {
		if (persistence.startsWith("AOF")) {
			return null;
		}
		if ("none".equals(persistence)) {
			return "Redis persistence is off" + where + " (neither AOF nor RDB snapshots): a Redis restart"
					+ " loses every delay queue message. Enable 'appendonly yes' (best: 'appendfsync everysec' or"
					+ " 'always').";
		}
		String snapshots = "RDB".equals(persistence) ? "only RDB snapshots"
				: "RDB snapshots, if any, could not be read";
		return "Redis AOF is off" + where + " (" + snapshots + "): a Redis crash, kill or failover loses every"
				+ " delay queue message sent, retried or rescheduled since the last snapshot. Enable 'appendonly yes'"
				+ " (best: 'appendfsync everysec' or 'always').";
	}

	/**
	 * The address of the server a connection reaches, as that server sees it
	 * ({@code CLIENT INFO}), else as the connection factory names it, else its port.
	 */
	private String address(Reading reading, Properties info, long deadline) {
		String client = awaitOrNull(reading.client(), deadline);
		if (client != null) {
			for (String field : client.trim().split(" ")) {
				if (field.startsWith("laddr=")) {
					return field.substring("laddr=".length());
				}
			}
		}
		if (this.connectionFactory instanceof LettuceConnectionFactory lettuce && !lettuce.isRedisSentinelAware()) {
			return lettuce.getHostName() + ":" + lettuce.getPort();
		}
		return "port " + info.getProperty("tcp_port", "unknown");
	}

	/**
	 * The RDB save rules, empty when there are none, or {@code null} when Redis does not
	 * say (CONFIG disabled, as on some managed services).
	 */
	private @Nullable String saveRules(CompletableFuture<Map<String, String>> reply, long deadline) {
		Map<String, String> save = awaitOrNull(reply, deadline);
		if (save == null || save.isEmpty()) {
			return null;
		}
		String rules = save.get("save");
		return (rules != null) ? rules : save.values().iterator().next();
	}

	private <T> @Nullable T awaitOrNull(@Nullable CompletableFuture<T> reply, long deadline) {
		if (reply == null) {
			return null;
		}
		try {
			return awaitOrThrow(reply, deadline);
		}
		catch (RuntimeException ex) {
			return null;
		}
	}

	private <T> T awaitOrThrow(CompletableFuture<T> reply, long deadline) {
		try {
			return reply.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
		}
		catch (TimeoutException ex) {
			reply.cancel(true);
			throw new QueryTimeoutException("did not answer within " + Durations.format(this.timeout), ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new QueryTimeoutException("interrupted while waiting for Redis", ex);
		}
		catch (ExecutionException ex) {
			throw ScriptRunner.translate(ex.getCause());
		}
	}

	private static String problem(RuntimeException ex) {
		Throwable cause = NestedExceptionUtils.getMostSpecificCause(ex);
		String message = (cause.getMessage() != null) ? cause.getMessage() : ex.getMessage();
		return (message != null) ? message : ex.getClass().getSimpleName();
	}

	private static Properties info(String text) {
		Properties info = new Properties();
		for (String line : text.split("\r?\n")) {
			int colon = line.indexOf(':');
			if (!line.startsWith("#") && colon > 0) {
				info.setProperty(line.substring(0, colon), line.substring(colon + 1).trim());
			}
		}
		return info;
	}

	private static long number(Properties info, String name) {
		String value = info.getProperty(name);
		if (value == null) {
			return 0;
		}
		try {
			return Long.parseLong(value.trim());
		}
		catch (NumberFormatException ex) {
			return 0;
		}
	}

	/** The replies one server is asked for; {@code client} only outside a Cluster. */
	private record Reading(CompletableFuture<String> info, CompletableFuture<Map<String, String>> save,
			@Nullable CompletableFuture<String> client) {
	}

}

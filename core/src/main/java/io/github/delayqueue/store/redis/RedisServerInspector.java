package io.github.delayqueue.store.redis;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.function.Supplier;

import io.github.delayqueue.store.ServerInspector;
import io.github.delayqueue.store.ServerReport;
import io.github.delayqueue.store.ServerReport.Primary;
import org.jspecify.annotations.Nullable;

import org.springframework.dao.DataAccessException;
import org.springframework.data.redis.connection.RedisClusterConnection;
import org.springframework.data.redis.connection.RedisClusterNode;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * Reads what the Redis servers of the queue say of themselves with {@code INFO},
 * {@code CONFIG GET save} and {@code CLIENT INFO}: every primary of a Cluster, else the
 * one the connection factory reaches. Warns of settings that lose messages (a
 * {@code maxmemory-policy} other than {@code noeviction}; neither AOF nor RDB
 * persistence) or soon refuse writes (memory nine tenths full).
 */
public final class RedisServerInspector implements ServerInspector {

	/** The share of {@code maxmemory} in use from which a warning is given. */
	private static final double MEMORY_WARNING_SHARE = 0.9;

	private final RedisConnectionFactory connectionFactory;

	/**
	 * Creates the inspector.
	 * @param connectionFactory the Redis connection factory of the queue
	 */
	public RedisServerInspector(RedisConnectionFactory connectionFactory) {
		this.connectionFactory = connectionFactory;
	}

	@Override
	public ServerReport inspect() {
		try (RedisConnection connection = this.connectionFactory.getConnection()) {
			if (connection instanceof RedisClusterConnection cluster) {
				return report("cluster", primariesOf(cluster));
			}
			String mode = (this.connectionFactory instanceof LettuceConnectionFactory lettuce
					&& lettuce.isRedisSentinelAware()) ? "sentinel" : "standalone";
			Properties info = connection.serverCommands().info();
			String address = address(connection, info);
			return report(mode,
					List.of(primary(address, info, saveRules(() -> connection.serverCommands().getConfig("save")))));
		}
	}

	private static List<Primary> primariesOf(RedisClusterConnection cluster) {
		List<Primary> primaries = new ArrayList<>();
		for (RedisClusterNode node : cluster.clusterGetNodes()) {
			if (!node.isMaster() || node.getSlotRange().getSlots().isEmpty()) {
				continue;
			}
			String address = node.asString();
			try {
				Properties info = cluster.serverCommands().info(node);
				primaries.add(primary(address, (info != null) ? info : new Properties(),
						saveRules(() -> cluster.serverCommands().getConfig(node, "save"))));
			}
			catch (DataAccessException ex) {
				primaries.add(new Primary(address, null, 0, 0, 0, null, "unknown",
						(ex.getMessage() != null) ? ex.getMessage() : ex.getClass().getSimpleName()));
			}
		}
		primaries.sort((left, right) -> left.address().compareTo(right.address()));
		return primaries;
	}

	private static Primary primary(String address, Properties info, @Nullable String saveRules) {
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
			if ("none".equals(primary.persistence())) {
				warnings.add("Redis persistence is off" + where + " (neither AOF nor RDB snapshots): a Redis restart"
						+ " loses every delay queue message. Enable 'appendonly yes' (best: 'appendfsync everysec' or"
						+ " 'always').");
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
	 * The address of the server a connection reaches, as that server sees it
	 * ({@code CLIENT INFO}, Redis 6.2 and later), else its port alone.
	 */
	private static String address(RedisConnection connection, Properties info) {
		try {
			// A bulk string in RESP2, a verbatim string in RESP3.
			Object reply = connection.execute("CLIENT", "INFO".getBytes(StandardCharsets.UTF_8));
			String text = (reply instanceof byte[] bytes) ? new String(bytes, StandardCharsets.UTF_8)
					: (reply != null) ? reply.toString() : "";
			for (String field : text.trim().split(" ")) {
				if (field.startsWith("laddr=")) {
					return field.substring("laddr=".length());
				}
			}
		}
		catch (DataAccessException ex) {
			// An older Redis, or CLIENT disabled: the port alone says something.
		}
		return "port " + info.getProperty("tcp_port", "unknown");
	}

	/**
	 * The RDB save rules, empty when there are none, or {@code null} when Redis does not
	 * say (CONFIG disabled, as on some managed services).
	 */
	private static @Nullable String saveRules(Supplier<@Nullable Properties> read) {
		try {
			Properties save = read.get();
			if (save == null || save.isEmpty()) {
				return null;
			}
			String rules = save.getProperty("save");
			return (rules != null) ? rules : save.values().iterator().next().toString();
		}
		catch (DataAccessException ex) {
			return null;
		}
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

}

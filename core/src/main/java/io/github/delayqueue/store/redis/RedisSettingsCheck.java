package io.github.delayqueue.store.redis;

import java.util.Properties;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;

/**
 * Warns once at startup about Redis settings that lose messages: a
 * {@code maxmemory-policy} other than {@code noeviction} (Redis may evict queue keys when
 * memory runs out), and neither AOF nor RDB persistence (a Redis restart loses every
 * message). Never fails startup: if Redis cannot be asked, the check is skipped.
 */
public class RedisSettingsCheck implements SmartInitializingSingleton {

	private static final Log logger = LogFactory.getLog(RedisSettingsCheck.class);

	private final RedisConnectionFactory connectionFactory;

	/**
	 * Creates the check.
	 * @param connectionFactory the Redis connection factory of the queue
	 */
	public RedisSettingsCheck(RedisConnectionFactory connectionFactory) {
		this.connectionFactory = connectionFactory;
	}

	@Override
	public void afterSingletonsInstantiated() {
		try (RedisConnection connection = this.connectionFactory.getConnection()) {
			Properties memory = connection.serverCommands().info("memory");
			String policy = (memory != null) ? memory.getProperty("maxmemory_policy") : null;
			if (policy != null && !"noeviction".equals(policy)) {
				logger.warn("Redis maxmemory-policy is '" + policy + "': when memory runs out Redis may evict delay"
						+ " queue keys and lose messages. Use 'noeviction' for the Redis that holds the queue.");
			}
			Properties persistence = connection.serverCommands().info("persistence");
			boolean aof = persistence != null && "1".equals(persistence.getProperty("aof_enabled"));
			if (!aof && !rdbEnabled(connection)) {
				logger.warn("Redis persistence is off (neither AOF nor RDB snapshots): a Redis restart loses every"
						+ " delay queue message. Enable 'appendonly yes' (best: 'appendfsync everysec' or 'always').");
			}
		}
		catch (RuntimeException ex) {
			logger.debug("Could not check the Redis settings; skipping the check", ex);
		}
	}

	private static boolean rdbEnabled(RedisConnection connection) {
		try {
			Properties save = connection.serverCommands().getConfig("save");
			String rules = (save != null) ? value(save, "save") : null;
			// Unknown (CONFIG disabled, as on some managed services): assume the provider
			// persists.
			return rules == null || !rules.isBlank();
		}
		catch (RuntimeException ex) {
			return true;
		}
	}

	private static @Nullable String value(Properties properties, String name) {
		String value = properties.getProperty(name);
		return (value != null || properties.isEmpty()) ? value : properties.values().iterator().next().toString();
	}

}

package io.github.delayqueue.store.redis;

import io.github.delayqueue.store.ServerInspector;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.beans.factory.SmartInitializingSingleton;

/**
 * Warns once at startup about Redis settings that lose messages, on every primary of a
 * Cluster: a {@code maxmemory-policy} other than {@code noeviction} (Redis may evict
 * queue keys when memory runs out), AOF off (a crash loses the messages sent or changed
 * since the last RDB snapshot; with no snapshots either, a restart loses every message),
 * and memory nearly full ({@link RedisServerInspector} has the rules). Never fails
 * startup, and waits no longer than the inspector's timeout: if Redis cannot be asked,
 * the check is skipped.
 */
public class RedisSettingsCheck implements SmartInitializingSingleton {

	private static final Log logger = LogFactory.getLog(RedisSettingsCheck.class);

	private final ServerInspector inspector;

	/**
	 * Creates the check.
	 * @param inspector what reads the servers' settings
	 */
	public RedisSettingsCheck(ServerInspector inspector) {
		this.inspector = inspector;
	}

	@Override
	public void afterSingletonsInstantiated() {
		try {
			this.inspector.inspect().warnings().forEach(logger::warn);
		}
		catch (RuntimeException ex) {
			logger.debug("Could not check the Redis settings; skipping the check", ex);
		}
	}

}

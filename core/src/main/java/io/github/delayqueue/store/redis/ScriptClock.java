package io.github.delayqueue.store.redis;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

import io.github.delayqueue.store.redis.ScriptRunner.ScriptCall;
import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.core.script.RedisScript;

/**
 * The clock a store's scripts read "now" from: due times, leases, backoff and the dead
 * set's times all come from it. In production it is the Redis server's clock
 * ({@link #server()}). A test may move time forward with {@link #offsetBy(String)}: the
 * server's clock plus a number of microseconds kept in a Redis key, which only
 * delay-queue-test's clock should write. The scripts of each clock are built once.
 */
public final class ScriptClock {

	// Read before SERVER is built from them.
	private static final String PUBLISH = ScriptSource.read("publish_signal");

	private static final String SPUBLISH = ScriptSource.read("spublish_signal");

	private static final ScriptClock SERVER = new ScriptClock(ScriptSource.read("server_clock"), null);

	private final Map<Script, RedisScript<?>> publishing = new HashMap<>();

	private final Map<Script, RedisScript<?>> sharded = new HashMap<>();

	private final @Nullable String offsetKey;

	private ScriptClock(String clockText, @Nullable String offsetKey) {
		this.offsetKey = offsetKey;
		for (ScriptCodec.Signature<?> signature : ScriptCodecs.signatures()) {
			Script script = signature.script();
			this.publishing.put(script, script.withPrelude(clockText + PUBLISH));
			this.sharded.put(script, script.withPrelude(clockText + SPUBLISH));
		}
	}

	/**
	 * The Redis server's clock ({@code TIME}), shared by every store that uses it.
	 * @return the server's clock
	 */
	public static ScriptClock server() {
		return SERVER;
	}

	/**
	 * The Redis server's clock plus the microseconds stored at a key (none: zero), for
	 * tests on one Redis node: every script call also names that key, so it cannot work
	 * on a Redis Cluster.
	 * @param offsetKey the key holding the offset in microseconds, as an integer string
	 * @return a clock that reads the offset
	 */
	public static ScriptClock offsetBy(String offsetKey) {
		if (offsetKey.isEmpty()) {
			throw new IllegalArgumentException("The clock offset key must not be empty");
		}
		return new ScriptClock(ScriptSource.read("offset_clock"), offsetKey);
	}

	/**
	 * Returns the key holding the offset of this clock.
	 * @return the key, or {@code null} for the server's clock
	 */
	public @Nullable String offsetKey() {
		return this.offsetKey;
	}

	/**
	 * A call of a script on this clock.
	 * @param script the script
	 * @param keyNames the name of each key role of the script
	 * @param args the script's arguments
	 * @param shardedSignals whether the script sends signals with {@code SPUBLISH} rather
	 * than {@code PUBLISH}
	 * @return the call
	 */
	ScriptCall call(Script script, Function<Script.Key, String> keyNames, List<?> args, boolean shardedSignals) {
		List<String> keys = script.keyNames(keyNames);
		if (this.offsetKey != null) {
			keys = new ArrayList<>(keys);
			keys.add(this.offsetKey);
		}
		return new ScriptCall((shardedSignals ? this.sharded : this.publishing).get(script), keys, args);
	}

}

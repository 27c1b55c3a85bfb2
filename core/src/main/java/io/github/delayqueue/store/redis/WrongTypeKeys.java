package io.github.delayqueue.store.redis;

import java.util.ArrayList;
import java.util.List;

import org.springframework.data.redis.connection.DataType;
import org.springframework.data.redis.core.RedisTemplate;

/**
 * Moves aside the keys of a partition that hold the wrong Redis type (written by
 * something else), so that they no longer stall it: each is renamed to
 * {@code <key>:quarantined:<epoch ms>} and kept for inspection.
 */
final class WrongTypeKeys {

	private final RedisTemplate<String, byte[]> redis;

	private final ScriptCalls calls;

	WrongTypeKeys(RedisTemplate<String, byte[]> redis, ScriptCalls calls) {
		this.redis = redis;
		this.calls = calls;
	}

	/**
	 * Whether a failure is Redis refusing a command for a key of the wrong type.
	 * @param ex the failure
	 * @return {@code true} for a WRONGTYPE error
	 */
	static boolean isWrongType(Throwable ex) {
		return ScriptRunner.causeMessageContains(ex, "WRONGTYPE");
	}

	/**
	 * Moves aside the keys of a partition that hold the wrong type.
	 * @param partition the partition (for partition 0, the topic)
	 * @return the keys moved aside, described
	 */
	List<String> quarantine(String partition) {
		List<String> moved = new ArrayList<>();
		this.calls.keys(partition).types().forEach((key, expected) -> {
			DataType actual = this.redis.type(key);
			if (actual != null && actual != DataType.NONE && actual != expected) {
				this.redis.rename(key, key + ":quarantined:" + System.currentTimeMillis());
				moved.add(key + " (" + actual.code() + ", expected " + expected.code() + ")");
			}
		});
		return moved;
	}

	/**
	 * Moves aside a key that should hold a hash and holds another type.
	 * @param key the key
	 * @return whether it was moved
	 */
	boolean quarantineHash(String key) {
		DataType actual = this.redis.type(key);
		if (actual == null || actual == DataType.NONE || actual == DataType.HASH) {
			return false;
		}
		this.redis.rename(key, key + ":quarantined:" + System.currentTimeMillis());
		return true;
	}

}

package io.github.delayqueue.store.redis;

import java.nio.charset.StandardCharsets;

import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.serializer.RedisSerializer;
import org.springframework.data.redis.serializer.SerializationException;

/**
 * Writes script arguments: byte arrays as they are, everything else as its UTF-8 text.
 */
final class ScriptArgumentSerializer implements RedisSerializer<Object> {

	static final ScriptArgumentSerializer INSTANCE = new ScriptArgumentSerializer();

	private ScriptArgumentSerializer() {
	}

	@Override
	public byte[] serialize(@Nullable Object value) {
		if (value == null) {
			throw new SerializationException("Script arguments must not be null");
		}
		if (value instanceof byte[] bytes) {
			return bytes;
		}
		return value.toString().getBytes(StandardCharsets.UTF_8);
	}

	@Override
	public @Nullable Object deserialize(byte @Nullable [] bytes) {
		return bytes;
	}

}

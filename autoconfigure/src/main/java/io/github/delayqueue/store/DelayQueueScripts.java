package io.github.delayqueue.store;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.List;

import org.springframework.core.io.ClassPathResource;
import org.springframework.data.redis.core.script.DefaultRedisScript;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * The Lua scripts of the queue, one per state transition, read from the {@code .lua} files beside
 * this class, each with the helpers of {@code functions.lua} in front.
 */
final class DelayQueueScripts {

	private static final String FUNCTIONS = read("functions");

	final RedisScript<List> send = multi("send");

	final RedisScript<List> promote = multi("promote");

	final RedisScript<List> claim = multi("claim");

	final RedisScript<List> ack = multi("ack");

	final RedisScript<Long> retry = integer("retry");

	final RedisScript<Long> deadLetter = integer("dead_letter");

	final RedisScript<List> expireLeases = multi("expire_leases");

	final RedisScript<Long> release = integer("release");

	final RedisScript<Long> extendLease = integer("extend_lease");

	final RedisScript<Long> cancel = integer("cancel");

	final RedisScript<Long> reschedule = integer("reschedule");

	final RedisScript<List> replay = multi("replay");

	final RedisScript<Long> purgeDead = integer("purge_dead");

	final RedisScript<List> stats = multi("stats");

	final RedisScript<List> page = multi("page");

	final RedisScript<List> inspect = multi("inspect");

	private static RedisScript<List> multi(String name) {
		return load(name, List.class);
	}

	private static RedisScript<Long> integer(String name) {
		return load(name, Long.class);
	}

	private static <T> RedisScript<T> load(String name, Class<T> resultType) {
		DefaultRedisScript<T> script = new DefaultRedisScript<>();
		script.setScriptText(FUNCTIONS + read(name));
		script.setResultType(resultType);
		return script;
	}

	private static String read(String name) {
		try {
			return new ClassPathResource(name + ".lua", DelayQueueScripts.class).getContentAsString(StandardCharsets.UTF_8);
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Cannot read script " + name + ".lua", ex);
		}
	}

}

package io.github.delayqueue.store;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Locale;
import java.util.function.Function;

import org.springframework.core.io.ClassPathResource;
import org.springframework.data.redis.core.script.DefaultRedisScript;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * The Lua scripts of the queue, one per state transition (and three that only read, and
 * one that keeps a topic's number of partitions), each with the keys it takes in the
 * order its {@code .lua} header names them: the one place in Java that knows a script's
 * key order. Each script is read from the {@code .lua} file beside this class with the
 * helpers of {@code functions.lua} in front; a {@link ScriptClock} puts its clock and the
 * way signals are sent in front of those. {@code ScriptHeadersTests} checks every
 * declaration against its file's header.
 */
enum Script {

	SEND(false, Key.MESSAGES, Key.SCHEDULED),

	PROMOTE(false, Key.SCHEDULED, Key.READY, Key.IN_FLIGHT),

	CLAIM(false, Key.READY, Key.IN_FLIGHT, Key.MESSAGES, Key.SCHEDULED, Key.LEASES, Key.CLAIM_RECORD, Key.RATE_WINDOW),

	ACK(false, Key.IN_FLIGHT, Key.MESSAGES, Key.LEASES),

	RETRY(true, Key.IN_FLIGHT, Key.MESSAGES, Key.SCHEDULED, Key.LEASES),

	DEAD_LETTER(true, Key.IN_FLIGHT, Key.MESSAGES, Key.DEAD, Key.DEAD_MESSAGES, Key.DEAD_ERRORS, Key.LEASES),

	EXPIRE_LEASES(false, Key.IN_FLIGHT, Key.MESSAGES, Key.READY, Key.DEAD, Key.DEAD_MESSAGES, Key.DEAD_ERRORS,
			Key.LEASES),

	RELEASE(true, Key.IN_FLIGHT, Key.READY, Key.LEASES),

	EXTEND_LEASE(true, Key.IN_FLIGHT, Key.LEASES),

	CANCEL(true, Key.MESSAGES, Key.SCHEDULED, Key.IN_FLIGHT),

	RESCHEDULE(true, Key.MESSAGES, Key.SCHEDULED, Key.IN_FLIGHT),

	REPLAY(false, Key.DEAD, Key.DEAD_MESSAGES, Key.DEAD_ERRORS, Key.MESSAGES, Key.SCHEDULED),

	PURGE_DEAD(true, Key.DEAD, Key.DEAD_MESSAGES, Key.DEAD_ERRORS),

	STATS(false, Key.MESSAGES, Key.SCHEDULED, Key.READY, Key.IN_FLIGHT, Key.DEAD),

	PAGE(false, Key.STATE_INDEX, Key.STATE_MESSAGES, Key.DEAD_ERRORS, Key.SCHEDULED, Key.IN_FLIGHT),

	INSPECT(false, Key.MESSAGES, Key.SCHEDULED, Key.IN_FLIGHT, Key.DEAD, Key.DEAD_MESSAGES, Key.DEAD_ERRORS),

	PARTITION_COUNT(false, Key.PARTITION_COUNT);

	private final List<Key> keys;

	private final boolean integerReply;

	private final String text;

	Script(boolean integerReply, Key... keys) {
		this.keys = List.of(keys);
		this.integerReply = integerReply;
		this.text = Functions.TEXT + read(fileName());
	}

	/**
	 * @return the name of the script's file, without {@code .lua}
	 */
	String fileName() {
		return name().toLowerCase(Locale.ROOT);
	}

	/**
	 * @return the keys the script takes, in order
	 */
	List<Key> keys() {
		return this.keys;
	}

	/**
	 * Builds the script with a prelude and the helpers in front.
	 * @param prelude the Lua text defining {@code now_us()}, {@code now_ms()} and
	 * {@code signal()}
	 * @return the script, ready to run
	 */
	RedisScript<?> withPrelude(String prelude) {
		String source = prelude + this.text;
		return this.integerReply ? new DefaultRedisScript<>(source, Long.class)
				: new DefaultRedisScript<>(source, List.class);
	}

	/**
	 * Names the script's keys, in order.
	 * @param names the key name of each role
	 * @return the key names
	 */
	List<String> keyNames(Function<Key, String> names) {
		return this.keys.stream().map(names).toList();
	}

	static String read(String name) {
		try {
			return new ClassPathResource(name + ".lua", Script.class).getContentAsString(StandardCharsets.UTF_8);
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Cannot read script " + name + ".lua", ex);
		}
	}

	/** The helpers of {@code functions.lua}, read before the first script is. */
	private static final class Functions {

		static final String TEXT = read("functions");

	}

	/**
	 * A role a key plays in the scripts, named as the {@code .lua} headers name it, with
	 * its type.
	 */
	enum Key {

		MESSAGES("messages", "HASH"),

		SCHEDULED("scheduled", "ZSET"),

		READY("ready", "LIST"),

		IN_FLIGHT("in-flight", "ZSET"),

		LEASES("leases", "HASH"),

		CLAIM_RECORD("claim record", "STRING"),

		DEAD("dead", "ZSET"),

		DEAD_MESSAGES("dead messages", "HASH"),

		DEAD_ERRORS("dead errors", "HASH"),

		/** The index of the state a page is read from. */
		STATE_INDEX("state index", "ZSET or LIST"),

		/** The hash holding the stored messages of the state a page is read from. */
		STATE_MESSAGES("state messages", "HASH"),

		PARTITION_COUNT("partition count", "STRING"),

		/** A rate-limited topic's claims of the last period. */
		RATE_WINDOW("rate window", "ZSET");

		private final String headerName;

		private final String type;

		Key(String headerName, String type) {
			this.headerName = headerName;
			this.type = type;
		}

		/**
		 * @return how a script header names this key and its type, e.g.
		 * {@code in-flight ZSET}
		 */
		String header() {
			return this.headerName + " " + this.type;
		}

	}

}

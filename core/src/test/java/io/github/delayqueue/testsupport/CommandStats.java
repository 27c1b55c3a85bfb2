package io.github.delayqueue.testsupport;

import java.time.Duration;
import java.util.List;
import java.util.Properties;

import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.awaitility.Awaitility.await;

/**
 * What a Redis server has run since it started, read from {@code INFO commandstats}: the
 * script calls (EVALSHA, EVAL and their read-only forms) with the µs spent in them, and
 * the other commands, leaving out those a test makes to look ({@code INFO},
 * {@code PING}).
 *
 * @param scriptCalls the script calls
 * @param scriptMicros the µs Redis spent in script calls
 * @param otherCalls the calls of other commands but {@code INFO} and {@code PING}
 */
public record CommandStats(long scriptCalls, long scriptMicros, long otherCalls) {

	private static final List<String> SCRIPTS = List.of("cmdstat_evalsha", "cmdstat_eval", "cmdstat_evalsha_ro",
			"cmdstat_eval_ro");

	private static final List<String> LOOKS = List.of("cmdstat_info", "cmdstat_ping");

	/**
	 * Reads the server's command statistics.
	 * @param redis a template on the server
	 * @return what the server has run since it started
	 */
	public static CommandStats of(StringRedisTemplate redis) {
		Properties stats = redis
			.execute((RedisCallback<Properties>) (RedisConnection connection) -> connection.serverCommands()
				.info("commandstats"));
		long scriptCalls = 0;
		long scriptMicros = 0;
		long otherCalls = 0;
		if (stats != null) {
			for (String name : stats.stringPropertyNames()) {
				String value = stats.getProperty(name);
				if (SCRIPTS.contains(name)) {
					scriptCalls += field(value, "calls=");
					scriptMicros += field(value, "usec=");
				}
				else if (name.startsWith("cmdstat_") && !LOOKS.contains(name)) {
					otherCalls += field(value, "calls=");
				}
			}
		}
		return new CommandStats(scriptCalls, scriptMicros, otherCalls);
	}

	/**
	 * Counts the script calls the server runs over a span of time, from now.
	 * @param redis a template on the server
	 * @param span how long to count
	 * @return script calls a second over the span
	 */
	public static double scriptCallsPerSecond(StringRedisTemplate redis, Duration span) {
		long before = of(redis).scriptCalls();
		long start = System.nanoTime();
		await().atMost(span.plusSeconds(10)).pollDelay(span).until(() -> true);
		long calls = of(redis).scriptCalls() - before;
		return calls * 1e9 / (System.nanoTime() - start);
	}

	private static long field(String value, String name) {
		int at = value.indexOf(name);
		if (at < 0) {
			return 0;
		}
		at += name.length();
		int end = value.indexOf(',', at);
		return Long.parseLong(value.substring(at, (end < 0) ? value.length() : end));
	}

}

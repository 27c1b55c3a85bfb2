package io.github.delayqueue.benchmarks;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import io.lettuce.core.RedisClient;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanIterator;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;

/**
 * A side connection to the Redis server under test, for what the server itself reports:
 * memory, CPU time and commands executed. Never used by the queues being measured.
 */
final class RedisServer implements AutoCloseable {

	private final RedisClient client;

	private final StatefulRedisConnection<String, String> connection;

	private final RedisCommands<String, String> commands;

	RedisServer(String url) {
		this.client = RedisClient.create(url);
		this.connection = this.client.connect();
		this.commands = this.connection.sync();
	}

	String version() {
		return info("server").get("redis_version");
	}

	void flushAll() {
		this.commands.flushall();
	}

	long usedMemory() {
		return Long.parseLong(info("memory").get("used_memory"));
	}

	/**
	 * @return the server's CPU time so far, user plus system, in microseconds
	 */
	long cpuMicros() {
		Map<String, String> cpu = info("cpu");
		double seconds = Double.parseDouble(cpu.get("used_cpu_user")) + Double.parseDouble(cpu.get("used_cpu_sys"));
		return Math.round(seconds * 1_000_000);
	}

	/**
	 * @return the commands executed so far, commands run by scripts included
	 */
	long commandCalls() {
		long calls = 0;
		for (String stats : info("commandstats").values()) {
			int start = stats.indexOf("calls=") + 6;
			calls += Long.parseLong(stats.substring(start, stats.indexOf(',', start)));
		}
		return calls;
	}

	/**
	 * @return the time Redis spent running scripts so far (EVAL and EVALSHA), in
	 * microseconds
	 */
	long scriptMicros() {
		long micros = 0;
		for (Map.Entry<String, String> entry : info("commandstats").entrySet()) {
			if (entry.getKey().equals("cmdstat_eval") || entry.getKey().equals("cmdstat_evalsha")) {
				int start = entry.getValue().indexOf(",usec=") + 6;
				micros += Long.parseLong(entry.getValue().substring(start, entry.getValue().indexOf(',', start)));
			}
		}
		return micros;
	}

	/**
	 * @return the calls of each command so far, by command name
	 */
	Map<String, Long> callsByCommand() {
		Map<String, Long> calls = new TreeMap<>();
		info("commandstats").forEach((name, stats) -> {
			int start = stats.indexOf("calls=") + 6;
			calls.put(name.substring("cmdstat_".length()),
					Long.parseLong(stats.substring(start, stats.indexOf(',', start))));
		});
		return calls;
	}

	/**
	 * @return the time Redis spent in each command so far, by command name, in
	 * microseconds (Redis 7 counts the commands a script runs too, inside the script's
	 * own time)
	 */
	Map<String, Long> microsByCommand() {
		Map<String, Long> micros = new TreeMap<>();
		info("commandstats").forEach((name, stats) -> {
			int start = stats.indexOf(",usec=") + 6;
			micros.put(name.substring("cmdstat_".length()),
					Long.parseLong(stats.substring(start, stats.indexOf(',', start))));
		});
		return micros;
	}

	/**
	 * @param key a key
	 * @return its members, entries or elements, whatever its type; 0 if it does not exist
	 */
	long size(String key) {
		return switch (this.commands.type(key)) {
			case "zset" -> this.commands.zcard(key);
			case "hash" -> this.commands.hlen(key);
			case "list" -> this.commands.llen(key);
			case "set" -> this.commands.scard(key);
			case "none" -> 0;
			default -> throw new IllegalArgumentException(key + " is a " + this.commands.type(key));
		};
	}

	/**
	 * @param key a hash of numbers
	 * @return the sum of its values; 0 if it does not exist
	 */
	long sumOfHash(String key) {
		long sum = 0;
		for (String value : this.commands.hvals(key)) {
			sum += Long.parseLong(value);
		}
		return sum;
	}

	/**
	 * @return every key with the bytes Redis reports for it, largest first
	 */
	Map<String, Long> memoryByKey() {
		Map<String, Long> sizes = new TreeMap<>();
		ScanIterator<String> keys = ScanIterator.scan(this.commands, ScanArgs.Builder.limit(1000));
		while (keys.hasNext()) {
			String key = keys.next();
			Long bytes = this.commands.memoryUsage(key);
			sizes.put(key + " (" + this.commands.type(key) + ")", (bytes != null) ? bytes : 0);
		}
		Map<String, Long> sorted = new LinkedHashMap<>();
		sizes.entrySet()
			.stream()
			.sorted(Map.Entry.<String, Long>comparingByValue().reversed())
			.forEach((entry) -> sorted.put(entry.getKey(), entry.getValue()));
		return sorted;
	}

	/**
	 * Starts logging every command that runs longer than 1 ms, forgetting earlier ones.
	 */
	void watchSlowCommands() {
		this.commands.configSet("slowlog-log-slower-than", "1000");
		this.commands.configSet("slowlog-max-len", "1024");
		this.commands.slowlogReset();
	}

	/**
	 * @return the longest command since {@link #watchSlowCommands()}, in ms, with its
	 * name; 0 if none took over 1 ms
	 */
	Map<String, Object> slowestCommand() {
		long slowest = 0;
		String name = "";
		for (Object entry : this.commands.slowlogGet(1024)) {
			List<?> fields = (List<?>) entry;
			long micros = ((Number) fields.get(2)).longValue();
			if (micros > slowest) {
				slowest = micros;
				List<?> args = (List<?>) fields.get(3);
				// For a script, its first key tells which one it was.
				name = String.valueOf(args.get(0)) + ((args.size() > 3) ? " " + args.get(3) : "");
			}
		}
		Map<String, Object> result = new LinkedHashMap<>();
		result.put("ms", slowest / 1000.0);
		result.put("command", name);
		result.put("over_1ms", this.commands.slowlogLen());
		return result;
	}

	private Map<String, String> info(String section) {
		Map<String, String> values = new LinkedHashMap<>();
		for (String line : this.commands.info(section).split("\r\n")) {
			int colon = line.indexOf(':');
			if (colon > 0 && !line.startsWith("#")) {
				values.put(line.substring(0, colon), line.substring(colon + 1));
			}
		}
		return values;
	}

	@Override
	public void close() {
		this.connection.close();
		this.client.shutdown();
	}

}

package io.github.delayqueue.benchmarks;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Runs one benchmark scenario against one queue and prints its figures as one line of
 * JSON.
 * {@code --scenario=<name> --queue=delay-queue|redisson --redis-url=redis://host:port},
 * plus the scenario's own options. The Redis server is flushed first: give it a private
 * one ({@code benchmarks/run.sh} does).
 */
public final class BenchmarkMain {

	private BenchmarkMain() {
	}

	public static void main(String[] args) throws Exception {
		Options options = new Options(args);
		String scenario = options.required("scenario");
		QueueClient.Kind kind = QueueClient.Kind.of(options.string("queue", "delay-queue"));
		String redisUrl = options.required("redis-url");
		try (RedisServer server = new RedisServer(redisUrl)) {
			Run run = new Run(options, kind, redisUrl, server);
			if (scenario.equals(CrashScenario.VICTIM)) {
				CrashScenario.victim(run);
				return;
			}
			server.flushAll();
			Map<String, Object> figures = Scenarios.run(scenario, run);
			options.rejectUnused();
			Map<String, Object> line = new LinkedHashMap<>();
			line.put("scenario", scenario);
			line.put("queue", kind.label());
			line.put("redis_version", server.version());
			line.putAll(figures);
			line.put("options", options.used());
			System.out.println(JsonLine.of(line));
		}
		System.exit(0);
	}

}

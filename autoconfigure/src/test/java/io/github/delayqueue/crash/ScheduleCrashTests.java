package io.github.delayqueue.crash;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

import io.github.delayqueue.test.redis.RedisServerProcess;
import io.github.delayqueue.test.redis.TestRedis;
import io.github.delayqueue.testsupport.QueueContexts;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Two instances, each a JVM of its own ({@link LedgerInstance}), declare the same
 * schedule; one is killed with SIGKILL while the ticks go on: no tick is lost, and a tick
 * comes twice only when the killed instance was handling it.
 */
@Tag("crash")
class ScheduleCrashTests {

	private static final long RATE_MILLIS = 300;

	private final List<Process> processes = new ArrayList<>();

	@AfterEach
	void killInstances() {
		this.processes.forEach(Process::destroyForcibly);
	}

	@Test
	void noTickIsLostWhenOneOfTwoInstancesIsKilled() throws Exception {
		Assumptions.assumeTrue(TestRedis.canStartPrivateServer(), "needs a redis-server binary");
		Assumptions.assumeFalse("shipped".equals(System.getProperty(TestRedis.BINARY_PROPERTY)),
				"runs once, in the default execution");
		try (RedisServerProcess redis = TestRedis.startPrivateServer()) {
			Path logs = Files.createDirectories(Path.of("target", "schedule-crash"));
			QueueContexts.runner("observer", redis.springProperties()).run((context) -> {
				StringRedisTemplate ledger = context.getBean(StringRedisTemplate.class);
				start(redis, "survivor", logs);
				Process killed = start(redis, "killed", logs);
				await().atMost(Duration.ofSeconds(60)).until(() -> ledger.opsForList().size(LedgerInstance.LOG) >= 10);
				killed.destroyForcibly().waitFor();
				long before = ledger.opsForList().size(LedgerInstance.LOG);
				await().atMost(Duration.ofSeconds(60))
					.until(() -> ledger.opsForList().size(LedgerInstance.LOG) >= before + 15);
				Map<Long, List<String>> byTick = new TreeMap<>();
				for (String entry : ledger.opsForList().range(LedgerInstance.LOG, 0, -1)) {
					String[] fields = entry.split("\\|");
					byTick
						.computeIfAbsent(Long.parseLong(fields[0].substring("beat~".length())),
								(t) -> new ArrayList<>())
						.add(fields[1]);
				}
				Set<Long> ticks = new TreeSet<>(byTick.keySet());
				long first = ticks.iterator().next();
				long last = ((TreeSet<Long>) ticks).last();
				List<Long> missing = new ArrayList<>();
				for (long tick = first; tick <= last; tick += RATE_MILLIS) {
					if (!ticks.contains(tick)) {
						missing.add(tick);
					}
				}
				assertThat(missing).as("ticks lost, from %d to %d", first, last).isEmpty();
				byTick.forEach((tick, instances) -> {
					if (instances.size() > 1) {
						assertThat(instances).as("tick %d delivered twice", tick).contains("killed");
					}
				});
			});
		}
	}

	private Process start(RedisServerProcess redis, String name, Path logs) throws IOException {
		String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
		List<String> command = List.of(java, "-Xmx160m", "-XX:TieredStopAtLevel=1", "-cp",
				System.getProperty("java.class.path"), LedgerInstance.class.getName(),
				"--spring.main.web-application-type=none", "--spring.data.redis.host=" + redis.host(),
				"--spring.data.redis.port=" + redis.port(), "--delay-queue.key-prefix=schedule-crash",
				"--delay-queue.listener.visibility-timeout=2s", "--crash.instance=" + name,
				"--delay-queue.schedules.beat.topic=" + LedgerInstance.TOPIC,
				"--delay-queue.schedules.beat.fixed-rate=" + RATE_MILLIS + "ms", "--logging.level.root=WARN");
		File log = logs.resolve(name + ".log").toFile();
		Process process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log).start();
		this.processes.add(process);
		return process;
	}

}

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
import java.util.concurrent.Callable;

import io.github.delayqueue.test.redis.RedisServerProcess;
import io.github.delayqueue.test.redis.TestRedis;
import io.github.delayqueue.testsupport.QueueContexts;
import org.awaitility.core.ConditionTimeoutException;
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
				// A child JVM's start is slow while other test JVMs load both cores: it
				// is
				// waited for apart, and a timeout says which instance did not come and
				// why.
				awaitOrExplain(Duration.ofSeconds(120), logs, "both instances ready",
						() -> ledger.opsForSet().size(LedgerInstance.READY) >= 2);
				awaitOrExplain(Duration.ofSeconds(60), logs, "10 ticks",
						() -> ledger.opsForList().size(LedgerInstance.LOG) >= 10);
				killed.destroyForcibly().waitFor();
				long before = ledger.opsForList().size(LedgerInstance.LOG);
				awaitOrExplain(Duration.ofSeconds(60), logs, "15 ticks after the kill",
						() -> ledger.opsForList().size(LedgerInstance.LOG) >= before + 15);
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

	private void awaitOrExplain(Duration timeout, Path logs, String what, Callable<Boolean> condition)
			throws IOException {
		try {
			await().atMost(timeout).until(condition);
		}
		catch (ConditionTimeoutException ex) {
			StringBuilder explanation = new StringBuilder("No " + what + " within " + timeout + ";");
			for (String name : List.of("survivor", "killed")) {
				List<String> lines = Files.readAllLines(logs.resolve(name + ".log"));
				explanation.append("\n--- last lines of ")
					.append(name)
					.append(".log:\n")
					.append(String.join("\n", lines.subList(Math.max(0, lines.size() - 30), lines.size())));
			}
			throw new AssertionError(explanation.toString(), ex);
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

package io.github.delayqueue.crash;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;

import io.github.delayqueue.producer.DelayMessage;
import io.github.delayqueue.producer.DelayQueueTemplate;
import io.github.delayqueue.store.redis.TopicKeys;
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
 * Three application instances as separate JVMs and one producer, against a Redis that
 * keeps an append-only file with {@code appendfsync always}; one instance and then Redis
 * are killed with SIGKILL mid-run and started again. Every message must be handled at
 * least once, nothing may be left pending or dead, and every message handled twice must
 * be explained by a kill.
 *
 * <p>
 * Runs in the default test execution only (not again on the second Redis version). System
 * properties {@code crash.messages} and {@code crash.max-delay-ms} make it longer (the
 * {@code soak} Maven profile).
 */
@Tag("crash")
class CrashRecoveryTests {

	private static final String PREFIX = "crash";

	private final int messages = Integer.getInteger("crash.messages", 20_000);

	private final int maxDelayMillis = Integer.getInteger("crash.max-delay-ms", 10_000);

	private final List<Process> instances = new ArrayList<>();

	@AfterEach
	void killInstances() {
		this.instances.forEach(Process::destroyForcibly);
	}

	@Test
	void noMessageIsLostWhenAnInstanceAndRedisAreKilledMidRun() throws Exception {
		Assumptions.assumeTrue(TestRedis.canStartPrivateServer(), "needs a redis-server binary");
		Assumptions.assumeFalse("shipped".equals(System.getProperty(TestRedis.BINARY_PROPERTY)),
				"runs once, in the default execution");
		long started = System.currentTimeMillis();
		try (RedisServerProcess redis = TestRedis.startPrivateServer("--appendonly", "yes", "--appendfsync",
				"always")) {
			Path logs = Files.createDirectories(Path.of("target", "crash"));
			Process first = startInstance(redis, "i1", logs);
			Process second = startInstance(redis, "i2-killed", logs);
			startInstance(redis, "i3", logs);
			QueueContexts.runner(PREFIX, redis.springProperties())
				.withPropertyValues("spring.data.redis.timeout=2s")
				.run((context) -> {
					DelayQueueTemplate template = context.getBean(DelayQueueTemplate.class);
					StringRedisTemplate ledger = context.getBean(StringRedisTemplate.class);
					Set<String> sent = send(template);
					await().atMost(Duration.ofMillis(this.maxDelayMillis).plusSeconds(60))
						.ignoreExceptions()
						.until(() -> ledger.opsForHash().size(LedgerInstance.COUNTS) >= this.messages / 10);

					second.destroyForcibly().waitFor();
					startInstance(redis, "i2-restarted", logs);
					long redisKilledAt = System.currentTimeMillis();
					redis.stop();
					redis.start();
					long redisBackAt = System.currentTimeMillis();

					await().atMost(Duration.ofMillis(this.maxDelayMillis).plusSeconds(180))
						.pollInterval(Duration.ofMillis(500))
						.ignoreExceptions()
						.until(() -> ledger.opsForHash().size(LedgerInstance.COUNTS) >= sent.size()
								&& pending(ledger).isEmpty());
					Report report = report(ledger, sent, redisKilledAt, redisBackAt);
					String summary = "crash: sent=" + sent.size() + " handled=" + report.handled + " lost="
							+ report.lost + " duplicates=" + report.duplicates + " (explained=" + report.explained
							+ ") instance-kills=1 redis-kills=1 elapsed="
							+ (System.currentTimeMillis() - started) / 1000 + "s";
					System.out.println(summary);
					Files.writeString(logs.resolve("summary.txt"), summary + System.lineSeparator());
					assertThat(report.lost).isZero();
					assertThat(report.explained).isEqualTo(report.duplicates);
					assertThat(pending(ledger)).isEmpty();
					assertThat(ledger.opsForZSet().zCard(new TopicKeys(PREFIX, LedgerInstance.TOPIC).dead())).isZero();
					assertThat(first.isAlive()).isTrue();
				});
		}
	}

	private Set<String> send(DelayQueueTemplate template) {
		Random random = new Random(7);
		Set<String> ids = new HashSet<>();
		List<DelayMessage> batch = new ArrayList<>();
		for (int i = 0; i < this.messages; i++) {
			String id = "c" + i;
			ids.add(id);
			batch.add(DelayMessage.builder(LedgerInstance.TOPIC, "payload " + i)
				.id(id)
				.delay(Duration.ofMillis(random.nextInt(this.maxDelayMillis)))
				.build());
			if (batch.size() == 500 || i == this.messages - 1) {
				List<DelayMessage> toSend = List.copyOf(batch);
				// Sends are idempotent by id: retrying a failed batch never stores a
				// message twice.
				await().atMost(Duration.ofSeconds(60)).ignoreExceptions().until(() -> {
					template.sendAll(toSend);
					return true;
				});
				batch.clear();
			}
		}
		return ids;
	}

	private static List<String> pending(StringRedisTemplate redis) {
		TopicKeys keys = new TopicKeys(PREFIX, LedgerInstance.TOPIC);
		return List.of(keys.messages(), keys.scheduled(), keys.ready(), keys.inFlight())
			.stream()
			.filter((key) -> Boolean.TRUE.equals(redis.hasKey(key)))
			.toList();
	}

	private static Report report(StringRedisTemplate ledger, Set<String> sent, long redisKilledAt, long redisBackAt) {
		Map<String, List<String[]>> deliveries = new HashMap<>();
		for (String entry : ledger.opsForList().range(LedgerInstance.LOG, 0, -1)) {
			String[] fields = entry.split("\\|");
			deliveries.computeIfAbsent(fields[0], (id) -> new ArrayList<>()).add(fields);
		}
		int lost = 0;
		int duplicates = 0;
		int explained = 0;
		for (String id : sent) {
			List<String[]> handled = deliveries.getOrDefault(id, List.of());
			if (handled.isEmpty()) {
				lost++;
			}
			else if (handled.size() > 1) {
				duplicates++;
				// A kill explains it: a delivery to the killed instance, or one while
				// Redis was down
				// or just coming back (the acknowledgement could not be stored).
				boolean byKill = handled.stream()
					.anyMatch((fields) -> fields[1].equals("i2-killed")
							|| (Long.parseLong(fields[3]) >= redisKilledAt - 5_000
									&& Long.parseLong(fields[3]) <= redisBackAt + 5_000));
				explained += byKill ? 1 : 0;
			}
		}
		return new Report(deliveries.size(), lost, duplicates, explained);
	}

	private Process startInstance(RedisServerProcess redis, String name, Path logs) throws IOException {
		String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
		List<String> command = new ArrayList<>(List.of(java, "-Xmx160m", "-XX:TieredStopAtLevel=1", "-cp",
				System.getProperty("java.class.path"), LedgerInstance.class.getName(),
				"--spring.main.web-application-type=none", "--spring.data.redis.host=" + redis.host(),
				"--spring.data.redis.port=" + redis.port(), "--spring.data.redis.timeout=2s",
				"--delay-queue.key-prefix=" + PREFIX, "--delay-queue.listener.visibility-timeout=3s",
				"--delay-queue.broker.max-sleep=1s", "--delay-queue.listener.idle-check-interval=1s",
				"--crash.instance=" + name, "--logging.level.root=WARN"));
		File log = logs.resolve(name + ".log").toFile();
		Process process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log).start();
		this.instances.add(process);
		return process;
	}

	private record Report(int handled, int lost, int duplicates, int explained) {
	}

}

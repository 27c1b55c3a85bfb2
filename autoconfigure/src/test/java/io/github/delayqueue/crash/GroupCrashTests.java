package io.github.delayqueue.crash;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

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
 * An instance (a JVM of its own, {@link LedgerInstance}) holds the only slot of every
 * group of a topic with {@code group-concurrency: 1}, its handlers stuck, while a second
 * instance is up; the first is killed with SIGKILL. The second must handle nothing of
 * those groups while the first holds their slots, take their messages once the leases
 * expire, never two of a group at once, and handle every message.
 *
 * <p>
 * Runs in the default test execution only (not again on the second Redis version).
 */
@Tag("crash")
class GroupCrashTests {

	private static final String PREFIX = "group-crash";

	private static final int GROUPS = 4;

	private static final int PER_GROUP = 6;

	private final List<Process> instances = new ArrayList<>();

	@AfterEach
	void killInstances() {
		this.instances.forEach(Process::destroyForcibly);
	}

	@Test
	void anInstanceKilledWhileHoldingTheSlotsOfGroupsHandsThemToAnotherAfterItsLeasesNeverTwoOfAGroupAtOnce()
			throws Exception {
		Assumptions.assumeTrue(TestRedis.canStartPrivateServer(), "needs a redis-server binary");
		Assumptions.assumeFalse("shipped".equals(System.getProperty(TestRedis.BINARY_PROPERTY)),
				"runs once, in the default execution");
		long started = System.currentTimeMillis();
		try (RedisServerProcess redis = TestRedis.startPrivateServer()) {
			Path logs = Files.createDirectories(Path.of("target", "group-crash"));
			QueueContexts.runner(PREFIX, redis.springProperties()).run((context) -> {
				DelayQueueTemplate template = context.getBean(DelayQueueTemplate.class);
				StringRedisTemplate ledger = context.getBean(StringRedisTemplate.class);
				// Its handlers are stuck far longer than the test: it holds what it
				// takes.
				Process holder = startInstance(redis, "holder-killed", logs, 120_000);
				await().atMost(Duration.ofSeconds(60))
					.until(() -> ledger.opsForSet().isMember(LedgerInstance.READY, "holder-killed"));
				Set<String> sent = send(template);
				await().atMost(Duration.ofSeconds(20)).until(() -> starts(ledger, "holder-killed") == GROUPS);

				startInstance(redis, "taker", logs, 20);
				await().atMost(Duration.ofSeconds(60))
					.until(() -> ledger.opsForSet().isMember(LedgerInstance.READY, "taker"));
				// Two idle checks of the taker: while the holder is alive, every group's
				// slot is taken.
				await().during(Duration.ofSeconds(2))
					.atMost(Duration.ofSeconds(3))
					.until(() -> starts(ledger, "taker") == 0 && starts(ledger, "holder-killed") == GROUPS);

				holder.destroyForcibly().waitFor();
				long killedAt = System.currentTimeMillis();
				await().atMost(Duration.ofSeconds(30))
					.pollInterval(Duration.ofMillis(200))
					.until(() -> ended(ledger).containsAll(sent));

				List<Handling> handlings = handlings(ledger, killedAt);
				String summary = "group-crash: sent=" + sent.size() + " handled=" + ended(ledger).size() + " handlings="
						+ handlings.size() + " taken after the kill in "
						+ (handlings.stream()
							.filter((handling) -> handling.instance().equals("taker"))
							.mapToLong(Handling::start)
							.min()
							.orElse(-1) - killedAt)
						+ " ms, elapsed=" + (System.currentTimeMillis() - started) / 1000 + "s";
				System.out.println(summary);
				Files.writeString(logs.resolve("summary.txt"), summary + System.lineSeparator());
				Map<String, List<Handling>> byGroup = new TreeMap<>();
				handlings.forEach((handling) -> byGroup.computeIfAbsent(handling.group(), (any) -> new ArrayList<>())
					.add(handling));
				assertThat(byGroup).hasSize(GROUPS);
				byGroup.forEach((group, ofGroup) -> {
					ofGroup.sort(Comparator.comparingLong(Handling::start));
					for (int i = 1; i < ofGroup.size(); i++) {
						assertThat(ofGroup.get(i).start())
							.as("group %s: %s started before %s ended", group, ofGroup.get(i), ofGroup.get(i - 1))
							.isGreaterThanOrEqualTo(ofGroup.get(i - 1).end());
					}
					assertThat(ofGroup.get(0).instance()).as("group %s: first held by the instance killed", group)
						.isEqualTo("holder-killed");
					assertThat(ofGroup).as("group %s: handled once each, the one held again", group)
						.hasSize(PER_GROUP + 1);
				});
				TopicKeys keys = new TopicKeys(PREFIX, LedgerInstance.GROUP_TOPIC);
				await().atMost(Duration.ofSeconds(5))
					.untilAsserted(() -> assertThat(List.of(keys.messages(), keys.inFlight(), keys.groupReady(),
							keys.groupSlots(), keys.groupRotation()))
						.as("no message left, no group slot taken")
						.noneMatch((key) -> Boolean.TRUE.equals(ledger.hasKey(key))));
			});
		}
	}

	private Set<String> send(DelayQueueTemplate template) {
		Set<String> ids = new HashSet<>();
		List<DelayMessage> messages = new ArrayList<>();
		for (int i = 0; i < PER_GROUP; i++) {
			for (int group = 0; group < GROUPS; group++) {
				String id = "g" + group + "-" + i;
				ids.add(id);
				messages.add(DelayMessage.builder(LedgerInstance.GROUP_TOPIC, "payload " + id)
					.id(id)
					.group("tenant-" + group)
					.build());
			}
		}
		template.sendAll(messages);
		return ids;
	}

	private static long starts(StringRedisTemplate ledger, String instance) {
		return ledger.opsForList()
			.range(LedgerInstance.GROUP_LOG, 0, -1)
			.stream()
			.filter((entry) -> entry.startsWith("start|") && entry.split("\\|")[3].equals(instance))
			.count();
	}

	private static Set<String> ended(StringRedisTemplate ledger) {
		Set<String> ids = new HashSet<>();
		for (String entry : ledger.opsForList().range(LedgerInstance.GROUP_LOG, 0, -1)) {
			String[] fields = entry.split("\\|");
			if (fields[0].equals("end")) {
				ids.add(fields[1]);
			}
		}
		return ids;
	}

	/**
	 * Each handling from its start to its end; one the instance was killed in ends at the
	 * kill.
	 */
	private static List<Handling> handlings(StringRedisTemplate ledger, long killedAt) {
		Map<String, long[]> times = new TreeMap<>();
		Map<String, String[]> starts = new TreeMap<>();
		for (String entry : ledger.opsForList().range(LedgerInstance.GROUP_LOG, 0, -1)) {
			String[] fields = entry.split("\\|");
			String key = fields[1] + "|" + fields[3] + "|" + fields[4];
			long[] interval = times.computeIfAbsent(key, (any) -> new long[] { -1, killedAt });
			if (fields[0].equals("start")) {
				interval[0] = Long.parseLong(fields[5]);
				starts.put(key, fields);
			}
			else {
				interval[1] = Long.parseLong(fields[5]);
			}
		}
		List<Handling> handlings = new ArrayList<>();
		starts.forEach((key, fields) -> handlings
			.add(new Handling(fields[1], fields[2], fields[3], times.get(key)[0], times.get(key)[1])));
		return handlings;
	}

	private Process startInstance(RedisServerProcess redis, String name, Path logs, long handlerMillis)
			throws IOException {
		String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
		List<String> command = new ArrayList<>(List.of(java, "-Xmx160m", "-XX:TieredStopAtLevel=1", "-cp",
				System.getProperty("java.class.path"), LedgerInstance.class.getName(),
				"--spring.main.web-application-type=none", "--spring.data.redis.host=" + redis.host(),
				"--spring.data.redis.port=" + redis.port(), "--delay-queue.key-prefix=" + PREFIX,
				"--delay-queue.listener.visibility-timeout=3s", "--delay-queue.broker.max-sleep=1s",
				"--delay-queue.listener.idle-check-interval=1s",
				"--delay-queue.topics." + LedgerInstance.GROUP_TOPIC + ".group-concurrency=1",
				"--crash.instance=" + name, "--crash.group-handler-ms=" + handlerMillis, "--logging.level.root=WARN"));
		File log = logs.resolve(name + ".log").toFile();
		Process process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log).start();
		this.instances.add(process);
		return process;
	}

	/**
	 * One handling of a message.
	 *
	 * @param id the message
	 * @param group its group
	 * @param instance the instance that handled it
	 * @param start when it started (epoch ms)
	 * @param end when it ended, or the instance was killed
	 */
	private record Handling(String id, String group, String instance, long start, long end) {
	}

}

package io.github.delayqueue.benchmarks;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import io.github.delayqueue.test.redis.TestRedis;
import io.github.delayqueue.test.redis.TestRedisCluster;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.as;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.InstanceOfAssertFactories.INTEGER;
import static org.assertj.core.api.InstanceOfAssertFactories.MAP;

/**
 * Each scenario runs end to end on a tiny scale, so the benchmarks never rot. Speed is
 * not checked here: {@code benchmarks/run.sh} measures it.
 */
class ScenariosSmokeTests {

	private final String redisUrl = TestRedis.shared().url();

	@Test
	void enqueueSendsEveryMessageOneByOne() throws Exception {
		Map<String, Object> result = run("enqueue", "delay-queue", "--messages=2000", "--warm-up-messages=200");
		assertThat(result).containsEntry("messages", 2000).containsKey("msg_per_s");
	}

	@Test
	void enqueueBatchSendsEveryMessageInBatches() throws Exception {
		Map<String, Object> result = run("enqueue-batch", "delay-queue", "--messages=2000", "--warm-up-messages=200");
		assertThat(result).containsEntry("batch", 100).containsKey("msg_per_s");
	}

	@Test
	void drainDeliversEveryMessageOnce() throws Exception {
		Map<String, Object> result = run("drain", "delay-queue", "--messages=3000", "--warm-up-messages=300",
				"--due-in=2s");
		assertThat(result).containsEntry("delivered", 3000L).containsEntry("duplicates", 0L);
	}

	@Test
	void latenessDeliversEveryMessageNeverEarly() throws Exception {
		Map<String, Object> result = run("lateness", "delay-queue", "--rate=200", "--duration=2s", "--warm-up=1s");
		assertThat(result).containsEntry("delivered", 400L)
			.containsEntry("lost", 0L)
			.containsEntry("duplicates", 0L)
			.containsEntry("early", 0L);
	}

	@Test
	void memoryReportsTheBytesOfEachKey() throws Exception {
		Map<String, Object> result = run("memory", "delay-queue", "--messages=1000");
		assertThat(result).containsKeys("bytes_per_msg", "bytes_per_msg_by_key");
	}

	@Test
	@SuppressWarnings("unchecked")
	void topicsReportsThreadsIdleCostLatenessAndStopTime() throws Exception {
		Map<String, Object> result = run("topics", "delay-queue", "--topics=5", "--idle=2s", "--settle=0s",
				"--due-in=1s");
		assertThat((Map<String, Object>) result.get("threads")).containsKeys("no_topics", "with_topics", "difference");
		assertThat((Map<String, Object>) result.get("idle")).containsEntry("topics", 5)
			.containsKey("commands_per_s_per_topic");
		assertThat((Map<String, Object>) result.get("lateness")).containsEntry("delivered", 5L)
			.containsEntry("early", 0L);
		assertThat((Map<String, Object>) result.get("lateness_one_topic")).containsEntry("delivered", 1L);
		assertThat((Map<String, Object>) result.get("stop_ms")).containsKeys("no_topics", "one_topic", "with_topics");
	}

	@Test
	@SuppressWarnings("unchecked")
	void dashboardTimesEachReadOfLargeTopics() throws Exception {
		Map<String, Object> result = run("dashboard", "delay-queue", "--messages=12000", "--repeats=3");
		assertThat(result).containsEntry("messages_per_topic", 12000);
		assertThat((Map<String, Object>) result.get("ms")).containsKeys("overview", "redis_panel",
				"scheduled_last_page", "ready_last_page", "partitioned_page_500", "partitioned_message_by_id");
	}

	@Test
	@SuppressWarnings("unchecked")
	void groupsDrainsEachBurstBesideTheSmallGroupsAndLosesNothing() throws Exception {
		Map<String, Object> result = run("groups", "delay-queue", "--messages=2000", "--warm-up-messages=200",
				"--due-in=600ms", "--small-lead=300ms", "--small-groups=10", "--small-rate=20");
		assertThat(result).containsEntry("lost", 0L).containsEntry("duplicates", 0L).containsEntry("early", 0L);
		for (String phase : List.of("grouped", "fifo", "one_group_drain", "ungrouped_drain")) {
			assertThat((Map<String, Object>) result.get(phase)).as(phase)
				.containsEntry("burst_delivered", 2000L)
				.containsKey("drain_per_s");
		}
		for (String phase : List.of("grouped", "fifo")) {
			assertThat((Map<String, Object>) result.get(phase)).as(phase)
				.containsKeys("small_p50_ms", "small_p99_ms", "small_max_ms")
				.extractingByKey("small_sent", as(INTEGER))
				.isPositive();
		}
	}

	@Test
	@SuppressWarnings("unchecked")
	void groupsLimitHandlesEachGroupsMessagesOneAtATimeInDueOrderAndLosesNothing() throws Exception {
		Map<String, Object> result = run("groups-limit", "delay-queue", "--groups=50", "--per-group=6",
				"--warm-up-groups=10", "--wide-groups=200", "--wide-per-group=3", "--due-in=600ms");
		assertThat(result).containsEntry("lost", 0L)
			.containsEntry("duplicates", 0L)
			.containsEntry("early", 0L)
			.containsEntry("limit_most_at_once", 1)
			.containsEntry("limit_order_violations", 0L)
			.containsEntry("wide_most_at_once", 1)
			.containsEntry("wide_order_violations", 0L)
			.containsKeys("limit_drain_per_s", "no_limit_drain_per_s", "limit_redis_cpu_us_per_msg",
					"wide_redis_cpu_us_per_msg", "wide_bytes_per_group");
		for (String phase : List.of("limit", "no_limit", "wide", "wide_fifo")) {
			assertThat((Map<String, Object>) result.get(phase)).as(phase).containsEntry("slots_taken_after", 0L);
		}
		assertThat((Map<String, Object>) result.get("wide")).containsEntry("delivered", 600L)
			.extractingByKey("ready_counts", as(MAP))
			.containsEntry("gq", 600L)
			.containsEntry("gn", 200L);
	}

	@Test
	void redissonHasNoGroups() throws Exception {
		assertThat(run("groups", "redisson")).containsEntry("supported", false);
	}

	@Test
	void redissonHasNoListenerTopics() throws Exception {
		assertThat(run("topics", "redisson")).containsEntry("supported", false);
	}

	@Test
	void redissonDeliversThroughItsDelayedQueueToo() throws Exception {
		Map<String, Object> result = run("lateness", "redisson", "--rate=200", "--duration=2s", "--warm-up=1s");
		assertThat(result).containsEntry("delivered", 400L).containsEntry("lost", 0L);
	}

	@Test
	void redissonHasNoBatchSend() throws Exception {
		assertThat(run("enqueue-batch", "redisson")).containsEntry("supported", false);
	}

	@Test
	@SuppressWarnings("unchecked")
	void theClusterScenarioSpreadsThreeTopicsAndThreePartitionsOverThreePrimaries() throws Exception {
		Assumptions.assumeTrue(TestRedis.canStartPrivateServer(), "no redis-server binary to start a cluster with");
		try (TestRedisCluster cluster = TestRedisCluster.start(3, 0, Duration.ofSeconds(2))) {
			String nodes = String.join(",",
					cluster.primaries().stream().map((node) -> node.host() + ":" + node.port()).toList());
			Map<String, Object> result = run("cluster", "delay-queue", "--cluster-nodes=" + nodes, "--rate=100",
					"--duration=1s", "--warm-up=1s");
			assertThat((Map<String, Object>) result.get("1_topic")).containsEntry("delivered", 100L);
			for (String layout : List.of("1_topic_3_partitions", "3_topics")) {
				Map<String, Object> spread = (Map<String, Object>) result.get(layout);
				assertThat(spread).as(layout).containsEntry("delivered", 100L).containsEntry("lost", 0L);
				for (int primary = 1; primary <= 3; primary++) {
					assertThat((Long) spread.get("primary_" + primary + "_commands")).as(layout).isPositive();
				}
			}
		}
	}

	private Map<String, Object> run(String scenario, String queue, String... options) throws Exception {
		String[] args = new String[options.length + 3];
		args[0] = "--scenario=" + scenario;
		args[1] = "--queue=" + queue;
		args[2] = "--redis-url=" + this.redisUrl;
		System.arraycopy(options, 0, args, 3, options.length);
		Options parsed = new Options(args);
		parsed.required("scenario");
		parsed.string("queue", "delay-queue");
		parsed.required("redis-url");
		try (RedisServer server = new RedisServer(this.redisUrl)) {
			server.flushAll();
			Map<String, Object> result = Scenarios.run(scenario,
					new Run(parsed, QueueClient.Kind.of(queue), this.redisUrl, server));
			parsed.rejectUnused();
			return result;
		}
	}

}

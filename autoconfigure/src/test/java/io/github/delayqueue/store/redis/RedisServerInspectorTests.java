package io.github.delayqueue.store.redis;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;

import io.github.delayqueue.store.ServerReport;
import io.github.delayqueue.store.ServerReport.Primary;
import io.github.delayqueue.test.redis.RedisServerProcess;
import io.github.delayqueue.test.redis.TestRedis;
import io.github.delayqueue.test.redis.TestRedisSentinel;
import io.github.delayqueue.testsupport.QueueContexts;
import io.github.delayqueue.testsupport.RedisVersionDependent;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.RedisConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * What the Redis panel and the startup check read of the servers: the mode, each
 * primary's version, replicas, memory and persistence, and the warnings their settings
 * call for, on a private {@code redis-server} and behind Sentinel. The Cluster case is in
 * {@code DashboardClusterTests}.
 */
@RedisVersionDependent
class RedisServerInspectorTests {

	@BeforeEach
	void needsRedisServer() {
		assumeTrue(TestRedis.canStartPrivateServer(), "needs a redis-server binary");
	}

	@Test
	void aStandaloneServerIsDescribedWithItsVersionAddressAndPersistence() throws Exception {
		try (RedisServerProcess redis = TestRedis.startPrivateServer()) {
			redis.command("CONFIG", "SET", "save", "");
			ServerReport withoutPersistence = inspect(redis.springProperties());
			assertThat(withoutPersistence.mode()).isEqualTo("standalone");
			assertThat(withoutPersistence.primaries()).singleElement().satisfies((primary) -> {
				assertThat(primary.address()).endsWith(":" + redis.port());
				assertThat(primary.version()).isEqualTo(redis.version());
				assertThat(primary.usedMemoryBytes()).isPositive();
				assertThat(primary.maxMemoryBytes()).isZero();
				assertThat(primary.evictionPolicy()).isEqualTo("noeviction");
				assertThat(primary.persistence()).isEqualTo("none");
				assertThat(primary.error()).isNull();
			});
			assertThat(withoutPersistence.warnings()).singleElement().asString().startsWith("Redis persistence is off");
			redis.command("CONFIG", "SET", "save", "900 1");
			ServerReport snapshotsOnly = inspect(redis.springProperties());
			assertThat(snapshotsOnly.primaries()).extracting(Primary::persistence).containsExactly("RDB");
			assertThat(snapshotsOnly.warnings()).singleElement()
				.asString()
				.startsWith("Redis AOF is off (only RDB snapshots)");
			redis.command("CONFIG", "SET", "appendonly", "yes");
			ServerReport persisting = inspect(redis.springProperties());
			assertThat(persisting.primaries()).extracting(Primary::persistence).containsExactly("AOF and RDB");
			assertThat(persisting.warnings()).isEmpty();
		}
	}

	@Test
	void anEvictionPolicyAndMemoryNearItsLimitAreWarnedOf() throws Exception {
		try (RedisServerProcess redis = TestRedis.startPrivateServer()) {
			redis.command("CONFIG", "SET", "save", "900 1");
			redis.command("CONFIG", "SET", "appendonly", "yes");
			redis.command("CONFIG", "SET", "maxmemory-policy", "allkeys-lru");
			// Turning AOF on starts a rewrite whose buffers count as used memory: measure
			// after it.
			Awaitility.await()
				.atMost(Duration.ofSeconds(30))
				.until(() -> redis.command("INFO", "persistence").contains("aof_rewrite_in_progress:0")
						&& redis.command("INFO", "persistence").contains("aof_rewrite_scheduled:0"));
			long used = inspect(redis.springProperties()).primaries().get(0).usedMemoryBytes();
			redis.command("CONFIG", "SET", "maxmemory", String.valueOf(used + used / 20));
			ServerReport report = inspect(redis.springProperties());
			assertThat(report.primaries().get(0).evictionPolicy()).isEqualTo("allkeys-lru");
			assertThat(report.warnings()).hasSize(2);
			assertThat(report.warnings().get(0)).startsWith("Redis maxmemory-policy is 'allkeys-lru'");
			// 95% full when measured; the second context's first calls (and Redis' own
			// buffers) add some.
			assertThat(report.warnings().get(1)).matches("Redis memory is (9\\d|\\d{3,})% full .*");
		}
	}

	@Test
	void behindSentinelTheModeIsSentinelAndThePrimaryCountsItsReplica() {
		try (TestRedisSentinel redis = TestRedisSentinel.start(1, 1, Duration.ofSeconds(5))) {
			ServerReport report = inspect(redis.springProperties());
			assertThat(report.mode()).isEqualTo("sentinel");
			assertThat(report.primaries()).singleElement().satisfies((primary) -> {
				assertThat(primary.address()).endsWith(":" + redis.firstPrimary().port());
				assertThat(primary.replicas()).isEqualTo(1);
			});
		}
	}

	private static ServerReport inspect(String... springProperties) {
		AtomicReference<ServerReport> report = new AtomicReference<>();
		QueueContexts.runner(QueueContexts.uniquePrefix(), springProperties)
			.run((context) -> report
				.set(new RedisServerInspector(context.getBean(RedisConnectionFactory.class)).inspect()));
		return report.get();
	}

}

package io.github.delayqueue.store.redis;

import java.time.Duration;

import io.github.delayqueue.store.ServerInspector;
import io.github.delayqueue.test.redis.RedisServerProcess;
import io.github.delayqueue.test.redis.TestRedis;
import io.github.delayqueue.testsupport.QueueContexts;
import io.github.delayqueue.testsupport.RedisVersionDependent;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The startup check warns about Redis settings that lose messages: eviction, AOF off
 * (what changed since the last RDB snapshot), no persistence at all (everything). The
 * check reads Redis with a patient inspector here: with the default 2 seconds, a loaded
 * machine (the whole build on two cores) sometimes let the first read time out, and the
 * check then rightly stays quiet.
 */
@ExtendWith(OutputCaptureExtension.class)
@RedisVersionDependent
class RedisSettingsCheckTests {

	@Test
	void warnsWhenRedisMayEvictKeysOrKeepsNothingOnDisk(CapturedOutput output) throws Exception {
		Assumptions.assumeTrue(TestRedis.canStartPrivateServer(), "needs a redis-server binary");
		try (RedisServerProcess redis = TestRedis.startPrivateServer()) {
			runner(redis).run((context) -> {
				StringRedisTemplate template = context.getBean(StringRedisTemplate.class);
				template.execute((RedisCallback<Object>) (connection) -> {
					connection.serverCommands().setConfig("maxmemory-policy", "allkeys-lru");
					return null;
				});
			});
			runner(redis).run((context) -> assertThat(context).hasNotFailed());
			assertThat(output).contains("Redis maxmemory-policy is 'allkeys-lru'").contains("Redis persistence is off");
		}
	}

	@Test
	void staysQuietWhenRedisPersistsAndNeverEvicts(CapturedOutput output) throws Exception {
		Assumptions.assumeTrue(TestRedis.canStartPrivateServer(), "needs a redis-server binary");
		try (RedisServerProcess redis = TestRedis.startPrivateServer()) {
			runner(redis).run((context) -> {
				StringRedisTemplate template = context.getBean(StringRedisTemplate.class);
				template.execute((RedisCallback<Object>) (connection) -> {
					connection.serverCommands().setConfig("save", "900 1");
					connection.serverCommands().setConfig("appendonly", "yes");
					return null;
				});
			});
			int before = output.getAll().length();
			runner(redis).run((context) -> assertThat(context).hasNotFailed());
			String after = output.getAll().substring(before);
			assertThat(after).doesNotContain("maxmemory-policy")
				.doesNotContain("persistence is off")
				.doesNotContain("AOF is off");
		}
	}

	@Test
	void warnsOnceWithRedisDefaultsThatACrashLosesWhatChangedSinceTheLastSnapshot(CapturedOutput output)
			throws Exception {
		Assumptions.assumeTrue(TestRedis.canStartPrivateServer(), "needs a redis-server binary");
		try (RedisServerProcess redis = TestRedis.startPrivateServer("--appendonly", "no", "--save", "3600", "1")) {
			int before = output.getAll().length();
			runner(redis).run((context) -> {
				assertThat(context).hasNotFailed();
				// What the dashboard's Redis panel shows, under the primary.
				assertThat(context.getBean(ServerInspector.class).inspect().warnings()).singleElement()
					.asString()
					.startsWith("Redis AOF is off (only RDB snapshots)")
					.contains("since the last snapshot");
			});
			String after = output.getAll().substring(before);
			assertThat(after)
				.containsOnlyOnce("Redis AOF is off (only RDB snapshots): a Redis crash, kill or failover"
						+ " loses every delay queue message sent, retried or rescheduled since the last snapshot")
				.contains("WARN")
				.doesNotContain("persistence is off");
		}
	}

	private static ApplicationContextRunner runner(RedisServerProcess redis) {
		return QueueContexts.runner(QueueContexts.uniquePrefix(), redis.springProperties())
			.withUserConfiguration(PatientInspector.class);
	}

	@Configuration(proxyBeanMethods = false)
	static class PatientInspector {

		@Bean
		ServerInspector patientServerInspector(RedisConnectionFactory connectionFactory) {
			return new RedisServerInspector(connectionFactory, Duration.ofSeconds(30));
		}

	}

}

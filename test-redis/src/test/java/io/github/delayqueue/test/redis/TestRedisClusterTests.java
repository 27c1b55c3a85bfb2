package io.github.delayqueue.test.redis;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.RedisClusterConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * {@link TestRedisCluster} forms a working cluster from {@code redis-server} processes,
 * and a replica takes over the slots of a primary that is killed.
 */
class TestRedisClusterTests {

	@Test
	void aClusterOfThreePrimariesServesEverySlotAndAReplicaTakesOverAKilledPrimary() {
		assumeTrue(TestRedis.canStartPrivateServer(), "no redis-server binary here");
		try (TestRedisCluster cluster = TestRedisCluster.start(3, 1, Duration.ofMillis(1000))) {
			assertThat(cluster.primaries()).hasSize(3);
			assertThat(cluster.replicas()).hasSize(3);
			RedisClusterConfiguration configuration = new RedisClusterConfiguration(
					cluster.nodes().stream().map((node) -> node.host() + ":" + node.port()).toList());
			LettuceConnectionFactory connections = new LettuceConnectionFactory(configuration);
			connections.afterPropertiesSet();
			try {
				StringRedisTemplate redis = new StringRedisTemplate(connections);
				for (int i = 0; i < 100; i++) {
					redis.opsForValue().set("key-" + i, "value-" + i);
				}
				assertThat(redis.opsForValue().get("key-42")).isEqualTo("value-42");

				RedisServerProcess killed = cluster.primaryOf(0);
				assertThat(killed).isSameAs(cluster.primaries().get(0));
				killed.stop();
				cluster.awaitHealthy(Duration.ofSeconds(30));
				assertThat(cluster.primaryOf(0)).isNotNull().isNotSameAs(killed);
			}
			finally {
				connections.destroy();
			}
		}
	}

}

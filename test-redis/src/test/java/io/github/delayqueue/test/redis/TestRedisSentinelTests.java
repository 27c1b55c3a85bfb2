package io.github.delayqueue.test.redis;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * {@link TestRedisSentinel} starts a primary, a replica and a Sentinel that promotes the
 * replica when the primary is killed.
 */
class TestRedisSentinelTests {

	@Test
	void theSentinelPromotesTheReplicaWhenThePrimaryIsKilled() {
		assumeTrue(TestRedis.canStartPrivateServer(), "no redis-server binary here");
		try (TestRedisSentinel sentinel = TestRedisSentinel.start(1, 1, Duration.ofMillis(500))) {
			assertThat(sentinel.currentPrimary()).isSameAs(sentinel.firstPrimary());
			assertThat(sentinel.springProperties()).contains("spring.data.redis.sentinel.master=delay-queue");
			sentinel.firstPrimary().stop();
			assertThat(sentinel.awaitFailoverFrom(sentinel.firstPrimary(), Duration.ofSeconds(30)))
				.isSameAs(sentinel.replicas().get(0));
		}
	}

}

package io.github.delayqueue.review;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import io.github.delayqueue.store.PartitionCountException;
import io.github.delayqueue.store.redis.RedisMessageStore;
import io.github.delayqueue.test.redis.FaultyRedisProxy;
import io.github.delayqueue.test.redis.TestRedis;
import io.github.delayqueue.testsupport.OnOneServerVersion;
import io.github.delayqueue.testsupport.PartitionApps;
import org.junit.jupiter.api.Test;

import org.springframework.dao.DataAccessException;

import static io.github.delayqueue.testsupport.PartitionApps.TOPIC;
import static io.github.delayqueue.testsupport.PartitionApps.idIn;
import static io.github.delayqueue.testsupport.PartitionApps.message;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * Review of issue 34, leftover attack (a): a send that a partition refuses because
 * another application changed the topic's count is settled by {@code SendCoalescer}
 * (reading the count again within the send timeout, less a margin) and then fails with a
 * {@link PartitionCountException}. Behind a proxy that puts Redis tens or hundreds of
 * milliseconds away, it must still fail within the send timeout and never hang, and store
 * nothing.
 */
@OnOneServerVersion
class PartitionRefusalLatencyReviewTests {

	private static final Duration TIMEOUT = Duration.ofSeconds(1);

	@Test
	void aStaleApplicationsSendRefusedWithRedisFiftyMillisecondsAwayFailsWithAPartitionCountExceptionWithinTheSendTimeout() {
		assertRefusedInTime(Duration.ofMillis(50), true);
	}

	@Test
	void aStaleApplicationsSendRefusedWithRedisAThirdOfTheSendTimeoutAwayFailsWithinTheSendTimeout() {
		assertRefusedInTime(Duration.ofMillis(330), false);
	}

	private static void assertRefusedInTime(Duration latency, boolean countExceptionExpected) {
		TestRedis redis = TestRedis.shared();
		try (PartitionApps apps = new PartitionApps();
				FaultyRedisProxy proxy = FaultyRedisProxy.start(redis.host(), redis.port())) {
			// Agreed on 3 first by an application without the proxy: the first calls of
			// the JVM do not spend the short timeout on loading the client.
			apps.store(3, Duration.ofSeconds(5)).agreePartitions(TOPIC);
			RedisMessageStore stale = apps.storeVia(proxy, 3, TIMEOUT);
			stale.agreePartitions(TOPIC);
			RedisMessageStore current = apps.store(1, Duration.ofSeconds(5));
			current.agreePartitions(TOPIC);
			proxy.latency(latency);
			String id = idIn(2, 3, "stale-");
			long started = System.nanoTime();

			Throwable failure = catchThrowable(() -> stale.send(TOPIC, List.of(message(id, Duration.ofHours(1)))));

			long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
			assertThat(failure).as("the stale application's send").isNotNull();
			if (countExceptionExpected) {
				assertThat(failure).satisfiesAnyOf(
						(thrown) -> assertThat(thrown).isInstanceOf(PartitionCountException.class),
						(thrown) -> assertThat(thrown).hasRootCauseInstanceOf(PartitionCountException.class),
						(thrown) -> assertThat(thrown).hasCauseInstanceOf(PartitionCountException.class));
			}
			else {
				assertThat(failure).isInstanceOfAny(PartitionCountException.class, DataAccessException.class);
			}
			// One round trip of margin beyond the timeout for the last reply on its way.
			assertThat(tookMillis)
				.as("ms the refused send took (send timeout %s, latency %s): %s", TIMEOUT, latency, failure)
				.isLessThanOrEqualTo(TIMEOUT.toMillis() + latency.toMillis() + 200);
			proxy.latency(Duration.ZERO);
			assertThat(current.inspect(TOPIC, id, 10)).as("%s, stored by the stale application", id).isNull();
		}
	}

}

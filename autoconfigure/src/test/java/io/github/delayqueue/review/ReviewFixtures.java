package io.github.delayqueue.review;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import io.github.delayqueue.test.redis.FaultyRedisProxy;
import io.github.delayqueue.test.redis.TestRedis;

/**
 * What the reviews' attacks share: a proxy a few milliseconds in front of the test Redis,
 * and numbered ids.
 */
final class ReviewFixtures {

	private ReviewFixtures() {
	}

	/**
	 * A proxy 3 ms in front of the test Redis, whose replies a test holds or drops.
	 * @return the proxy, to close
	 */
	static FaultyRedisProxy startProxy() {
		TestRedis redis = TestRedis.shared();
		FaultyRedisProxy proxy = FaultyRedisProxy.start(redis.host(), redis.port());
		proxy.latency(Duration.ofMillis(3));
		return proxy;
	}

	/**
	 * Numbered ids.
	 * @param prefix what each id starts with
	 * @param count how many
	 * @return {@code prefix0} to {@code prefix<count - 1>}
	 */
	static List<String> ids(String prefix, int count) {
		List<String> ids = new ArrayList<>();
		for (int i = 0; i < count; i++) {
			ids.add(prefix + i);
		}
		return ids;
	}

}

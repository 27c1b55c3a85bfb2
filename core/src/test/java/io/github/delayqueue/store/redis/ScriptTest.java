package io.github.delayqueue.store.redis;

import io.github.delayqueue.producer.DelayQueueTemplate;
import io.github.delayqueue.testsupport.TestStore;

import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * A test of the scripts through the store, on a {@link TestStore} of its own: the test
 * Redis with a key prefix of its own and no listener, so that messages stay where the
 * test puts them.
 */
@FunctionalInterface
interface ScriptTest {

	void run(DelayQueueTemplate template, RedisMessageStore store, StringRedisTemplate redis);

	/**
	 * Runs a test on a new store.
	 * @param test the test
	 */
	static void run(ScriptTest test) {
		try (TestStore fixture = TestStore.create()) {
			test.run(fixture.template(), fixture.store(), fixture.redis());
		}
	}

}

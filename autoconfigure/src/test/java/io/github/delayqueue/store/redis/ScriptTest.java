package io.github.delayqueue.store.redis;

import io.github.delayqueue.core.DelayQueueTemplate;
import io.github.delayqueue.testsupport.QueueContexts;

import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * A test of the scripts through the store, in a context of its own on the test Redis with
 * a key prefix of its own and no listener, so that messages stay where the test puts
 * them.
 */
@FunctionalInterface
interface ScriptTest {

	void run(DelayQueueTemplate template, RedisMessageStore store, StringRedisTemplate redis);

	/**
	 * Runs a test in a new context.
	 * @param test the test
	 */
	static void run(ScriptTest test) {
		QueueContexts.runner(QueueContexts.uniquePrefix())
			.run((context) -> test.run(context.getBean(DelayQueueTemplate.class),
					context.getBean(RedisMessageStore.class), context.getBean(StringRedisTemplate.class)));
	}

}

/**
 * Test support for the queue's own suite:
 * {@link io.github.delayqueue.testsupport.QueueContexts} gives application contexts on
 * the test Redis ({@link io.github.delayqueue.test.redis.TestRedis}), also through a
 * {@link io.github.delayqueue.test.redis.FaultyRedisProxy}.
 */
@NullMarked
package io.github.delayqueue.testsupport;

import org.jspecify.annotations.NullMarked;

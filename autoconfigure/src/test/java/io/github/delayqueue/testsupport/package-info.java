/**
 * Test support for the queue's own suite:
 * {@link io.github.delayqueue.testsupport.QueueContexts} gives application contexts on
 * the test Redis ({@link io.github.delayqueue.test.redis.TestRedis}), and
 * {@link io.github.delayqueue.testsupport.FaultyRedisProxy} sits in front of a Redis and
 * loses or holds the reply to a command that ran.
 */
@NullMarked
package io.github.delayqueue.testsupport;

import org.jspecify.annotations.NullMarked;

/**
 * A Redis for tests, with nothing to install.
 * {@link io.github.delayqueue.test.redis.TestRedis} resolves one per JVM (a URL from the
 * environment, Testcontainers when Docker answers, or a {@code redis-server} process on a
 * free port) and starts private {@link io.github.delayqueue.test.redis.RedisServerProcess
 * servers} for tests that stop and restart Redis;
 * {@link io.github.delayqueue.test.redis.FaultyRedisProxy} sits in front of a Redis and
 * loses or holds the reply to a command that ran, and
 * {@link io.github.delayqueue.test.redis.TcpForwarder} takes a Redis away and brings it
 * back on the same address. Depends on nothing of the queue.
 */
@NullMarked
package io.github.delayqueue.test.redis;

import org.jspecify.annotations.NullMarked;

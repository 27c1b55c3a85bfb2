/**
 * A Redis for tests, with nothing to install.
 * {@link io.github.delayqueue.test.redis.TestRedis} resolves one per JVM (a URL from the
 * environment, Testcontainers when Docker answers, or a {@code redis-server} process on a
 * free port) and starts private {@link io.github.delayqueue.test.redis.RedisServerProcess
 * servers} for tests that stop and restart Redis. Depends on nothing of the queue.
 */
@NullMarked
package io.github.delayqueue.test.redis;

import org.jspecify.annotations.NullMarked;

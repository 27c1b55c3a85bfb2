/**
 * Test support: the Redis server that tests run against.
 * {@link io.github.delayqueue.testsupport.TestRedis} resolves one per JVM (a URL from the
 * environment, Testcontainers, or a {@code redis-server} process) and starts private
 * {@link io.github.delayqueue.testsupport.RedisServerProcess servers} for tests that stop
 * and restart Redis; {@link io.github.delayqueue.testsupport.FaultyRedisProxy} sits in
 * front of a Redis and loses or holds the reply to a command that ran.
 */
@NullMarked
package io.github.delayqueue.testsupport;

import org.jspecify.annotations.NullMarked;

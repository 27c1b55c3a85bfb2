/**
 * Test support for the engine's tests: {@link io.github.delayqueue.testsupport.TestStore}
 * gives a store, a template and plain Redis access on the test Redis
 * ({@link io.github.delayqueue.test.redis.TestRedis}), under a key prefix of their own
 * and without a Spring context.
 */
@NullMarked
package io.github.delayqueue.testsupport;

import org.jspecify.annotations.NullMarked;

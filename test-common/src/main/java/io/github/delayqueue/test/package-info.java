/**
 * Test support for applications that use the delay queue:
 * {@link io.github.delayqueue.test.EmbeddedDelayQueue @EmbeddedDelayQueue} gives a test
 * context a private Redis, {@link io.github.delayqueue.test.DelayQueueTestClock} moves
 * the queue's time forward so that a 30-minute delay is tested in milliseconds, and
 * {@link io.github.delayqueue.test.DelayQueueAssertions} reads what a topic holds.
 */
@NullMarked
package io.github.delayqueue.test;

import org.jspecify.annotations.NullMarked;

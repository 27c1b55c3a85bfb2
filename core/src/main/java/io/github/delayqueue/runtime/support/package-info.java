/**
 * Helpers of the runtime: outage logging, the repair of keys of the wrong type, replies
 * continued on the scheduler, and durations as saturated nanoseconds.
 */
@NullMarked
package io.github.delayqueue.runtime.support;

import org.jspecify.annotations.NullMarked;

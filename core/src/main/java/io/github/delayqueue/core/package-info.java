/**
 * The public producer API: {@link io.github.delayqueue.core.DelayQueueTemplate} sends,
 * cancels and reschedules delayed messages.
 */
@NullMarked
package io.github.delayqueue.core;

import org.jspecify.annotations.NullMarked;

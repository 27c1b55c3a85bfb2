/**
 * The public producer API: {@link io.github.delayqueue.producer.DelayQueueTemplate}
 * sends, cancels and reschedules delayed messages.
 */
@NullMarked
package io.github.delayqueue.producer;

import org.jspecify.annotations.NullMarked;

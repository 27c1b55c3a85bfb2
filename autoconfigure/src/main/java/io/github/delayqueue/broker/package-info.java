/**
 * Brokers that move due messages from a topic's schedule to its ready list, and the wake-up signals that let them sleep until the next due time.
 */
@NullMarked
package io.github.delayqueue.broker;

import org.jspecify.annotations.NullMarked;

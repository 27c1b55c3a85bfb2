/**
 * Brokers: each moves one topic's due messages from its schedule to its ready list and
 * takes back messages whose lease expired, sleeping until the next due time.
 */
@NullMarked
package io.github.delayqueue.runtime.broker;

import org.jspecify.annotations.NullMarked;

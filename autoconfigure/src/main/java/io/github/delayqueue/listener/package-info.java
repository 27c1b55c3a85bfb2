/**
 * Consumption: the {@link io.github.delayqueue.listener.DelayListener} annotation, the {@link io.github.delayqueue.listener.Delivery} a handler receives, and the containers that claim, lease, acknowledge, retry and dead-letter messages.
 */
@NullMarked
package io.github.delayqueue.listener;

import org.jspecify.annotations.NullMarked;

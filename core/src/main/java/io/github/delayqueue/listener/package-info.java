/**
 * What users write and how it is registered: the
 * {@link io.github.delayqueue.listener.DelayListener} annotation, the
 * {@link io.github.delayqueue.listener.Delivery} a handler receives, listener settings,
 * and the registry of endpoints. The runtime that consumes them is in
 * {@code io.github.delayqueue.runtime}.
 */
@NullMarked
package io.github.delayqueue.listener;

import org.jspecify.annotations.NullMarked;

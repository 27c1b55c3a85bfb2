/**
 * The Redis side of the queue: key layout, the stored message format and the Lua scripts,
 * one per state transition.
 */
@NullMarked
package io.github.delayqueue.store;

import org.jspecify.annotations.NullMarked;

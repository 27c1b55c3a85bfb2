/**
 * The Redis adapter of the store: key layout, the Lua scripts (one per state transition),
 * the script runner, pub/sub wake-up signals, partition counts and confirmed replication.
 * Only the auto-configuration and the test kit use it; everything else works through
 * {@link io.github.delayqueue.store.MessageStore}.
 */
@NullMarked
package io.github.delayqueue.store.redis;

import org.jspecify.annotations.NullMarked;

/**
 * What runs: {@link io.github.delayqueue.runtime.DelayQueueRuntime} starts, for each
 * topic with a listener here, a {@link io.github.delayqueue.runtime.TopicRuntime} (its
 * broker and its consumer) on one shared scheduler, and routes the wake-up signals to
 * them.
 */
@NullMarked
package io.github.delayqueue.runtime;

import org.jspecify.annotations.NullMarked;

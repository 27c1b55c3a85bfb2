/**
 * The port to where messages are kept ({@link io.github.delayqueue.store.MessageStore},
 * {@link io.github.delayqueue.store.TopicStore}), the stored message format, and the
 * values its calls take and return. The Redis adapter is in
 * {@code io.github.delayqueue.store.redis}.
 */
@NullMarked
package io.github.delayqueue.store;

import org.jspecify.annotations.NullMarked;
